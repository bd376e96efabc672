# What a sixth walk (a buyer's fine-tune, RL run and serving deployment,
# options combined across commands) found: an answer that was wrong,
# silent or malformed.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();
use JSON::PP ();

my ($c, $o, $e);
my @vl = ('train', 'qwen2.5-vl-7b', '--gpu', 'a100-sxm-80gb', '--gpus', '1', '--method', 'lora');

# 1. --image-size without --images priced no image at all: the media were
# built from --images (absent: 0), so the declared default of one image
# a sequence was dropped and the step lost its vision tower line (47.09 s
# against 48.44 s with --images 1 at the same 448 px, the catalog's size).
# Now the size applies to the default image: the same step as --images 1.
{
    my ($c1, $with) = run_gp(@vl, '--image-size', '448', '--images', '1', '--format', 'json');
    ($c, $o, $e) = run_gp(@vl, '--image-size', '448', '--format', 'json');
    is($c, 0, '--image-size alone runs') or diag $e;
    my ($a, $b) = (JSON::PP::decode_json($o), JSON::PP::decode_json($with));
    is($a->{step_s}, $b->{step_s}, '--image-size 448 alone: the step of --images 1 at 448 px');
    ($c, $o, $e) = run_gp(@vl, '--image-size', '448');
    like($o, qr/^vision tower: 1024 patches/m, '--image-size alone: the tower is priced') or diag $o;
    like($o, qr/^defaults: images=1,/m, '--image-size alone: the default image is stated');
    # 4096 px: 146 x 146 merged tokens (4088 / 28 = 146) = 21316 > seq 2048.
    ($c, $o, $e) = run_gp(@vl, '--image-size', '4096');
    is($c, 1, '--image-size 4096 alone: its image does not fit seq 2048');
    like($e, qr/1 image of 21316 tokens each \(4088 px\) make 21316 tokens, more than the sequence of 2048/,
         '--image-size 4096: the tokens named') or diag $e;
}

# 2. --frame-size without --video-frames: with no frames it was taken as
# the images' size (--frame-size 896 --images 2 priced 896 px images) or
# dropped.  Now refused, naming both options.
for my $extra ([], ['--images', '2']) {
    ($c, $o, $e) = run_gp(@vl, '--frame-size', '448', @$extra);
    is($c, 2, "--frame-size without --video-frames (@$extra): refused, a usage error");
    like($e, qr/--frame-size 448 sizes video frames, and none is given: give --video-frames/,
         '--frame-size alone: says to give --video-frames') or diag $e;
}
($c, $o, $e) = run_gp(@vl, '--frame-size', '448', '--video-frames', '4');
is($c, 0, '--frame-size with --video-frames still runs') or diag $e;

# 3. Video frames past the sequence were reported as images: --video-frames
# 100 said "50 images of 256 tokens do not fit".  Qwen2-VL encodes
# temporal_patch = 2 frames a unit: 100 frames = 50 units x 256 tokens
# (448 px: (448 / 28)^2 = 256) = 12800 > 2048.
($c, $o, $e) = run_gp(@vl, '--video-frames', '100');
is($c, 1, '--video-frames 100 at seq 2048: refused');
like($e, qr/100 video frames \(50 units of 2 frames\) of 256 tokens each \(448 px\) make 12800 tokens, more than the sequence of 2048/,
     '--video-frames 100: counted as frames, not images') or diag $e;

# 4. One GPU was "on 1 GPUs" in train's time line and rl's run line.
($c, $o, $e) = run_gp('train', 'llama3.2-1b', '--gpu', 'h100-sxm', '--gpus', '1', '--tokens', '1e9');
like($o, qr/^time to train 1e\+09 tokens: .* on 1 GPU; cost/m, 'train on one GPU: "1 GPU"') or diag $o;
($c, $o, $e) = run_gp('train', 'llama3.2-1b', '--gpu', 'h100-sxm', '--gpus', '2', '--tokens', '1e9');
like($o, qr/ on 2 GPUs; cost/, 'train on two: "2 GPUs"');
($c, $o, $e) = run_gp('rl', 'llama3.2-1b', '--gpu', 'h100-sxm', '--gpus', '1', '--steps', '10');
like($o, qr/^run: 10 steps in .* on 1 GPU; cost/m, 'rl on one GPU: "1 GPU"') or diag $o;

