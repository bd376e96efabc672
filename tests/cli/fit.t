# gpuplan fit: breakdown, verdict line, formats and errors.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm');
is($c, 0, 'fit exits 0 when it does not fit (a result, not an error)');
like($o, qr/^component\s+GiB\s+GB\s+note$/m, 'columns labelled GiB and GB');
# mixed-16 AdamW: 6,738,415,616 params * 8 B (Adam m + v) = 53.91 GB.
like($o, qr/^optimizer\s+50\.21\s+53\.91\s*$/m, 'optimizer 8 B/param = 53.91 GB');
like($o, qr/^fits: no \(short by \d+\.\d GiB; largest term optimizer 50\.2 GiB\)$/m,
     'verdict line');
like($o, qr/^defaults: .*recipe=mixed-16/m, 'defaults are listed');
# mixed-16: 2 + 2 + 4 + 8 = 16 B/param, all of it on the one GPU.
like($o, qr/^model states: 16\.0 B\/param before sharding \(weights 2 \+ grads 2 \+ master 4 \+ optimizer 8; recipe mixed-16\), 16\.00 B\/param on this GPU after sharding$/m,
     'states line: mixed-16 = 16 B/param');

($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--zero', '3', '--recompute', 'full');
is($c, 0, 'ZeRO-3 over 8 exits 0');
# 13,476,831,232 B weights / 8 = 1,684,603,904 B = 1.57 GiB, 1.68 GB.
like($o, qr/^weights\s+1\.57\s+1\.68\s*$/m, 'ZeRO-3 shards weights 8 ways');
like($o, qr/^fits: yes/m, 'ZeRO-3 + full recompute fits');

($c, $o, $e) = run_gp('fit', 'llama2-70b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--tp', '8', '--method', 'infer', '--ctx', '4096',
                      '--batch', '1', '--format', 'json');
is($c, 0, 'json exits 0');
like($o, qr/"method":"infer"/, 'json names the method');
# 1.25 GiB per 4096-token sequence over 8 TP shards = 167,772,160 B.
like($o, qr/"bytes":167772160,"name":"kv_cache"/, 'json KV bytes per GPU');

($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--method', 'infer',
                      '--format', 'csv');
is($c, 0, 'csv exits 0');
like($o, qr/^job,component,gib,gb,note,fits,verdict,details,defaults$/m, 'csv header: the verdict and the defaults are columns');

# The 16 / 18 / 20 B/param question answered by named recipes.
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1',
                      '--method', 'pretrain', '--stack', 'deepspeed');
is($c, 0, 'deepspeed stack exits 0');
# BF16_Optimizer: 2 + (2 + 4) + 4 + 8 = 20 B/param before sharding; ZeRO-1
# over 8 leaves 2 + 6 + 12/8 = 9.50 B/param on each GPU.
like($o, qr/^model states: 20\.0 B\/param before sharding \(weights 2 \+ grads 6 \+ master 4 \+ optimizer 8; recipe deepspeed-bf16\), 9\.50 B\/param on this GPU after sharding$/m,
     'states line: deepspeed-bf16 = 20 B/param, 9.5 after ZeRO-1/8');
# grads 6,738,415,616 * 6 B = 40.43 GB, 37.65 GiB, unsharded at ZeRO-1.
like($o, qr/^grads\s+37\.65\s+40\.43\s+bf16 \.grad \+ fp32 accumulation$/m,
     'deepspeed grads row with its note');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--method', 'pretrain');
# Megatron: 2 + 4 + 4 + 8 = 18 B/param, nothing sharded on one GPU.
like($o, qr/^model states: 18\.0 B\/param before sharding .*recipe megatron-18\), 18\.00 B\/param on this GPU/m,
     'states line: megatron-18');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--recipe', 'deepspeed-bf16',
                      '--format', 'json');
