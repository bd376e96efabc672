# What an eighth walk (a new user trying each command and the day's new
# options end to end, from the command line and from Lua) found: an
# option a command priced but another refused, an assumption that moved
# the answer and went unsaid.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();

my ($c, $o, $e);

# 1. --sac-attn-recompute changes the memory (the fused attention's output
# and its log-sum-exp no longer kept: engine/memory_act.c act_op_saved),
# and gpuplan train said so, but gpuplan fit refused it as "an option of
# gpuplan train and plan" (gp.memory: "unknown option") -- the memory
# command could not price the memory effect.  Now fit takes it, with the
# same refusals as train.
my @job = ('llama3.1-8b', '--gpu', 'b200', '--gpus', '8', '--seq', '8192', '--batch', '1',
           '--zero', '3', '--stack', 'hf', '--kernels', 'fused', '--recompute', 'op');
sub act_bytes {
    my ($c, $o, $e) = run_gp('fit', @job, @_, '--format', 'json');
    is($c, 0, "fit @_: exit 0") or diag $e;
    my $r = JSON::PP::decode_json($o);
    my ($a) = grep { $_->{name} eq 'activations' } @{ $r->{components} };
    return ($a->{bytes}, $r->{total});
}
my ($op, $op_total) = act_bytes();
my ($sac, $sac_total) = act_bytes('--sac-attn-recompute');
# Hand derivation: Llama 3.1 8B, 32 layers, hidden 4096, 32 heads; 8192
# tokens a GPU (batch 1, zero 3 keeps dp's tokens apart).  Each layer stops
# keeping the attention's output, 8192 x 4096 x 2 B = 64 MiB, and its
# fp32 log-sum-exp, 4 B x 32 heads x 8192 = 1 MiB: 32 x 65 MiB = 2080 MiB.
# Exact (whole bytes of the same formula): tolerance 1 byte.
cmp_ok(abs(($op - $sac) - 32 * (8192 * 4096 * 2 + 4 * 32 * 8192)), '<=', 1,
       'fit --sac-attn-recompute: 2080 MiB of attention outputs and log-sum-exps not kept');
($c, $o, $e) = run_gp('train', @job, '--sac-attn-recompute', '--format', 'json');
is($c, 0, 'train --sac-attn-recompute: exit 0') or diag $e;
my $t = JSON::PP::decode_json($o);
cmp_ok(abs($t->{memory}{total} - $sac_total), '<=', 1,
       'fit and train give the same per-GPU total with the flag (one memory model)');
my @bare = grep { $_ ne '--recompute' && $_ ne 'op' } @job;
($c, $o, $e) = run_gp('fit', @bare, '--sac-attn-recompute');
is($c, 2, 'fit --sac-attn-recompute without --recompute op: a usage error');
like($e, qr/--sac-attn-recompute .* it needs --recompute op \(got --recompute none\)/,
     'the flag and the policy it needs are named');
($c, $o, $e) = run_gp('fit', @job, '--sac-attn-recompute', '--no-flash');
is($c, 2, 'fit --sac-attn-recompute --no-flash: a usage error');
like($e, qr/--sac-attn-recompute is a fused attention kernel .*\(--no-flash\)/,
     'unfused attention named');
($c, $o, $e) = run_gp('fit', 'llama3.1-8b', '--gpu', 'b200', '--method', 'infer',
                      '--sac-attn-recompute');
is($c, 2, 'fit --method infer --sac-attn-recompute: refused, not ignored');
like($e, qr/--sac-attn-recompute applies to training/, 'the method named');

