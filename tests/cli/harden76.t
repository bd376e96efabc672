# Review leftovers (session 76 hardening): options that changed nothing in
# silence, or said less than they do.  Each test fails on the tree before
# its fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# --- 1. --cuda-graphs under a split ------------------------------------
# The engine keeps no graph at tp or pp > 1 (engine/infer.c infer_step),
# so --cuda-graphs there changed nothing: refused, naming the option and
# the split (a usage error, exit 2).
for my $split (['--pp', 2], ['--tp', 2]) {
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'rtx-4090', '--runtime', 'llama.cpp',
                          '--gpus', 2, @$split, '--cuda-graphs');
    is($c, 2, "infer --cuda-graphs $split->[0] 2: refused (exit 2)");
    like($e, qr/^gpuplan: infer: --cuda-graphs with \Q$split->[0]\E 2: /m,
         "... naming --cuda-graphs and $split->[0]");
}
# --target's search tries TP sizes of its own: --cuda-graphs there is the
# one-GPU replicas' graph, not a split the user gave.  The search's
# largest size (TP8) was refused as "--cuda-graphs with --tp 8", a --tp
# never typed; now each split size is priced as the engine prices a split
# (no graph), so the answer is the default's, where cuda_graphs is true
# too: Llama 3 70B int4 on RTX 4090s needs TP2 (TP1 does not fit 4-bit
# 70B weights, about 35 GB, in 24 GB).
{
    my @t = ('infer', 'llama3-70b', '--gpu', 'rtx-4090', '--runtime', 'llama.cpp',
             '--weights', 'int4', '--target', 500);
    my ($c0, $o0, $e0) = run_gp(@t);
    ($c, $o, $e) = run_gp(@t, '--cuda-graphs');
    is($c, 0, 'infer --target --cuda-graphs: the search runs') or diag $e;
    unlike($e, qr/--tp 8/, '... no --tp the user did not give');
    like($o, qr/\bTP2\b/, '... a TP2 replica, as the default search finds');
    is($o, $o0, '... the default\'s answer (cuda_graphs is true there too)');
}
# --no-cuda-graphs under the split prices what the split prices: it stands.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'rtx-4090', '--runtime', 'llama.cpp',
                      '--gpus', 2, '--pp', 2, '--no-cuda-graphs');
is($c, 0, 'infer --no-cuda-graphs --pp 2: accepted') or diag $e;

# --- 2. --a2a none under vllm and trtllm --------------------------------
# It applies there: vLLM's all2all kernels need DP (FusedMoEParallelConfig
# use_all2all_kernels), TensorRT-LLM's need attention DP
# (select_alltoall_method_type), so EP under TP attention exchanges no
# tokens in both, as SGLang's none.  The help says so; the step prices no
# all-to-all.
($c, $o, $e) = run_gp('infer', '--help');
like($o =~ s/\s+/ /gr, qr/--a2a K .*what vLLM and TensorRT-LLM run with EP under TP attention/,
     'infer --help: --a2a none names vLLM and TensorRT-LLM');
for my $rt (qw(vllm trtllm)) {
    ($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--gpus', 8, '--tp', 8,
                          '--ep', 8, '--runtime', $rt, '--a2a', 'none', '--batch', 16);
    is($c, 0, "infer --runtime $rt --a2a none: accepted") or diag $e;
    like($o, qr/^decode step .*all-to-all 0\.00 /m, "... no all-to-all in the step");
}