like($o, qr/"state_bytes":\{[^}]*"total":20[,}]/, 'json carries state_bytes.total = 20');
# DeepSpeed ZeRO-3 (tests/lua/ds_zero_grads.t): the backward holds a
# 16-bit gradient partition, so the states line counts grads 2, 2 + 2 + 4
# + 8 = 16 B/param, as the grads row does, not BF16_Optimizer's 6 (20).
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'a800-sxm-80gb', '--gpus', '8',
                      '--stack', 'deepspeed', '--zero', '3', '--seq', '4096', '--batch', '2',
                      '--recompute', 'full');
like($o, qr/^grads .*16-bit grad partition \(fp32 only in the step\)$/m, 'zero 3: grads row');
like($o, qr/^model states: 16\.0 B\/param before sharding \(weights 2 \+ grads 2 \+ master 4 \+ optimizer 8; recipe deepspeed-bf16, grads as ZeRO's backward holds them\)/m,
     'zero 3: the states line counts the 16-bit partition');
# fp32 weights keep the recipe's gradients: no ZeRO note on the row.
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'a800-sxm-80gb', '--gpus', '8',
                      '--stack', 'deepspeed', '--zero', '3', '--precision', 'fp32');
like($o, qr/^grads +[\d.]+ +[\d.]+\n/m, 'zero 3 fp32: the grads row has no ZeRO note');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--stack', 'jax');
# a name that is none of the option's values: a usage error (docs/output.md)
is($c, 2, 'unknown stack exits 2');
like($e, qr/unknown stack 'jax' \(expected megatron\|deepspeed\|hf\)/, 'names the stacks');

# Adapter dropout on a QLoRA base keeps its output (2 B) and bool mask
# (1 B) per q,v adapter input: 3 * 4096 * 1304 tokens * 32 layers
# = 512,753,664 B = 0.5128 GB more activations than --lora-dropout 0.
# The GB column prints two decimals, each value off by at most 0.005, so
# the printed difference is within 0.01 of 0.5128 (0.51 or 0.52; 1e-9
# for the float subtraction).
my @q = ('fit', 'llama2-7b', '--gpu', 'a100-sxm-40gb', '--method', 'qlora',
         '--seq', '1304');
my ($c1, $o1) = run_gp(@q);
my ($c0, $o0) = run_gp(@q, '--lora-dropout', '0');
my ($a1) = $o1 =~ /^activations\s+\S+\s+(\S+)/m;
my ($a0) = $o0 =~ /^activations\s+\S+\s+(\S+)/m;
ok($c1 == 0 && $c0 == 0 && defined $a1 && defined $a0
   && abs($a1 - $a0 - 0.512753664) <= 0.01 + 1e-9, '--lora-dropout 0 drops 0.51 GB');
like($o1, qr/^defaults: .*lora_dropout=0\.05/m, 'dropout default listed');

# DeepSpeed's pipeline engine keeps each in-flight micro-batch's stage
# output: BLOOM-176B TP4 PP12, b 2, s 2048 on stage 0 holds 12 outputs of
# 2048*2*14336*2/4 = 29,360,128 B (the 1/t slice) and one grad buffer:
# 13 * 29,360,128 = 381,681,664 B = 0.36 GiB, 0.38 GB.  Megatron: none.
my @bloom = ('fit', 'bloom-176b', '--gpu', 'a100-sxm-80gb', '--gpus', '384',
             '--tp', '4', '--pp', '12', '--zero', '1', '--method', 'pretrain',
             '--batch', '2', '--seq', '2048', '--recompute', 'full');
# (With the uniform split, as Megatron's: 6 layers on stage 0.)
($c, $o, $e) = run_gp(@bloom, '--stack', 'deepspeed', '--partition', 'uniform');
like($o, qr/^pipe_buffers\s+0\.36\s+0\.38\s+stage outputs kept per micro-batch in flight \(DeepSpeed\)$/m, 'deepspeed pipe buffers row');
# (the line counts stages from 1: stage 0 is "1 of 12")
like($o, qr/^most loaded pipeline stage: 1 of 12 \(6 layers, the embedding\)$/m,
     'uniform: stage 0 (the first of 12) with 6 layers');
