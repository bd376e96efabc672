# Small items last round's reviewers found (followups13): one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. DeepSeek-V3 on 16 H20s: the fp8 deployment's table showed "KV per
# sequence per GPU 2.591 GB" and the bf16 one's refusal "one sequence's
# KV 2.447" -- one quantity, it seemed, moving with the weights.  They are
# two lengths: the table's is a sequence's whole KV (input + output, 2048
# + 256 = 2304 tokens), the refusal's sum the KV admitted at the paged
# policy's mean (input + output / 2 = 2176 tokens): 2.591 x 2176 / 2304 =
# 2.447.  The refusal now says which length it counts.
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h20', '--gpus', '16', '--ep', '16',
                      '--weights', 'fp8');
is($c, 0, 'deepseek-v3 fp8 on 16 h20: exit 0') or diag $e;
my ($full) = $o =~ /^KV per sequence per GPU\s+([\d.]+) GB$/m;
ok(defined $full, "the table's KV per sequence: $full") or diag $o;
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h20', '--gpus', '16', '--ep', '16');
my ($mean) = $o =~ /one sequence's KV ([\d.]+) at in \+ out\/2,/;
ok(defined $mean, 'bf16 weights: the refusal names the KV length it counts') or diag $o;
# the KV is the KV dtype's and the layout's: the same whole-length figure
# scaled by 2176 / 2304, to the 3 printed decimals (0.0005 GB each)
ok(defined $mean && defined $full && abs($mean - $full * 2176 / 2304) < 0.001,
   "bf16 weights' mean $mean = fp8 weights' whole $full x 2176/2304");

done_testing();
