# What a seventh walk (a new user's first hour: the README, each command,
# the example scripts, a user catalog, plausible mistakes) found: an
# answer that was wrong, silent or malformed.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. The example scripts that take no positional argument ran with one and
# dropped it in silence: grid_sweep's --gpus 64 128 (a list written with a
# space, not a comma) priced 64 alone, and video_sft's --train-vision maybe
# (a flag given a value) trained the tower with exit 0.  guide.lua and
# moe_serving.lua already refused a stray argument; now every script does,
# exit 2, naming it.
for my $s (qw(a100_vs_h200 budget_policy custom_catalog grid_sweep grpo h800_vs_h100 video_sft)) {
    ($c, $o, $e) = run_gp('run', "scripts/$s.lua", 'stray');
    is($c, 2, "$s.lua: a stray argument is a usage error") or diag $e;
    like($e, qr/^gpuplan: \Q$s\E: unexpected argument 'stray' \(see --help\)$/m,
         "$s.lua: the argument is named");
    is($o, '', "$s.lua: nothing priced before the refusal");
}
($c, $o, $e) = run_gp('run', 'scripts/grid_sweep.lua', '--gpus', '64', '128');
is($c, 2, 'grid_sweep --gpus 64 128: refused, not priced at 64 alone');
like($e, qr/unexpected argument '128'/, 'the dropped count is named');
($c, $o, $e) = run_gp('run', 'scripts/video_sft.lua', '--train-vision', 'maybe');
is($c, 2, 'video_sft --train-vision maybe: refused (the flag takes no value)');
like($e, qr/unexpected argument 'maybe'/, 'the value is named');

done_testing();
