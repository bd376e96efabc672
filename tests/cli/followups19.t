# followups19: FP8 where the card or runtime runs none -- one rule for
# --weights, --expert-weights, fit --method infer and --kv, and the fit
# hints suggest only what the card runs (gpuplan.infer fp8_weights_on,
# FP8_NATIVE_ONLY, kv_fp8_refusal).
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 3. TensorRT-LLM has no FP8 on Ampere (its support matrix: "Ampere (SM80,
# SM86) - FP32, FP16, BF16, INT8, INT4"): --weights fp8 with --runtime
# trtllm on an A100 is refused, naming the runtime and offering vLLM's or
# SGLang's weight-only Marlin; vLLM on the same card still prices it
# weight-only; on an H100 TensorRT-LLM runs it natively.
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu a100-sxm-80gb --runtime trtllm --weights fp8));
is($c, 1, 'trtllm --weights fp8 on A100: refused, exit 1') or diag $e;
like($e, qr/^gpuplan: infer: --weights fp8 on a100-sxm-80gb with --runtime trtllm: TensorRT-LLM's FP8 needs FP8 tensor cores.*give --runtime vllm or --runtime sglang \(FP8 Marlin, weight-only\), or --weights int8/m,
    '... names --weights, --runtime and what runs it') or diag $e;
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu a100-sxm-80gb --runtime vllm --weights fp8));
is($c, 0, 'vllm --weights fp8 on A100: priced') or diag $e;
like($o, qr/fp8 weights run weight-only on a100-sxm-80gb/, '... weight-only, said') or diag $o;
# int4 (AWQ) under vLLM: the line names the bound as Marlin's measured
# one that older kernels (vLLM 0.4's awq_gemm) are held to, not as the
# kernel that runs -- 0.4.2 ran awq_gemm, no Marlin.
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu a100-sxm-80gb --runtime vllm --weights awq --batch 1));
is($c, 0, 'vllm --weights awq on A100: priced') or diag $e;
like($o, qr/awq weights run weight-only on a100-sxm-80gb under vLLM: the kernel converts each weight to bf16 .*older kernels such as vLLM 0\.4's awq_gemm are held to it too/,
     '... the bound said as a bound, not as the kernel') or diag $o;
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu h100-sxm --runtime trtllm --weights fp8));
is($c, 0, 'trtllm --weights fp8 on H100: priced') or diag $e;
# deepseek-v3's released fp8 checkpoint under TensorRT-LLM on A100s:
# served converted to 16 bits, said in the runtime's words
($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu a100-sxm-80gb --tp 8 --pp 4 --runtime trtllm));
like($o, qr/weights=bf16 \(deepseek-v3's checkpoint is fp8, which a100-sxm-80gb cannot run: TensorRT-LLM's FP8/,
    'trtllm, released fp8 on A100: converted, in TensorRT-LLM\'s words') or diag "$o$e";

# 4. --expert-weights fp8 and fit --method infer --weights fp8 follow
# infer's --weights rule: refused below compute capability 8.0 (V100), and
# expert fp8 under TensorRT-LLM without FP8 tensor cores.
($c, $o, $e) = run_gp(qw(infer mixtral-8x7b --gpu v100-sxm2-32gb --tp 8 --ep 8 --expert-weights fp8));
is($c, 1, '--expert-weights fp8 on V100: refused') or diag $o;
like($e, qr/^gpuplan: infer: --expert-weights fp8 on v100-sxm2-32gb: FP8 checkpoints need FP8 tensor cores or, weight-only .* compute capability 8\.0.*; give --expert-weights fp16$/m,
    '... the --weights rule\'s words, fp16 offered') or diag $e;
($c, $o, $e) = run_gp(qw(infer mixtral-8x7b --gpu a100-sxm-80gb --tp 8 --ep 8 --expert-weights fp8 --runtime trtllm));
is($c, 1, '--expert-weights fp8 --runtime trtllm on A100: refused') or diag $o;
like($e, qr/--expert-weights fp8 on a100-sxm-80gb with --runtime trtllm: TensorRT-LLM's FP8/, '... in TensorRT-LLM\'s words') or diag $e;
($c, $o, $e) = run_gp(qw(infer mixtral-8x7b --gpu a100-sxm-80gb --tp 8 --ep 8 --expert-weights fp8));
is($c, 0, '--expert-weights fp8 on A100 (vLLM/SGLang Marlin): priced') or diag $e;
($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu v100-sxm2-32gb --method infer --weights fp8));
is($c, 1, 'fit --method infer --weights fp8 on V100: refused') or diag $o;
like($e, qr/^gpuplan: fit: --weights fp8 on v100-sxm2-32gb: FP8 checkpoints need FP8 tensor cores .*; give --weights fp16 or int8$/m,
    '... infer\'s words') or diag $e;
