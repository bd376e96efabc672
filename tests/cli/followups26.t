# Items the last reviews left (followups26): one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. The node-spanning warnings said "at least 1 ranks on each": a group
# that keeps one rank on a node says "1 rank".  12 GPUs in 3-GPU nodes
# under tp 4: ranks 0-3 sit on node 0 (0-2) and node 1 (3), so a group
# keeps 1 rank on its poorer node.
{
    ($c, $o, $e) = run_gp(qw(train llama3-70b --gpu h100-sxm --gpus 12 --gpus-per-node 3 --tp 4));
    like($o, qr/^warnings: tp_leaves_node \(tp 4 spans 2 nodes, at least 1 rank on each:/m,
         'tp 4 on 3-GPU nodes: "1 rank", singular') or diag $o, $e;
}

done_testing();
