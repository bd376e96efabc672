# --gpus-per-node is bounded by the node the system describes: train, plan
# and rl priced 100 (or 64) H100s as one NVLink node of a DGX H100, whose
# node holds 8 (gpuplan comm already refused it).  The DGX-2 entry (16
# V100 32GB over 12 NVSwitches) is the node of the two DeepSpeed-Chat V100
# validation cases, 16 a node; 32 a node exceeds it.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);
for my $cmd (qw(train plan rl)) {
    ($c, $o, $e) = run_gp($cmd, 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '64', '--gpus-per-node', '64');
    isnt($c, 0, "$cmd --gpus-per-node 64 on h100-sxm: refused");
    like($e, qr/^gpuplan: $cmd: --gpus-per-node 64 exceeds the 8 GPUs of a node of system 'dgx-h100'/m,
         "$cmd: names the flag, the node's 8 and the system") or diag $e;
}
# An explicit system bounds it the same way.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--system', 'dgx-h100', '--gpus', '16',
                      '--gpus-per-node', '16');
like($e, qr/--gpus-per-node 16 exceeds the 8 GPUs/, 'train --system dgx-h100 --gpus-per-node 16: refused');
# At or under the node's GPUs it still runs: 4 a node spreads 16 over 4 nodes.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--gpus-per-node', '4');
is($c, 0, 'train --gpus-per-node 4 on dgx-h100 runs') or diag $e;
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--gpus-per-node', '8');
is($c, 0, 'train --gpus-per-node 8 (the whole node) runs') or diag $e;

# V100: DGX-2 is the card's system, 16 a node.
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'v100-sxm2-32gb', '--gpus', '16', '--gpus-per-node', '16');
is($c, 0, 'train on 16 V100s, 16 a node (DGX-2) runs') or diag $e;
like($o, qr/^defaults: .*\bsystem=dgx-2\b/m, 'its node is the DGX-2');
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'v100-sxm2-32gb', '--gpus', '32', '--gpus-per-node', '32');
like($e, qr/--gpus-per-node 32 exceeds the 16 GPUs of a node of system 'dgx-2'/, '32 V100s a node: past the DGX-2');

done_testing();