# --- 3. train's and rl's CSV: numbers where a number is expected --------
# share was "93.0%" and the step's range "3.7405-5.1375" (range_seconds):
# now share is a fraction of the step (the JSON's part share) and the range
# two columns, seconds_lo and seconds_hi (the JSON's step_s_lo, step_s_hi).
sub csv_rows {
    my ($text) = @_;
    my @lines = split /\n/, $text;
    my @head = split /,/, shift @lines;
    return map { my @f = split /,/, $_, -1; my %r; @r{@head} = @f; \%r } @lines;
}
my $num = qr/^-?\d+(?:\.\d+)?(?:e[-+]?\d+)?$/;
for my $cmd (['train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', 8, '--zero', 3],
             ['rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', 8, '--zero', 3]) {
    ($c, $o, $e) = run_gp(@$cmd, '--format', 'csv');
    is($c, 0, "$cmd->[0] --format csv") or diag $e;
    like($o, qr/^[^\n]*,seconds_lo,seconds_hi,/, "$cmd->[0]: seconds_lo, seconds_hi in the header");
    my @rows = csv_rows($o);
    my ($step) = grep { ($_->{part} // $_->{phase}) eq 'step' } @rows;
    ok(!grep({ $_->{share} !~ $num } @rows), "$cmd->[0]: every share a number");
    # the step's own share: the whole step, 1 (printed %.4f)
    is($step->{share}, '1.0000', "$cmd->[0]: the step's share is 1");
    # the parts' shares sum to the step's within the %.4f rounding of each
    # (at most 6 rows x 0.00005)
    my $sum = 0;
    $sum += $_->{share} for grep { $_ != $step } @rows;
    ok(abs($sum - 1) < 6 * 5e-5 + 1e-12, "$cmd->[0]: the parts' shares sum to 1 ($sum)");
    ok($step->{seconds_lo} =~ $num && $step->{seconds_hi} =~ $num
       && $step->{seconds_lo} <= $step->{seconds} && $step->{seconds} <= $step->{seconds_hi},
       "$cmd->[0]: seconds_lo <= seconds <= seconds_hi, numbers");
}

# --- 5. --samples' suffixes: the help says what the reader takes --------
# --samples is read as --tokens is (options.total: K, M, B or G, T); its
# help and its error named K, M and B only, while 2G and 1T were taken.
# Said, not refused: 2G samples of 700 tokens is 2e9 x 700 = 1.4e12 tokens.
($c, $o, $e) = run_gp('train', '--help');
like($o =~ s/\s+/ /gr, qr/--samples N training samples in the dataset: 50000, or with a decimal suffix K, M, B \(or G\), T /,
     'train --help: --samples names G and T');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', 8, '--zero', 3,
                      '--samples', '2G', '--sample-tokens', 700);
is($c, 0, '--samples 2G: taken') or diag $e;
like($o, qr/tokens=1\.4e\+12 \(--samples 2000000000 x 700 tokens a sample/, '... as 2e9 samples');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', 8, '--samples', '5x');
is($c, 2, '--samples 5x: a usage error');
like($e, qr/--samples must be a count of samples: .*suffix K, M, B \(or G\) or T/, '... naming G and T');

# --- 6. malformed values of the recent options --------------------------
# --sample-tokens is a mean over samples of at least one token each: 0.5
# was taken (50k samples x 0.5 = a run of 25k tokens); refused naming its
# range, as 0 and -1 are.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', 8, '--samples', '50k',
                      '--sample-tokens', '0.5');
is($c, 1, '--sample-tokens 0.5: out of range (exit 1)');
like($e, qr/^gpuplan: train: --sample-tokens must be a number in \[1, 16777216\] \(got 0\.5\)$/m,
     '... naming its range');
# --shared-expert-stream on a model without a shared expert changed
# nothing in silence (M.shared_stream_max places a shared expert only):
# refused, as --fused-grouped-topk on a model without its router is.
for my $m (['llama3-8b', 'has no MoE layers', 1], ['mixtral-8x7b', 'has routed experts only', 2]) {
    ($c, $o, $e) = run_gp('infer', $m->[0], '--gpu', 'h100-sxm', '--gpus', $m->[2], '--tp', $m->[2],
                          '--runtime', 'vllm', '--no-shared-expert-stream');
    is($c, 2, "--no-shared-expert-stream on $m->[0]: refused (exit 2)");
    like($e, qr/^gpuplan: infer: --shared-expert-stream given for a model without a shared expert .*: \Q$m->[0] $m->[1]\E$/m,
         "... $m->[1]");
}

done_testing();
