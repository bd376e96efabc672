# A new user's walk over this session's options (optimizer_impl,
# graph_max_context, moe_router_ops, the comm topology fields): each rough
# edge found gives a clear refusal naming the input, or a right answer.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# --- 1. A Lua-only option on the command line -------------------------
# '--optimizer-impl' said "did you mean '--optimizer'?", a different
# option; it is gp.train's key (lua_only): say so.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--optimizer-impl', 'loop');
is($c, 2, 'train --optimizer-impl: a usage error');
like($e, qr/unknown option '--optimizer-impl' \(optimizer_impl is a key of gp\.train only, not a flag: docs\/lua\.md\)/,
     'train --optimizer-impl: named as gp.train\'s key');
unlike($e, qr/did you mean '--optimizer'/, 'train --optimizer-impl: not --optimizer');
# A plain typo keeps its did-you-mean.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--optimzer', 'adamw');
like($e, qr/did you mean '--optimizer'\?/, 'train --optimzer: did you mean --optimizer');

# --- 2. moe_router_ops is a count of kernels -----------------------------
# It took 5.5 (type number): a router launches whole kernels.
($c, $o, $e) = run_gp('train', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '16', '--ep', '8',
                      '--kernels', 'fused', '--moe-router-ops', '5.5');
isnt($c, 0, 'train --moe-router-ops 5.5: refused');
like($e, qr/--moe-router-ops' expects an integer, got '5\.5'/, 'train --moe-router-ops 5.5: a whole number asked');
($c, $o, $e) = run_gp('train', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '16', '--ep', '8',
                      '--kernels', 'fused', '--moe-router-ops', '72');
is($c, 0, 'train --moe-router-ops 72: taken') or diag $e;

# --- 3. The assumed optimizer implementation -----------------------------
# The hf stack's AdamW is priced as torch.optim.AdamW's foreach path (96 B
# a parameter's step, three times a fused kernel's 32), which the
# defaults line did not say; it says it now, in words (optimizer_impl is
# a Lua key only), and not where the step is the fused kernel.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'hf',
                      '--zero', '3');
is($c, 0, 'train --stack hf: runs') or diag $e;
like($o, qr/^defaults: .*optimizer impl: foreach \(stack hf: torch\.optim\.AdamW's foreach path/m,
     'train --stack hf: the foreach step on the defaults line');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'megatron');
like($o, qr/^defaults: /m, 'train --stack megatron: a defaults line');
unlike($o, qr/optimizer impl/, 'train --stack megatron (fused): nothing said');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'hf',
                      '--zero', '3', '--optimizer', 'sgd');
unlike($o, qr/optimizer impl/, 'train --stack hf --optimizer sgd: no AdamW step to say');

# --- 4. plan --moe-router-ops without expert parallelism -----------------
# plan tries EP up to --ep-max (default 1): the router's launches are
# priced on the expert-parallel layer only, so every layout priced none of
# them while the option was taken (train refuses it at --ep 1).
($c, $o, $e) = run_gp('plan', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '16',
                      '--moe-router-ops', '72');
isnt($c, 0, 'plan --moe-router-ops without --ep-max: refused');
like($e, qr/--moe-router-ops is priced on the expert-parallel MoE layer's host launches; give --ep-max 2 or more/,
     'plan --moe-router-ops: names --ep-max');
($c, $o, $e) = run_gp('plan', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '16', '--ep-max', '8',
                      '--moe-router-ops', '72');
is($c, 0, 'plan --moe-router-ops --ep-max 8: searched') or diag $e;

# --- 5. The hybrid engine's q/k/v re-fusion on the rollout line ---------
# gp.rl prices DeepSpeed's _merge_qkv under ZeRO-3 (hybrid_qkv_merge, GPU
# time a decode step): 2.6 ms of a 14-19 ms step for Llama-2-7B at
# rollout TP 2, yet the text named only the host work and the sampling.
# Its total is hybrid_qkv_merge x the engine's decode steps (1024 a batch
# x 4 batches = 4096).
($c, $o, $e) = run_gp('rl', 'llama2-7b', '--gpu', 'a100-sxm-80gb', '--gpus', '8', '--rollout-engine',
                      'hybrid', '--zero', '3', '--rollout-tp', '2', '--algo', 'ppo');
is($c, 0, 'rl --rollout-engine hybrid --zero 3: runs') or diag $e;
like($o, qr/^rollout: .*over 4096 steps.*, q, k and v re-fused a layer \(DeepSpeed's _merge_qkv under ZeRO-3\) \d+\.\d\d s/m,
     'rl hybrid ZeRO-3: the re-fusion said on the rollout line');

# --- 6. --vllm-version without sampling ----------------------------------
# Naming the V0 release also sets the CUDA-graph context limit (8192), but
# it is refused for greedy sampling; the refusal now says how a greedy V0
# run states that limit.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--runtime', 'vllm',
                      '--vllm-version', '0.5.0');
isnt($c, 0, 'infer --vllm-version, greedy: refused');
like($e, qr/a greedy V0 run states its CUDA-graph context limit by --graph-max-context, V0's default 8192/,
     'infer --vllm-version, greedy: --graph-max-context named');

# A Lua-only key of other commands: its functions named, where the flag
# said nothing.
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--optimizer-impl', 'loop');
like($e, qr/unknown option '--optimizer-impl' \(a Lua option of gp\.memory, gp\.train, gp\.sweep and gp\.rl\)/,
     'infer --optimizer-impl: the Lua functions that take it');
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--ll128-off');
like($e, qr/ll128_off is a key of gp\.comm only, not a flag: docs\/lua\.md/,
     'comm --ll128-off: gp.comm\'s topology key');

# The model is every job command's MODEL argument: '--model X' said it
# was "a key of gp.train only, not a flag", which hid 'train X'.
($c, $o, $e) = run_gp('train', '--model', 'llama3-8b', '--gpu', 'h100-sxm');
is($c, 2, 'train --model: a usage error');
like($e, qr/unknown option '--model' \(model is the command's MODEL argument, not a flag: gpuplan train MODEL \.\.\.\)/,
     'train --model: the MODEL argument named') or diag $e;
done_testing();