($c, $o, $e) = run_gp(@bloom, '--stack', 'megatron');
unlike($o, qr/^pipe_buffers/m, 'megatron frees its sent outputs');
# DeepSpeed's default split balances parameters: 5 layers + the
# embedding on stages 0 and 11.  The last stage peaks at the gradient
# all-reduce: a bf16 copy of its grads, 2 * (5 * 2,466,437,120 +
# 3,596,615,680) / 4 = 7,964,400,640 B = 7.42 GiB, 7.96 GB.
($c, $o, $e) = run_gp(@bloom, '--stack', 'deepspeed');
like($o, qr/^grad_reduce\s+7\.42\s+7\.96\s+bf16 copy of the fp32 grads/m,
     'deepspeed: the reduce copy row');
like($o, qr/^most loaded pipeline stage: 12 of 12 \(5 layers, the output layer\)$/m,
     'deepspeed: the last stage, 5 layers');
like($o, qr/^defaults: .*partition=parameters/m, 'partition default listed');
($c, $o, $e) = run_gp(@bloom, '--partition', 'balanced');
is($c, 2, 'unknown partition exits 2');
like($e, qr/^gpuplan: fit: --partition must be auto, uniform, parameters, type:transformer or type:transformer\|embedding \(got 'balanced'\)$/m,
     'unknown partition lists the choices, naming the flag');
# train's engine message named its own binding ("bad argument #4 to
# 'gpuplan.core.train'"); the option's declared values refuse it first.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--pp', '2',
                      '--partition', 'balanced');
is($c, 2, 'train: unknown partition exits 2');
like($e, qr/^gpuplan: train: --partition must be auto, uniform, parameters, type:transformer or type:transformer\|embedding \(got 'balanced'\)$/m,
     'train: unknown partition refused by its flag, no internal binding named');

($c, $o, $e) = run_gp('fit', 'llama2-7b');
is($c, 2, 'missing --gpu is a usage error');
like($e, qr/--gpu ID is required/, 'says --gpu is required');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--method', 'dpo');
is($c, 2, 'unknown method exits 2');
like($e, qr/^gpuplan: fit: --method: unknown method 'dpo'/, 'names the method');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--recompute', 'some');
is($c, 2, 'unknown recompute exits 2');
like($e, qr/recompute must be none, selective, full, op or auto \(got 'some'\)/, 'names the policy');
($c, $o, $e) = run_gp('fit', 'no-such-model', '--gpu', 'h100-sxm');
is($c, 2, 'unknown model: a usage error, exit 2 (an unknown catalog name)');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--margin', '1.5');
is($c, 1, 'margin out of range is an error');

# --offload for inference is 'layers'; 'optimizer' read as off in silence.
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--method', 'infer', '--offload', 'optimizer');
is($c, 2, 'infer --offload optimizer: usage error');
like($e, qr/^gpuplan: fit: --offload for --method infer is 'layers'/, 'names the option and the value');
# Vision-language fine-tuning: 4 images per 4096-token sequence of
# Qwen2-VL 7B.  The tower is frozen by default: only the merger keeps
# its inputs, 4 images * 4 * 1024 patches * 1280 * 2 B = 41,943,040 B
# = 0.04 GiB / 0.04 GB.
($c, $o, $e) = run_gp('fit', 'qwen2-vl-7b', '--gpu', 'h100-sxm', '--seq', '4096',
                      '--images', '4', '--recompute', 'full');
is($c, 0, 'fit with images exits 0');
like($o, qr/^vision_activations\s+0\.04\s+0\.04\s+saved by the vision tower/m,
     'frozen tower: the merger inputs only');
like($o, qr/^defaults: .*--no-train-vision/m, 'frozen tower listed as a default');
# --train-vision, full recompute: + 32 layer inputs of 4 * 1024 * 1280 * 2 B
# = 335,544,320 B; with the merger 377,487,360 B = 0.35 GiB / 0.38 GB.
($c, $o, $e) = run_gp('fit', 'qwen2-vl-7b', '--gpu', 'h100-sxm', '--seq', '4096',
                      '--images', '4', '--recompute', 'full', '--train-vision');
