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
# (and with --tokens alone: a run has a cost, ranked by it)
# (any space a line break: the help wraps where the option's text says)
like($o, qr/\(default\s+fastest;\s+on\s+the\s+command\s+line\s+cheapest\s+with\s+--tokens\s+or\s+--deadline\s+and\s+no\s+--budget\s+\(the\s+run's\s+cost\),\s+fastest\s+without\s+--tokens\s+or\s+with\s+--budget\)/,
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

# infer --batch: left out, the batch is as many as fit, but no more than
# the engine's max_batch (engine/infer.c: TensorRT-LLM's max_batch_size
# 2048; runtime vllm: vLLM's max_num_seqs, 1024 on an H200).  The help
# said "as many as fit".  Llama 3.2 1B, 128 in / 128 out: 32 KiB of KV a
# token (16 layers x 8 KV heads x 64 x 2 x 2 B) x (128 + 128 / 2) tokens =
# 6 MiB a sequence, so the H200's ~131 GB budget holds some 20,000: the
# cap, not the memory, sets the batch.
($c, $o, $e) = run_gp('infer', '--help');
like($o, qr/\(default as many as fit,\s+at most the engine's max_batch: TensorRT-LLM's 2048;\s+--runtime vllm: vLLM's max_num_seqs for the card\)/,
     'infer --help: the batch default names the engine cap');
my @inf = ('infer', 'llama3.2-1b', '--gpu', 'h200-sxm', '--input', '128', '--output', '128');
($c, $o, $e) = run_gp(@inf);
like($o, qr/batch per replica\s+2048 /, 'infer: batch 2048, TensorRT-LLM\'s cap');
($c, $o, $e) = run_gp(@inf, '--runtime', 'vllm');
like($o, qr/batch per replica\s+1024 /, 'infer --runtime vllm: vLLM\'s max_num_seqs 1024');

done_testing();
