# What a command's --help says an option defaults to is what the command
# does when the option is left out.  Each case here was a help line that
# said otherwise.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

# roofline --weights: the model's ops take gpuplan infer's default, fp16
# on a card without bf16 (a V100); the help said "(default bf16)".
my ($c, $o, $e) = run_gp('roofline', '--help');
like($o, qr/--weights W\s+weight format for the model's ops \(default bf16; fp16\s+on a card without bf16/,
     'roofline --help: --weights defaults to fp16 on a card without bf16');
($c, $o, $e) = run_gp('roofline', '--gpu', 'v100-sxm2-32gb', '--model', 'llama2-7b');
is($c, 0, 'roofline on a V100 with a model runs');
like($o, qr/decode at batch 1, fp16 weights/, '... with fp16 weights, as the help says');
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', '--model', 'llama2-7b');
like($o, qr/decode at batch 1, bf16 weights/, '... and bf16 on an H100');

# plan --policy: the command line ranks by cost under a deadline only
# where no budget is given (lua/gpuplan/cmd/plan.lua); with both it ranks
# by time.  The help said "cheapest with a deadline".
($c, $o, $e) = run_gp('plan', '--help');
like($o, qr/\(default fastest; on the\s+command line cheapest with --deadline and no --budget\)/,
     'plan --help: the policy default names the budget');
my @job = ('plan', 'llama3.2-1b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9',
           '--top', '2');
($c, $o, $e) = run_gp(@job, '--deadline', '30d');
like($o, qr/best layouts by cheapest, deadline 30d/, 'a deadline alone: cheapest');
($c, $o, $e) = run_gp(@job, '--deadline', '30d', '--budget', '$1M');
like($o, qr/best layouts by fastest, deadline 30d, budget \$1M/, 'a deadline and a budget: fastest');

# --enc-seq: the encoder's tokens of an encoder-decoder model.  train,
# plan and rl listed it, but each refuses every encoder-decoder model ("the
# training step of an encoder-decoder model is not modelled") and the
# option on any other: it set nothing they run.  fit (its memory) keeps it.
for my $cmd (qw(train plan rl)) {
    ($c, $o, $e) = run_gp($cmd, '--help');
    unlike($o, qr/--enc-seq/, "$cmd --help: no --enc-seq");
}
($c, $o, $e) = run_gp('fit', '--help');
like($o, qr/--enc-seq N\s+encoder-decoder: encoder tokens per sequence/, 'fit --help: --enc-seq');
($c, $o, $e) = run_gp('train', 't5-3b', '--gpu', 'h100-sxm', '--gpus', '8', '--enc-seq', '64');
is($c, 2, 'train --enc-seq: a usage error');
like($e, qr/train: unknown option '--enc-seq' \(an option of gpuplan fit\)/, '... naming fit');
($c, $o, $e) = run_gp('fit', 't5-3b', '--gpu', 'h100-sxm', '--enc-seq', '64');
is($c, 0, 'fit t5-3b --enc-seq 64 runs');

done_testing();