($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu a100-sxm-80gb --method infer --weights fp8));
is($c, 0, 'fit --method infer --weights fp8 on A100: sized') or diag $e;

# 5. A V100 cannot hold an FP8 KV cache under vLLM (E4M3 in Triton needs
# sm89; PR 35720's V100 crash), nor TensorRT-LLM one on Ampere: --kv fp8
# is refused there, and a job that does not fit is not told to try it.
($c, $o, $e) = run_gp(qw(infer llama3-70b --gpu v100-sxm2-32gb --tp 2));
like($o . $e, qr/does not fit: .*; try --weights int4, more GPUs with --tp or --offload/,
    'V100 does not fit: no --kv fp8 in the hint') or diag "$o$e";
($c, $o, $e) = run_gp(qw(infer llama3-70b --gpu a100-sxm-80gb --runtime trtllm));
like($o . $e, qr/does not fit: .*; try --weights int4, more GPUs with --tp or --offload/,
    'A100 under trtllm: no --kv fp8 in the hint') or diag "$o$e";
($c, $o, $e) = run_gp(qw(infer llama3-70b --gpu a100-sxm-80gb));
like($o . $e, qr/does not fit: .*; try --weights int4, --kv fp8, more GPUs/,
    'A100 (vLLM converts an FP8 cache in its kernels): --kv fp8 still hinted') or diag "$o$e";
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu v100-sxm2-32gb --kv fp8));
is($c, 1, '--kv fp8 on V100: refused') or diag $o;
like($e, qr/^gpuplan: infer: --kv fp8 on v100-sxm2-32gb: an FP8 KV cache .* needs compute capability 8\.0.*give --kv fp16$/m,
    '... naming --kv, fp16 offered') or diag $e;
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu a100-sxm-80gb --runtime trtllm --kv fp8));
is($c, 1, '--kv fp8 --runtime trtllm on A100: refused') or diag $o;
like($e, qr/give --kv int8 \(its INT8 KV cache\)/, '... TensorRT-LLM\'s INT8 cache offered') or diag $e;
# fit --method infer sizes the cache gp.infer would run: --kv fp8 on a V100
# refused in infer's words (it was sized, 0.50 GiB of KV), on an A100 sized
($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu v100-sxm2-32gb --method infer --kv fp8));
is($c, 1, 'fit --method infer --kv fp8 on V100: refused') or diag $o;
like($e, qr/^gpuplan: fit: --kv fp8 on v100-sxm2-32gb: an FP8 KV cache .* needs compute capability 8\.0.*give --kv fp16$/m,
    '... infer\'s words, naming --kv') or diag $e;
($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu a100-sxm-80gb --method infer --kv fp8));
is($c, 0, 'fit --method infer --kv fp8 on A100: sized') or diag $e;
# the MoE serving model's hint follows the same rule
# (its variants were priced: "none of --kv fp8, --gpus 4 --ep 4 fits
# either" before)
($c, $o, $e) = run_gp(qw(infer mixtral-8x7b --gpu v100-sxm2-32gb --gpus 2 --ep 2 --dp-attention));
# (one variant alone: "--gpus 4 --ep 4 does not fit either", no "none of")
like($o, qr/^--gpus 4 --ep 4 does not fit either \(priced\)$/m,
    'V100 MoE serving: --kv fp8 not among the variants') or diag "$o$e";

done_testing();