like($o, qr/^vision_activations\s+0\.35\s+0\.38\s/m, 'training tower keeps its layer inputs');
($c, $o, $e) = run_gp('fit', 'qwen2-vl-7b', '--gpu', 'h100-sxm', '--seq', '512',
                      '--images', '4');
is($c, 1, 'image tokens beyond --seq: exit 1');
like($e, qr/4 images of 256 tokens do not fit in a sequence of 512 tokens/,
     'the message says why');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--images', '1');
is($c, 1, 'images for a text model: exit 1');
like($e, qr/llama2-7b, which has no vision tower/, 'the model is named');

# --no-flash on the hf stack (eager attention: softmax(dtype=float32).to(bf16)
# keeps the fp32 softmax output and its bf16 copy, 4 + 2 B a score) replaces
# flash's fp32 lse 4*a*s*b: (32*4096*4096*6 - 4*32*4096) * 32 layers =
# 103,062,437,888 B more than with flash, where each layer keeps per token
# 2 B * (qkv input h + q, k, v 3h + o input h + MLP input h + gate, up,
# silu(gate) and down input 4f) + two eager RMSNorms at 6 B an element
# (fp32 upcast 4 + normalised copy 2) 12h + lse 4 * 32 =
# 2 * (6 * 4096 + 4 * 11008) + 12 * 4096 + 128 = 186,496 B: * 4096 * 32 =
# 24,444,403,712 B.  Sum 127,506,841,600 B = 118.75 GiB / 127.51 GB.
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--seq', '4096', '--no-flash');
like($o, qr/^activations\s+118\.75\s+127\.51\s*$/m, '--no-flash saves the score tensors');
# --vpp 2 on pp 4, full recompute: stage 0 holds p(1 + (p-1)/(p v)) = 5.5
# micro-batches of its 8 layer inputs, 5.5 * 8 * 2048 * 4096 * 2 B =
# 738,197,504 B = 0.69 GiB / 0.74 GB (Korthikanti et al. 2022 sec. 4.2.3).
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '4', '--pp', '4',
                      '--vpp', '2', '--recompute', 'full');
like($o, qr/^activations\s+0\.69\s+0\.74\s*$/m, '--vpp: interleaved in-flight micro-batches');
like($o, qr/^most loaded pipeline stage: 1 of 4 /m, 'the first stage is the most loaded');
# RL options reach the planner; given values are not listed as defaults.
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
                      '--method', 'grpo', '--prompts', '16', '--group', '4',
                      '--response-len', '2048', '--no-colocated');
is($c, 0, 'GRPO options accepted');
like($o, qr/^defaults: .*prompt_len=512/m, 'an unset RL option is a listed default');
unlike($o, qr/^defaults: .*(prompts=|group=|response_len=)/m, 'given RL options are not defaults');
# One memory model, one default: without --prompts, fit --method grpo and rl
# price the same batch (64 prompts, the one declaration's value) and so the
# same peak.  dp 2 here (16 GPUs / tp 8): fit's old default of 8 per DP
# rank gave 16 prompts and 60.46 GiB where rl's 64 gave 69.5 GiB.
my @job = ('qwen3-32b', '--gpu', 'h100-sxm', '--gpus', '16', '--tp', '8', '--zero', '1',
           '--recompute', 'full');
