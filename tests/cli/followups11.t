# Small refusals a set of colleagues' walks found and left: one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 5. One rule for exit codes (docs/output.md): a name that is none of an
# option's values is a value the option cannot read, a usage error (exit
# 2) -- a declared enum (--nvls maybe, --fp8-scaling, --kernels) as a
# command's own choices (--op foo) and a reader's names (--precision fp9,
# --stack jax); a value that reads but lies out of its range is exit 1,
# a negative amount among them (--budget -5, --deadline -5d, --price
# '$-2/h': each reads once its sign is gone).  --nvls maybe was exit 1
# where --op foo was 2; --deadline -5d and --price '$-2/h' were 2 where
# --budget -5 was 1.
for my $t (
    [[qw(comm --system dgx-h100 --nvls maybe)], qr/^gpuplan: comm: --nvls must be auto, on or off \(got 'maybe'\)$/m],
    [[qw(comm --system dgx-h100 --op foo)], qr/^gpuplan: comm: --op: unknown op 'foo'/m],
    [[qw(train llama3-8b --gpu h100-sxm --gpus 8 --kernels foo)], qr/^gpuplan: train: --kernels must be eager, fused or liger \(got 'foo'\)$/m],
    [[qw(train llama3-8b --gpu h100-sxm --gpus 8 --precision fp9)], qr/^gpuplan: train: --precision: unknown precision 'fp9'/m],
    [[qw(train llama3-8b --gpu h100-sxm --gpus 8 --stack jax)], qr/^gpuplan: train: --stack: unknown stack 'jax'/m],
    [[qw(infer llama3-8b --gpu h100-sxm --kv fp9)], qr/^gpuplan: infer: --kv: unknown kv dtype 'fp9'/m],
    [[qw(train llama3-8b --gpu h100-sxm --gpus 8 --fsdp foo)], qr/^gpuplan: train: --fsdp must be full_shard/m],
    [[qw(train llama3-8b --gpu h100-sxm --gpus 8 --cuda-graph-scope foo)], qr/^gpuplan: train: --cuda-graph-scope: unknown scope 'foo'/m],
    ) {
    my ($args, $re) = @$t;
    ($c, $o, $e) = run_gp(@$args);
    is($c, 2, "@$args[0, -2, -1]: a usage error, exit 2");
    like($e, $re, "@$args[0, -2, -1]: names the flag and its values") or diag $e;
    like($e, qr/\nusage: gpuplan $args->[0] /, "@$args[0, -2, -1]: the usage line");
}
for my $t (
    [[qw(plan llama3-8b --gpu h100-sxm --tokens 1e12 --budget -5)], qr/^gpuplan: plan: --budget '-5': must be a positive amount/m],
    [[qw(plan llama3-8b --gpu h100-sxm --tokens 1e12 --deadline -5d)], qr/^gpuplan: plan: --deadline '-5d': must be a positive duration$/m],
    [[qw(plan llama3-8b --gpu h100-sxm --tokens 1e12 --deadline 0d)], qr/^gpuplan: plan: --deadline '0d': must be a positive duration$/m],
    [['train', qw(llama3-8b --gpu h100-sxm --gpus 8 --price), '$-2/h'], qr/^gpuplan: train: --price '\$-2\/h' must be a non-negative amount$/m],
    [['train', qw(llama3-8b --gpu h100-sxm --gpus 8 --price), '-$2/h'], qr/^gpuplan: train: --price '-\$2\/h' must be a non-negative amount$/m],
    [['train', qw(llama3-8b --gpu h100-sxm --gpus 8 --price), '-2CNY/h'], qr/^gpuplan: train: --price '-2CNY\/h' must be a non-negative amount$/m],
    [[qw(train llama3-8b --gpu h100-sxm --gpus 8 --price -2)], qr/^gpuplan: train: --price must be a non-negative number \(got -2\)$/m],
    ) {
    my ($args, $re) = @$t;
    ($c, $o, $e) = run_gp(@$args);
    is($c, 1, "@$args[0, -2, -1]: out of range, exit 1");
    like($e, $re, "@$args[0, -2, -1]: says so") or diag $e;
    unlike($e, qr/\nusage: /, "@$args[0, -2, -1]: no usage line");
}
# text that reads as no amount or duration, signed or not, stays exit 2
for my $args ([qw(plan llama3-8b --gpu h100-sxm --tokens 1e12 --deadline -x)],
              [qw(train llama3-8b --gpu h100-sxm --gpus 8 --price -abc)]) {
    ($c, $o, $e) = run_gp(@$args);
    is($c, 2, "@$args[0, -2, -1]: no such text, exit 2");
}

# 6. --itl-max 20ms was refused ("expects a number") while gp.infer took
# itl_max = "20ms": a time with its unit is now read by the parser
# gp.infer's is (gpuplan.options quantity); a bare number stays
# milliseconds.  20, 20ms and 0.02s give the same answer, byte for byte.
{
    my @job = qw(infer qwen3-30b-a3b --gpu h200-sxm --gpus 8 --ep 8 --itl-max);
    my ($c0, $o0) = run_gp(@job, '20');
    is($c0, 0, '--itl-max 20 runs');
    for my $v ('20ms', '0.02s', '20000us') {
        ($c, $o, $e) = run_gp(@job, $v);
        is($c, 0, "--itl-max $v runs") or diag $e;
        is($o, $o0, "--itl-max $v: the answer of --itl-max 20");
    }
    ($c, $o, $e) = run_gp(@job, '5xx');
    is($c, 2, '--itl-max 5xx: text that is no time, exit 2');
    like($e, qr/^gpuplan: infer: --itl-max: bad time '5xx': unknown unit 'xx'/m, '... named');
    ($c, $o, $e) = run_gp(@job, '2h');
    is($c, 1, '--itl-max 2h: past the hour, exit 1');
    like($e, qr/^gpuplan: infer: --itl-max must be a number of milliseconds in \(0, 3600000\] \(got 2h\)$/m,
         '... the bound in the flag\'s unit, and the text typed');
    ($c, $o, $e) = run_gp(@job, '0x10');
    is($c, 2, '--itl-max 0x10: no decimal number, exit 2');
}