# 5. --price with another card's catalog offer priced this card at it:
# train --gpu h100-sxm --price a100-sxm-80gb/autodl/cn costed 8 H100s at
# the A100's 6.68 CNY/GPU-h.  Now refused in every command; the card's
# own offer still prices it.
for my $cmd (['train', 'llama3-8b', '--gpus', '8', '--tokens', '1e9'],
             ['infer', 'llama3-8b'], ['rl', 'llama3.2-1b', '--gpus', '2'],
             ['plan', 'llama3-8b', '--gpus', '8']) {
    ($c, $o, $e) = run_gp(@$cmd, '--gpu', 'h100-sxm', '--price', 'a100-sxm-80gb/autodl/cn');
    is($c, 1, "$cmd->[0] --price of another card's offer: refused");
    like($e, qr/^gpuplan: $cmd->[0]: --price 'a100-sxm-80gb\/autodl\/cn' is an offer for a100-sxm-80gb, not h100-sxm/m,
         "$cmd->[0]: names the offer's card") or diag $e;
}
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'a100-sxm-80gb', '--gpus', '8', '--tokens', '1e9',
                      '--price', 'a100-sxm-80gb/autodl/cn');
is($c, 0, 'the card\'s own offer still prices it') or diag $e;
like($o, qr/at 6\.68 CNY\/GPU-h/, 'at its rent');

# 6. rl --steps took fractions and any size: 0.5 printed "0 steps in
# 0.0046 hours" (the time of half a step), 1.5 "2 steps" priced as 1.5,
# and 1e300 printed hours 300 digits long.  A run is whole steps, a count
# (1..2^24) as every count option (lua/gpuplan/options.lua).
for my $s ('0.5', '1.5', '1e300', '0') {
    ($c, $o, $e) = run_gp('rl', 'llama3.2-1b', '--gpu', 'h100-sxm', '--gpus', '2', '--steps', $s);
    is($c, 1, "rl --steps $s: refused");
    like($e, qr/^gpuplan: rl: --steps must be a whole number 1\.\.16777216 \(got /m, "rl --steps $s: says why") or diag $e;
}
($c, $o, $e) = run_gp('rl', 'llama3.2-1b', '--gpu', 'h100-sxm', '--gpus', '2', '--steps', '1');
like($o, qr/^run: 1 step in /m, 'rl --steps 1 still runs') or diag $e;

# 7. An output file in a directory that takes no new file (/proc here; a
# read-only mount alike): the check before the work looked only for the
# directory, so infer --sweep-batch and comm printed their whole table
# and then failed.  Now they fail first and print nothing; a writable
# directory still gets its file, and no probe file is left behind.
SKIP: {
    skip 'no /proc directory', 6 unless -d '/proc';
    for my $cmd (['infer', 'llama3-8b', '--gpu', 'h100-sxm', '--sweep-batch'],
                 ['comm', '--gpu', 'h100-sxm', '--gpus', '8'],
                 ['roofline', '--gpu', 'h100-sxm']) {
        ($c, $o, $e) = run_gp(@$cmd, '--svg', '/proc/gpuplan-x.svg');
        is($o, '', "$cmd->[0] --svg in /proc: nothing printed before the refusal");
        like($e, qr/cannot write '\/proc\/gpuplan-x\.svg': cannot create a file in its directory/,
             "$cmd->[0] --svg in /proc: says why") or diag $e;
    }
}
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    ($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--gpus', '8', '--svg', "$dir/c.svg");
    is($c, 0, 'comm --svg in a writable directory runs') or diag $e;
    opendir(my $dh, $dir) or die;
    my @left = grep { !/^\.\.?$/ } readdir $dh;
    is_deeply(\@left, ['c.svg'], 'only the file is left: the probe is removed');
}

# 8. validate --kind with a wrong kind did not say what it got.
($c, $o, $e) = run_gp('validate', '--kind', 'training');
is($c, 2, 'validate --kind training: a usage error');
like($e, qr/^gpuplan: validate: --kind must be train, memory, infer, collective or rl \(got 'training'\)/m,
     'validate --kind: names the value given') or diag $e;

# 9. infer --target for a dense model counted GPUs in replicas it never
# named: Llama 3 70B fp8 on H100 said "158 GPUs, batch/replica 1" without
# saying each replica was one GPU (tp 1, the default) whose KV holds one
# sequence; --tp 2 needs 10.  The row now names the replica.
# (--tp 1 given: without it the search takes TP2, tests/cli/densetarget.t)
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h100-sxm', '--weights', 'fp8', '--target', '5000',
                      '--tp', '1');
is($c, 0, 'infer --target dense: runs') or diag $e;
like($o, qr/^target tok\/s\s+ITL limit ms\s+GPUs\s+replica\s+batch\/replica/m, 'a replica column');
like($o, qr/^\s+5000\s+50\.0\s+\d+\s+TP1\s+1\s/m, 'tp 1 said, with its batch of one') or diag $o;
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h100-sxm', '--weights', 'fp8', '--target', '5000',
                      '--tp', '2', '--pp', '2', '--format', 'csv');