($c, $o, $e) = run_gp('fit', @job, '--method', 'grpo');
is($c, 0, 'fit --method grpo without --prompts exits 0');
like($o, qr/^defaults: .*prompts=64,/m, 'fit lists the default prompts=64');
my ($fit) = $o =~ /^total\s+(\d+\.\d+)/m;
($c, $o, $e) = run_gp('rl', @job);
is($c, 0, 'rl on the same flags exits 0');
like($o, qr/^defaults: .*prompts=64,/m, 'rl lists the same default');
my ($rl) = $o =~ /^memory: peak (\d+\.\d) GiB/m;
ok(defined $fit && defined $rl, 'both print a peak');
# rl prints one decimal, fit two: equal to rl's rounding (0.05 GiB).
ok(abs($fit - $rl) <= 0.05, "fit --method grpo $fit GiB = rl's peak $rl GiB");
# ... and the same generation limit: fit takes --response-max (it refused
# it, so a job of 8192-token limits could only be fit at a fixed 1024
# each), and given alone its mean is rl's assumption, said the same way.
my @lim = ('qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3', '--recompute', 'full',
           '--response-max', '8192');
($c, $o, $e) = run_gp('fit', @lim, '--method', 'grpo');
is($c, 0, 'fit --method grpo --response-max exits 0') or diag $e;
like($o, qr/^defaults: .*response_len=5702 \(assumed: 0\.696 x --response-max/m,
     'fit says the mean it assumed from the limit');
($fit) = $o =~ /^total\s+(\d+\.\d+)/m;
($c, $o, $e) = run_gp('rl', @lim);
($rl) = $o =~ /^memory: peak (\d+\.\d) GiB/m;
ok(defined $fit && defined $rl && abs($fit - $rl) <= 0.05,
   "fit --response-max 8192: $fit GiB = rl's peak " . ($rl // '?') . " GiB");
($c, $o, $e) = run_gp('fit', @lim);
is($c, 2, 'fit --response-max without an RL method: a usage error (exit 2)');
like($e, qr/^gpuplan: fit: --response-max applies to --method grpo\|ppo$/m, '... naming it');
# DeepSpeed ZeRO-2/3 under RL: the rollout (and the log-prob forwards)
# run between the optimizer step and the next backward, where no fp32
# gradient lives (engine/memory_deepspeed.c mem_ds_zero_phases, v0.14.2's
# stage3.py and stage_1_and_2.py).  llama2-7b (6,738,415,616 parameters)
# on 8 GPUs, colocated, zero 3: the rollout state is the peak, and it holds
# stage 3's 16-bit partition buffer made at init, 6738415616 * 2 / 8 =
# 1,684,603,904 B = 1.57 GiB, and its flat bucket, reduce_bucket_size 5e8
# * 2 B = 1e9 B = 0.93 GiB; zero 2 holds no gradient there (its step
# frees the partition, its buckets live in the backward only).  fit and
# rl price the same state: fit's total equals rl's peak to rl's rounding.
for my $z (2, 3) {
  my @ds = ('llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'deepspeed',
            '--zero', $z);
  ($c, $o, $e) = run_gp('fit', @ds, '--method', 'grpo');
  is($c, 0, "fit --method grpo --zero $z exits 0");
  like($o, qr/^RL step: the rollout state needs the most/m, "zero $z: the rollout state peaks");
  if ($z == 3) {
    like($o, qr/^grads\s+1\.57\s+1\.68\s+16-bit grad partition, kept between steps$/m,
         'zero 3: the 16-bit partition, no fp32 gradient');
    like($o, qr/^param_gather\s+0\.93\s+1\.00\s*$/m, 'zero 3: the kept flat bucket');
  } else {
    unlike($o, qr/^grads\s/m, 'zero 2: no gradient between steps');
  }
  my ($f) = $o =~ /^total\s+(\d+\.\d+)/m;
  ($c, $o, $e) = run_gp('rl', @ds);
  is($c, 0, "rl --zero $z exits 0");
  my ($r) = $o =~ /^memory: peak (\d+\.\d) GiB/m;
  ok(defined $f && defined $r && abs($f - $r) <= 0.05,
     "zero $z: fit --method grpo $f GiB = rl's peak $r GiB");
}
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--prompts', '16');
is($c, 2, 'an RL option on full fine-tuning is a usage error');
like($e, qr/--prompts applies to --method grpo\|ppo/, 'and says which methods');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--method', 'infer',
                      '--recompute', 'full');
is($c, 2, 'a training option on inference is a usage error');
like($e, qr/--recompute applies to training, not --method infer/, 'and says so');
# Grouped weight formats: group size and scale dtype in the name.
($c, $o, $e) = run_gp('fit', 'llama2-70b', '--gpu', 'h100-sxm', '--method', 'infer',
                      '--weights', 'gptq-g64-fp8');
is($c, 1, 'unknown scale dtype: exit 1');
like($e, qr/scale dtype must be -fp16, -bf16 or -fp32/, 'the scale dtypes are listed');

# Offload: the GPU keeps DeepSpeed's gradient bucket and the gathered layers;
# the host memory is printed per GPU and for the job.  Llama-2-7B, ZeRO-3
# over 8 GPUs, params and optimizer offloaded: 20 B/param / 8 =
# 16,846,039,040 B = 15.69 GiB per GPU, 134,768,312,320 B = 125.51 GiB for 8 (bf16 partition
# 1.57 + grads 4.71 + master 3.14 + Adam 6.28 GiB; tests/c/t_memory.c).
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
                      '--offload', 'params+optimizer');
is($c, 0, 'offload params+optimizer') or diag $e;
like($o, qr/^host memory \(offload\): 15\.69 GiB per GPU \(weights 1\.57 \+ grads 4\.71 \+ master 3\.14 \+ optimizer 6\.28 GiB\), 125\.51 GiB for the 8 GPUs$/m,
     'host memory per GPU, by kind, and for the job');
like($o, qr/^grads\s+1\.18\s+1\.26\s+DeepSpeed gradient bucket/m,
     'GPU grads: the bucket, (5e8 + 131,072,000) x 2 B = 1.26 GB');
unlike($o, qr/^(master|optimizer) /m, 'no master or optimizer states on the GPU');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--zero', '2',
                      '--offload', 'params+optimizer');