# 7. budget_policy --monthly 100 (a bare amount) was read as CNY, as
# gp.policy.monthly reads a bare budget (the candidate's currency, the
# China market's here), and printed "100 a month" with no currency: it is
# said in CNY now, and priced as 100CNY, to the byte; an amount that names
# its currency is printed as typed.
{
    my ($c1, $o1) = run_gp('run', 'scripts/budget_policy.lua', '--monthly', '100');
    is($c1, 0, 'budget_policy --monthly 100 runs');
    like($o1, qr/^1\. 100 CNY a month on 8 x h800-sxm/m, '... said in CNY');
    my ($c2, $o2) = run_gp('run', 'scripts/budget_policy.lua', '--monthly', '100CNY');
    like($o2, qr/^1\. 100CNY a month on 8 x h800-sxm/m, '100CNY as typed');
    s/^1\. .*\n//m for $o1, $o2;
    is($o1, $o2, '100 and 100CNY: the same answer');
    ($c, $o, $e) = run_gp('run', 'scripts/budget_policy.lua', '--monthly', '$15k');
    like($o, qr/^1\. \$15k a month on 8 x h800-sxm/m, '$15k as typed');
}

# 8. deepseek-v3 --expert-weights fp4 on an H200 (no FP4 tensor cores)
# was priced with the experts as FP8 GEMMs (engine/infer.c
# infer_compute_dtype: fp4 falls to the card's FP8 tensor cores) and read
# at 4.5 bits (NVFP4: 4 bits + an 8-bit scale per 16), while the header
# said only "(fp4 experts)": the assumed line says so.  On B200, which
# multiplies FP4, nothing is said; on A100 (no FP8 either) the experts
# multiply in BF16, weight-only.
{
    my @job = qw(infer deepseek-v3 --gpus 8 --ep 8 --expert-weights fp4 --gpu);
    ($c, $o, $e) = run_gp(@job, 'h200-sxm');
    is($c, 0, 'h200 fp4 experts: priced');
    like($o, qr/expert_weights=fp4 on h200-sxm \(no FP4 tensor cores\): the experts multiply as FP8 GEMMs \(W4A8\), their weights read at 4\.5 bits a weight, converted in the GEMM at no cost of its own/,
         'h200: the assumed line says how the experts compute');
    ($c, $o, $e) = run_gp(@job, 'b200');
    is($c, 0, 'b200 fp4 experts: priced');
    unlike($o, qr/expert_weights=/, 'b200: FP4 tensor cores, nothing to say');
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpus 16 --ep 16 --expert-weights fp8 --gpu a100-sxm-80gb));
    like($o, qr/expert_weights=fp8 on a100-sxm-80gb \(no FP8 tensor cores\): the experts multiply as BF16 GEMMs \(weight-only\), their weights read at 8 bits a weight/,
         'a100 fp8 experts: BF16, weight-only');
}

# 3. MoE serving under a runtime with no expert parallelism (llama.cpp:
# --split-mode layer or row; ExLlamaV2: whole modules a GPU) was priced
# as SGLang's engine -- deepseek-v3 EP16 on 16 H200s under llama.cpp gave
# 2818 tokens/s, above SGLang's, at llama.cpp's margin 0.  Refused, naming
# the runtime and the serving option that asked for the model (a usage
# error: the two do not go together, whatever the model and the card);
# the one-model path still prices their split as --tp, and SGLang's EP.
for my $rt (qw(llama.cpp exllamav2)) {
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --runtime), $rt);
    is($c, 2, "deepseek-v3 --ep 16 --runtime $rt: exit 2");
    like($e, qr/^gpuplan: infer: --runtime \Q$rt\E runs no expert parallelism \(.*\): the MoE serving model \(--ep 16\) prices SGLang's, vLLM's and TensorRT-LLM's engines: give --runtime sglang, vllm or trtllm, or price \Q$rt\E's own split with --tp N and none of the serving options$/m,
         "$rt: names the runtime and the option") or diag $e;
    ($c, $o, $e) = run_gp(qw(infer qwen3-30b-a3b --gpu h200-sxm --gpus 2 --dp-attention --runtime), $rt);
    is($c, 2, "qwen3-30b-a3b --dp-attention on 2 GPUs under $rt: exit 2");
    ($c, $o, $e) = run_gp(qw(infer qwen3-30b-a3b --gpu h200-sxm --gpus 2 --tp 2 --runtime), $rt);
    is($c, 0, "qwen3-30b-a3b --tp 2 under $rt: its own split, priced") or diag $e;
}
($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --runtime sglang));
is($c, 0, 'deepseek-v3 --ep 16 under SGLang: priced');

done_testing();