# (followups7: the csv's keys are gp.infer_plan's: the replica is its layout)
like($o, qr/^target,itl_max,gpus,disagg,decode_gpus,prefill_gpus,layout,prefill_layout,batch,/m,
     'csv: the replica column, as layout') or diag $o;
like($o, qr/^5000,0\.05,(\d+),no,\1,0,TP2 PP2,,/m, 'csv: TP2 PP2') or diag $o;

# 10. fit --method infer said "max context at this concurrency: 447980
# tokens" for Llama 3 8B (8192-token context) on one H100: the KV's room,
# a context fit --method infer itself refuses.  Capped at the model's
# context, the KV's room said beside it.  Below the context it is as
# before: at batch 300 the KV holds 1489 tokens a sequence.
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer');
like($o, qr/max context at this concurrency: 8192 tokens, the model's context \(the KV would hold \d+\)/,
     'fit --method infer: the context capped at the model\'s') or diag $o;
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer', '--ctx', '100000');
is($c, 1, '... and a context past it is refused, as before');
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer', '--batch', '300');
like($o, qr/max context at this concurrency: \d+ tokens$/m, 'below the context: the KV\'s room alone') or diag $o;

# 11. --method qlora --weights bf16 priced method lora under qlora's name
# (the same 23.73 s step and 27.6 GiB on one H100 for Llama 3 8B): QLoRA
# is LoRA on a quantised base.  A base of 16 bits or more is refused in
# every command; fp8, int8 and nf4 bases still run.
for my $cmd (['fit'], ['train', '--gpus', '1'], ['plan', '--gpus', '8']) {
    ($c, $o, $e) = run_gp($cmd->[0], 'llama3-8b', '--gpu', 'h100-sxm', @$cmd[1 .. $#$cmd],
                          '--method', 'qlora', '--weights', 'bf16');
    is($c, 2, "$cmd->[0] --method qlora --weights bf16: refused, a usage error");
    like($e, qr/--weights bf16: method qlora quantises the frozen base .* a bf16 base is method lora/,
         "$cmd->[0]: says it is method lora") or diag $e;
}
for my $w ('fp8', 'int8', 'nf4') {
    ($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'qlora', '--weights', $w);
    is($c, 0, "fit --method qlora --weights $w still runs") or diag $e;
}

# 12. infer's table said "(1 sequences)" and "(x 1 replicas)".
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h100-sxm', '--weights', 'fp8');
like($o, qr/^KV budget per GPU\s+[\d.]+ GB \(1 sequence\)$/m, 'one sequence') or diag $o;
like($o, qr/^batch per replica\s+1 \(x 1 replica\)$/m, 'one replica');
($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '4', '--tp', '2', '--weights', 'fp8');
like($o, qr/^batch per replica\s+\d+ \(x 2 replicas\)$/m, 'two replicas');

# 13. infer --concurrency: one batch prices every replica, ceil(C /
# replicas) each.  3 over 2 H100 replicas of Llama 3 8B ran 2 + 2: 519
# tok/s, where 2 + 1 make 2 x 130 + 135 = 395.  Then refused with the
# multiple to give; now priced as split, a router balancing the requests
# in flight (gpuplan.infer split_replicas): one replica at 2 and one at
# 1, half the 2 + 2 run's 519 and half the 1 + 1 run's 270: 395 (the
# table rounds, +-1).  A concurrency past what the KV holds was capped at
# 205 a replica without a word; the assumed line now says how many wait.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '2', '--concurrency', '3');
is($c, 0, 'infer --concurrency 3 over 2 replicas: priced') or diag $e;
like($o, qr/^batch per replica\s+2 on 1, 1 on 1 \(x 2 replicas\)$/m, '... 2 on one replica, 1 on the other') or diag $o;
like($o, qr/^tokens\/s system\s+39[456] /m, '... 519 / 2 + 270 / 2 = 395 tok/s') or diag $o;
like($o, qr/concurrency=3 over 2 replicas: 1 run 2 streams, 1 run 1 \(a router balancing/, '... the router said') or diag $o;
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '2', '--concurrency', '4');
like($o, qr/^batch per replica\s+2 \(x 2 replicas\)$/m, '--concurrency 4 over 2: 2 a replica') or diag $e;
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--concurrency', '1000');
like($o, qr/concurrency=1000: 205 run at once \(205 a replica, what its KV holds\), the other 795 wait/,
     '--concurrency past the KV: says how many wait') or diag $o;
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--concurrency', '100');
unlike($o, qr/concurrency=100:/, '... and nothing when they all run');

# 15. rl --vpp, a documented rl option, always failed: the command set
# the Lua key schedule = "interleaved" (as fit does for gp.memory), which
# gp.rl does not take: "rl: unknown option 'schedule' (an option of
# gp.memory, gp.train and gp.sweep)", a key the user never gave.  gp.rl's
# training step sets the schedule from vpp itself (train.lua).
($c, $o, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--pp', '4', '--vpp', '2', '--zero', '1');
is($c, 0, 'rl --pp 4 --vpp 2 runs') or diag $e;
unlike($e, qr/schedule/, '... no word of a schedule key');
like($o, qr/^step\s+8\s+[\d.]+\s+100\.0%/m, '... and prices the step') or diag $o;
($c, $o, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--vpp', '2');
like($e, qr/^gpuplan: rl: --vpp 2 needs a pipeline/m, 'rl --vpp without pp: the pipeline refusal') or diag $e;

# 16. plan of an encoder-decoder model blamed its first layout: "plan:
# h100-sxm x 8 (TP1 DP8 ZeRO-1 mb1 none): the training step of an
# encoder-decoder model is not modelled", a refusal of the job in every
# layout, as train says it.
for my $gpus (['--gpu', 'h100-sxm'], ['--gpu', 'h100-sxm,a100-sxm-80gb', '--per-card']) {
    ($c, $o, $e) = run_gp('plan', 't5-3b', @$gpus, '--gpus', '8');
    is($c, 1, "plan t5-3b (@$gpus): refused");
    like($e, qr/^gpuplan: plan: the training step of an encoder-decoder model is not modelled/m,
         '... as the job\'s refusal, no layout named') or diag $e;
}

# 17. ZeRO-Offload past the node's host memory was priced as fitting:
# Llama 3.1 405B, ZeRO-3 params+optimizer offload on 16 H100s (two DGX
# H100s of 2 TB = 1862.65 GiB each) printed "7559.61 GiB for the 16 GPUs"
# and "fits: yes".  Each node holds its 8 GPUs' partitions: 472.48 x 8 =
# 3779.80 GiB.  The host line now says the offload does not fit; 70B on
# one node (1314.17 GiB) still reads as before.
my @off = ('--zero', '3', '--offload', 'params+optimizer', '--stack', 'deepspeed');
for my $cmd (['train', '--method', 'full'], ['fit']) {
    ($c, $o, $e) = run_gp($cmd->[0], 'llama3.1-405b', '--gpu', 'h100-sxm', '--gpus', '16', @off,
                          @$cmd[1 .. $#$cmd], '--recompute', 'full', '--seq', '512');
    is($c, 0, "$cmd->[0] 405B offload on 16: runs") or diag $e;
    like($o, qr/past the host: 3779\.80 GiB on a host of 8 GPUs, which holds 1862\.65 GiB \(dgx-h100's host_memory\), so the offload does not fit/,
         "$cmd->[0]: the node's host memory is short") or diag $o;
}
($c, $o, $e) = run_gp('fit', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '8', @off);
like($o, qr/^host memory \(offload\): .*1314\.17 GiB for the 8 GPUs$/m, '70B on one node: fits the host, no clause') or diag $o;

# 18. infer --target's JSON and CSV gave the cost as a formatted string,
# "cost":"0.176 USD" (and "6.962 CNY" for the MoE search), for a reader
# to split.  Now the number and its currency apart; text is as before.
for my $job (['llama3-8b', '--gpu', 'h100-sxm', '--target', '5000'],
             ['qwen3-235b-a22b', '--gpu', 'h20', '--weights', 'fp8', '--target', '20000', '--currency', 'CNY']) {
    ($c, $o, $e) = run_gp('infer', @$job, '--format', 'json');
    is($c, 0, "infer --target $job->[0] json runs") or diag $e;
    my $row = JSON::PP::decode_json($o)->[0];
    ok(defined $row->{cost_per_mtok} && $row->{cost_per_mtok} =~ /^[\d.eE+-]+$/ && $row->{cost_per_mtok} > 0,
       "$job->[0]: cost_per_mtok a number") or diag $o;
    like($row->{currency} // '', qr/^(USD|CNY)$/, "$job->[0]: its currency apart");
    ok(!exists $row->{cost}, "$job->[0]: no formatted cost string");
    ($c, $o, $e) = run_gp('infer', @$job);
    like($o, qr/\s\d+\.\d{3} (USD|CNY)$/m, "$job->[0] text: the cost as before") or diag $o;
}
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--target', '5000', '--format', 'csv');
# (then the 80% ranges of the figures, gp.infer_plan's F_lo and F_hi: tests/cli/walkbuy.t)
like($o, qr/^target,itl_max,gpus,disagg,decode_gpus,prefill_gpus,layout,prefill_layout,batch,tokens_per_s,itl_s,ttft_s,cost_per_mtok,currency,tokens_per_s_lo,/m, 'csv: cost_per_mtok and currency columns') or diag $o;

done_testing();
