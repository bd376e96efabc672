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

# 2. video_sft.lua's run is --samples x --epochs x the sequence in tokens,
# which gp.train bounds to 1..1e15: --epochs 0 or -1 and --samples 0 were
# refused from inside the layout search as "vlm.plan: train: tokens must be
# a positive number up to 1e+15 (got -3276800000)" -- -1 x 100000 videos
# x 32768 tokens, a name and a value the user never gave.  Now the option
# is named with its value (exit 1, as rl's --epochs 0 is), and a product
# past 1e15 names both factors (1e11 videos x 65536 tokens = 6.6e15).
for my $k (['--epochs', '0'], ['--epochs', '-1'], ['--samples', '0']) {
    ($c, $o, $e) = run_gp('run', 'scripts/video_sft.lua', @$k);
    is($c, 1, "video_sft $k->[0] $k->[1]: refused");
    like($e, qr/^gpuplan: video_sft: \Q$k->[0]\E must be a whole number >= 1 \(got \Q$k->[1]\E\)$/m,
         "video_sft $k->[0] $k->[1]: the option and its value named") or diag $e;
    unlike($e, qr/tokens must be/, "video_sft $k->[0] $k->[1]: not gp.train's tokens");
}
($c, $o, $e) = run_gp('run', 'scripts/video_sft.lua', '--samples', '100000000000');
is($c, 1, 'video_sft --samples 1e11: past 1e15 tokens, refused');
like($e, qr/--samples 100000000000 x --epochs 1 x 65536 tokens a sequence is past 1e15 tokens/,
     'both factors named');

done_testing();