# 2. vLLM's and SGLang's Triton fused MoE multiplies fp8 experts at 0.594
# of an H100's bf16 rate per SM, not at the fp8 rate (infer.lua
# M.moe_fp8_bf16_x): on one H100 it moves Qwen3-30B-A3B's TTFT from 31 to
# 42 ms and its tokens/s from 4185 to 3474, and the assumed line said
# nothing of it.  Now it says the multiple where it binds: an fp8 MoE on
# Hopper under those runtimes, without expert parallelism.
sub assumed {
    my ($c, $o, $e) = run_gp('infer', @_);
    is($c, 0, "infer @_: exit 0") or diag $e;
    my ($line) = $o =~ /^assumed\s+(.*)$/m;
    return $line // '';
}
# H100: 0.594 x (989e12 / 132 SMs) / (989e12 / 132) = 0.594, printed %.3g
like(assumed('qwen3-30b-a3b', '--gpu', 'h100-sxm', '--runtime', 'vllm', '--weights', 'fp8'),
     qr/moe_fp8_bf16_x=0\.594 \(vLLM's Triton fused MoE/, 'vllm fp8 MoE on an H100: the cap said');
like(assumed('qwen3-30b-a3b', '--gpu', 'h100-sxm', '--tp', '2', '--runtime', 'sglang',
             '--weights', 'fp8'),
     qr/moe_fp8_bf16_x=0\.594 \(SGLang's/, 'sglang tp 2: said, with the runtime named');
unlike(assumed('qwen3-30b-a3b', '--gpu', 'h100-sxm', '--runtime', 'vllm'),
       qr/moe_fp8/, 'bf16 experts: nothing capped, nothing said');
unlike(assumed('llama3.1-8b', '--gpu', 'h100-sxm', '--runtime', 'vllm', '--weights', 'fp8'),
       qr/moe_fp8/, 'a dense model: no fused MoE');
unlike(assumed('qwen3-30b-a3b', '--gpu', 'h100-sxm', '--runtime', 'trtllm', '--weights', 'fp8'),
       qr/moe_fp8/, 'TensorRT-LLM: its own MoE kernels, no cap');
# H20: 0.594 x (989e12 / 132) / (148e12 / 78) = 2.35, past its fp8 / bf16
# peaks 296 / 148 = 2: its own fp8 rate binds first and the cap changes
# nothing, so nothing is said.
unlike(assumed('qwen3-30b-a3b', '--gpu', 'h20', '--runtime', 'sglang', '--weights', 'fp8'),
       qr/moe_fp8/, 'H20: the cap does not bind');
# The MoE serving model applies it at ep 1 only (serve_step.c).
like(assumed('qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '2', '--dp-attention',
             '--runtime', 'vllm', '--weights', 'fp8'),
     qr/moe_fp8_bf16_x=0\.594/, 'DP attention at ep 1: said');
unlike(assumed('qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '2', '--ep', '2',
               '--dp-attention', '--runtime', 'vllm', '--weights', 'fp8'),
       qr/moe_fp8/, 'ep 2: the experts sharded by EP, no cap, nothing said');

# 3. TensorRT-LLM's fused all-reduce quantises the next linear's fp8 input
# only up to its custom all-reduce workspace (infer.lua M.ar_fusion_max:
# 16 MB at tp 2, 8 MB above); Llama 3.1 70B fp8 at tp 4 moved 2.8% in ITL
# and 3.4% in TTFT by it, the assumed line said nothing, and the option
# that changes it was Lua's alone.  Now the line says the workspace where
# it decides anything (trtllm, fp8 or fp4, tp > 1, hidden past 4096), the
# command line takes --ar-fusion-max, and another runtime refuses it.
my @l70 = ('llama3.1-70b', '--gpu', 'h100-sxm', '--runtime', 'trtllm', '--weights', 'fp8',
           '--kv', 'fp8', '--input', '2048', '--output', '256');
like(assumed(@l70, '--tp', '4'), qr/ar_fusion_max=8MB \(TensorRT-LLM 1\.0's custom all-reduce workspace at --tp 4/,
     'tp 4: 8 MB said');
like(assumed(@l70, '--tp', '2'), qr/ar_fusion_max=16MB .* at --tp 2/, 'tp 2: 16 MB said');
unlike(assumed(@l70, '--tp', '4', '--ar-fusion-max', '64MB'), qr/ar_fusion_max=/,
       'given: not a default');
unlike(assumed('llama3.1-70b', '--gpu', 'h100-sxm', '--runtime', 'trtllm', '--tp', '4'),
       qr/ar_fusion_max/, 'bf16: nothing quantised, nothing said');
unlike(assumed('llama3.1-8b', '--gpu', 'h100-sxm', '--runtime', 'trtllm', '--weights', 'fp8',
               '--tp', '2'),
       qr/ar_fusion_max/, 'hidden 4096: never fused (ACT_QUANT_FUSION_MIN_HIDDEN), nothing said');
sub itl_ms {
    my ($c, $o, $e) = run_gp('infer', @l70, '--tp', '4', @_, '--format', 'json');
    is($c, 0, "infer --tp 4 @_: exit 0") or diag $e;
    return JSON::PP::decode_json($o)->{itl_s};
}
# The batch, 654 sequences (fp8 KV), all-reduces 654 x 8192 x 2 B = 10.7
# MB a layer, past the 8 MB workspace: the default runs NCCL and two
# quantise kernels a layer; a 64 MB workspace (or 0B, every size) fuses
# them, so the step is shorter and the two equal.  Same engine, same
# inputs: exact.
my ($dflt, $big, $zero) = (itl_ms(), itl_ms('--ar-fusion-max', '64MB'),
                           itl_ms('--ar-fusion-max', '0B'));
cmp_ok($big, '<', $dflt, '--ar-fusion-max 64MB: the 10.7 MB all-reduce fused, ITL shorter');
is($zero, $big, '--ar-fusion-max 0B: every size fused, as 64MB here');
($c, $o, $e) = run_gp('infer', 'llama3.1-70b', '--gpu', 'h100-sxm', '--tp', '4', '--weights',
                      'fp8', '--runtime', 'vllm', '--ar-fusion-max', '8MB');
is($c, 2, '--ar-fusion-max under vllm: a usage error, not ignored');
like($e, qr/--ar-fusion-max .* it needs --runtime trtllm \(got --runtime vllm\)/,
     'the flag and the runtime named');

# 4. --runtime trtllm on an AMD or Intel card was priced with TensorRT-LLM's
# kernels (XQA, its all-reduce fusion, trtllm-bench's graph sizes), exit 0,
# though TensorRT-LLM runs on NVIDIA GPUs alone.  Now refused, naming the
# card's vendor; an NVIDIA card is priced as before.
for my $g (['mi300x', 'AMD'], ['gaudi3', 'Intel']) {
    ($c, $o, $e) = run_gp('infer', 'llama3.1-8b', '--gpu', $g->[0], '--runtime', 'trtllm');
    is($c, 2, "--runtime trtllm on $g->[0]: a usage error");
    like($e, qr/--runtime trtllm is NVIDIA's TensorRT-LLM, which runs on NVIDIA GPUs only; \Q$g->[0]\E is \Q$g->[1]\E's/,
         "$g->[0]: the runtime and the vendor named");
    is($o, '', "$g->[0]: nothing priced");
}
($c, $o, $e) = run_gp('infer', 'llama3.1-8b', '--gpu', 'h100-sxm', '--runtime', 'trtllm');
is($c, 0, '--runtime trtllm on an H100: priced') or diag $e;

# 5. The MoE serving model prices FA3's measured rate for the attention on
# Hopper, and its assumed line called that "SGLang's default backend"
# whatever --runtime said.  Now it names the runtime's own kernel.
my %fa3 = ('' => qr/attn kernel: fa3 \(SGLang's default backend on Hopper\)/,
           sglang => qr/attn kernel: fa3 \(SGLang's default backend on Hopper\)/,
           vllm => qr/attn kernel: fa3 \(vLLM's FlashAttention 3 on Hopper/,
           trtllm => qr/attn kernel: fa3 \(TensorRT-LLM's own attention kernels on Hopper/);
for my $rt (sort keys %fa3) {
    my $line = assumed('deepseek-v3', '--gpu', 'h200-sxm', '--gpus', '16', '--ep', '16',
                       ($rt ne '' ? ('--runtime', $rt) : ()));
    like($line, $fa3{$rt}, "ep 16, runtime '$rt': the attention kernel named as that runtime's");
}

# 6. Two refusals named sequence parallelism as the bare word "sp", which
# the command line's wording (options.flags_named) leaves as a word: "it
# needs sp" where every other option in them was its flag.  Now --sp.
($c, $o, $e) = run_gp('train', 'llama3.1-70b', '--gpu', 'h100-sxm', '--gpus', '64', '--tp', '4',
                      '--pp', '2', '--stack', 'megatron', '--precision', 'fp8', '--tp-overlap',
                      '--tp-overlap-fp8-rs');
is($c, 2, '--tp-overlap-fp8-rs without --sp: a usage error');
like($e, qr/--tp-overlap-fp8-rs .* it needs --sp$/m, '--sp named as the flag');
($c, $o, $e) = run_gp('train', 'llama3.1-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tp', '2',
                      '--tp-input-per-linear');
is($c, 2, '--tp-input-per-linear without --sp: a usage error');
like($e, qr/it needs --sp \(give it, or leave --tp-input-per-linear out\)/, '--sp named');

# 7. fit --method infer --kv-repeat priced an inference job's memory with
# the flag ignored, exit 0: K and V copied to every query head is
# torchtitan's training attention (repeat_kv before SDPA, its copies kept
# for the backward).  Every other fit flag is either read at infer or
# refused there; this one now is refused too.
($c, $o, $e) = run_gp('fit', 'llama3.1-8b', '--gpu', 'h100-sxm', '--method', 'infer', '--kv-repeat');
is($c, 2, 'fit --method infer --kv-repeat: a usage error, not ignored');
like($e, qr/--kv-repeat applies to training, not --method infer/, 'the flag and the method named');
($c, $o, $e) = run_gp('fit', 'llama3.1-8b', '--gpu', 'h100-sxm', '--kv-repeat');
ok($c == 0 || $c == 1, 'fit --kv-repeat in training: still priced') or diag $e;

done_testing();