is($c, 2, 'parameter offload below ZeRO-3: a usage error (--offload with --zero)');
like($e, qr/^gpuplan: fit: offloading the parameters needs --zero 3 \(DeepSpeed offload_param is a ZeRO-3 feature\), got --zero 2$/m, 'says which stage');

# Plans that run but waste something print a warning, in gpuplan train's
# codes; fp8 on a GPU without fp8 tensor cores is an error.
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--zero', '1');
like($o, qr/^warnings: zero_dp1 \(ZeRO-1 over a data-parallel group of one rank \(dp x cp = 1\) shards nothing\)$/m,
     'ZeRO-1 at dp 1 says it shards nothing');
($c, $o, $e) = run_gp('fit', 'llama2-70b', '--gpu', 'h100-sxm', '--gpus', '64', '--tp', '64');
like($o, qr/^warnings: tp_leaves_node \(tp 64 spans 8 nodes, 8 ranks on each/m,
     'tp 64 over 8-GPU nodes warned');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'a100-sxm-80gb', '--precision', 'fp8');
is($c, 1, 'fp8 on A100: exit 1');
like($e, qr/^gpuplan: fit: fp8 training needs fp8 tensor cores; gpu a100-sxm-80gb has none/m,
     'names the GPU');
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'a100-sxm-80gb', '--gpus', '8',
                      '--precision', 'fp8');
like($e, qr/^gpuplan: train: fp8 training needs fp8 tensor cores; gpu a100-sxm-80gb has none/m,
     'gpuplan train: the same words, opening as its other refusals');
# A V100 has fp16 tensor cores and no bf16 ones.  The declared default
# precision, bf16, made train, plan and rl refuse a job whose user chose
# no precision ("bf16 training needs bf16 tensor cores; this device has
# none", plan blaming one layout); the card's own mixed precision, fp16,
# is now the default there, said on the defaults line.  A bf16 the user
# gives is refused naming the card, as fp8 on an A100 is.
for my $cmd (['train', '--gpus', '8'], ['plan', '--gpus', '8'], ['rl', '--gpus', '8'], ['fit']) {
    my ($name, @rest) = @$cmd;
    ($c, $o, $e) = run_gp($name, 'llama3-8b', '--gpu', 'v100-sxm2-32gb', '--method', 'lora', @rest);
    is($c, 0, "$name on a V100 without --precision: priced") or diag $e;
    like($o, qr/precision=fp16 \(v100-sxm2-32gb has no bf16 tensor cores: fp16 mixed precision\)/,
         "$name: the defaults line says fp16 and why");
    ($c, $o, $e) = run_gp($name, 'llama3-8b', '--gpu', 'v100-sxm2-32gb', '--method', 'lora', @rest,
                          '--precision', 'bf16');
    is($c, 1, "$name --precision bf16 on a V100: exit 1");
    like($e, qr/bf16 training needs bf16 tensor cores; gpu v100-sxm2-32gb has none \(fp16 instead\)$/m,
         "$name --precision bf16: names the card");
}
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8');
like($o, qr/precision=bf16,/, 'an H100 keeps the declared bf16');
# infer on a V100: fp16 weights and KV by default (vLLM refuses bf16 below
# compute capability 8.0); the same 2 bytes, so the same figures.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'v100-sxm2-32gb');
is($c, 0, 'infer on a V100: exit 0') or diag $e;
like($o, qr/^llama3-8b on 1 x v100-sxm2-32gb \(tp 1, pp 1\), fp16 weights, fp16 KV,/m,
     'infer on a V100: fp16 weights and KV');
like($o, qr/kv=fp16 \(v100-sxm2-32gb has no bf16\)/, 'and the assumed line says why');
# fit --method infer follows the same rule (gpuplan.infer half_dtype): it
# said "defaults: weights=bf16, kv=bf16" on the V100 where infer says fp16.
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'v100-sxm2-32gb', '--method', 'infer');
is($c, 0, 'fit --method infer on a V100: exit 0') or diag $e;
like($o, qr/^defaults: weights=fp16 \(v100-sxm2-32gb has no bf16\), kv=fp16 \(v100-sxm2-32gb has no bf16\),/m,
     'fit --method infer on a V100: fp16 weights and KV, said why, as infer');
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer');
like($o, qr/^defaults: weights=bf16, kv=bf16,/m, 'an H100 keeps bf16 there');
($c, $o, $e) = run_gp('train', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--tp', '8',
                      '--zero', '1');
like($o, qr/^warnings: zero_dp1 \(ZeRO-1 over a data-parallel group of one rank/m,
     'gpuplan train: the same warning text');

# Encoder-decoder: --enc-seq is the input length.
($c, $o, $e) = run_gp('fit', 't0-3b', '--gpu', 'a100-sxm-80gb', '--method', 'lora',
                      '--seq', '8', '--enc-seq', '256');
is($c, 0, 'T0 3B LoRA') or diag $e;
like($o, qr/^defaults: .*--no-flash \(T5 position-bias attention runs unfused\)/m,
     'T5 attention unfused by default');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--enc-seq', '256');
is($c, 1, '--enc-seq on a decoder-only model: an error');
like($e, qr/--enc-seq applies to encoder-decoder models/, 'says why');


# --help: the options declared for fit (gpuplan.options), --sp among them
# (it worked but was missing from the hand-written help).
($c, $o, $e) = run_gp('fit', '--help');
is($c, 0, 'fit --help exits 0');
like($o, qr/^usage: gpuplan fit MODEL --gpu ID \[options\]$/m, 'fit --help: the usage line');
like($o, qr/^  --sp +sequence parallelism/m, 'fit --help lists --sp');
like($o, qr/^  --no-flash +unfused attention/m, 'a flag that defaults on is shown as --no-');
unlike($o, qr/^.{77,}$/m, 'fit --help: lines within 76 columns');
($c, $o, $e) = run_gp('fit', 'llama2-7b', '--gpu', 'h100-sxm', '--sequence-parallel');
is($c, 2, 'a synonym of --sp is a usage error');
like($e, qr/^gpuplan: fit: unknown option '--sequence-parallel' \(did you mean '--sp'\?\)$/m,
     '... naming --sp');

# --margin 1 leaves no budget: every command refused it its own way
# (fit and infer a usage error "must be in [0, 1)", train "must be below
# 1", plan naming a layout) and -0.5 as outside "[0, 1]".  One declared
# range, open at 1, says it for all of them.
for my $cmd (['fit'], ['train'], ['plan'], ['rl', '--gpus', '8'], ['infer']) {
    for my $m ('1', '-0.5') {
        my ($cm, $om, $em) = run_gp($cmd->[0], 'llama3-8b', '--gpu', 'h100-sxm',
                                    @$cmd[1 .. $#$cmd], '--margin', $m);
        is($cm, 1, "$cmd->[0] --margin $m: exit 1");
        like($em, qr/^gpuplan: $cmd->[0]: --margin must be a number in \[0, 1\) \(got \Q$m\E\)$/m,
             "$cmd->[0] --margin $m: the range, open at 1");
    }
}

# fit --method infer: a context past the model's, as gpuplan infer
# refuses input + output past max_seq (it priced a million tokens of KV
# for Llama 3 8B's 8192); at the context itself, as before.
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer', '--seq', '1000000');
is($c, 1, 'fit --method infer --seq 1000000: exit 1');
like($e, qr/^gpuplan: fit: --seq 1000000 tokens exceed llama3-8b's context of 8192 tokens \(max_seq\)$/m,
     'names --seq and the context');
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer', '--seq', '8192');
is($c, 0, 'fit --method infer --seq 8192: the whole context') or diag $e;

# fit --method infer: the concurrent sequences are --batch (fit has no
# --concurrency, gp.memory's Lua key): the defaults line said
# "concurrency=1", an option the command refuses.
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer');
like($o, qr/^defaults: weights=bf16, kv=bf16, batch=1, ctx=8192$/m, 'fit --method infer: the defaults name --batch');
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer', '--concurrency', '1');
is($c, 2, 'and fit has no --concurrency');

# fit --method infer's TP group within a node, in gpuplan infer's words
# (one rule, gpuplan.infer's tp_beyond_node): --tp 16 on 8-GPU H100 nodes
# was planned here while infer refused it; --tp 8 --pp 2 is the way.
($c, $o, $e) = run_gp('fit', 'llama3-70b', '--gpu', 'h100-sxm', '--method', 'infer', '--tp', '16', '--gpus', '16');
is($c, 1, 'fit --method infer --tp 16: exit 1');
like($e, qr/^gpuplan: fit: --tp 16 is more than the 8 GPUs of a h100-sxm node, .* give pp \(--tp 8, --pp 2\)$/m,
     'fit --method infer --tp 16: refused as infer refuses it');
my ($ic, $io, $ie) = run_gp('infer', 'llama3-70b', '--gpu', 'h100-sxm', '--tp', '16', '--gpus', '16');
(my $rest = $e) =~ s/^gpuplan: fit: //;
# (infer goes on to name the runtimes whose TP group spans nodes, an
# option fit does not take)
my ($line) = $rest =~ /^(.*)$/m;
like($ie, qr/^\Qgpuplan: infer: $line\E, or --runtime sglang or vllm/, 'the same words as gpuplan infer');
($c, $o, $e) = run_gp('fit', 'llama3-70b', '--gpu', 'h100-sxm', '--method', 'infer', '--tp', '8', '--pp', '2', '--gpus', '16');
is($c, 0, 'fit --method infer --tp 8 --pp 2: planned') or diag $e;

# gp.memory's refusals name the command, as train's do ("gpuplan: train: ...").
($c, $o, $e) = run_gp('fit', 'llama3-70b', '--gpu', 'h100-sxm', '--tp', '3');
like($e, qr/^gpuplan: fit: --gpus 1 \(the default\) is not a multiple of tp\*pp\*cp = 3: give --gpus 3$/m, 'fit --tp 3: the refusal opens with fit:');

done_testing();
