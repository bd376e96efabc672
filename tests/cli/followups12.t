# Small items colleagues' walks left (followups11, newuser11): one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 2. gpt-fast, LitGPT and eager PyTorch (Hugging Face generate) run no
# expert parallelism either (gpt-fast shards each expert's weights as
# tensor parallelism, LitGPT splits or shards layers, HF places whole
# layers a GPU): MoE serving on several GPUs under them was priced as
# SGLang's engine (deepseek-v3 EP16 on 16 H200s, exit 0).  Refused by the
# rule llama.cpp's and ExLlamaV2's are, from one list; their own split
# (--tp 2) is still priced, and a serving engine's EP too.
for my $rt (qw(gpt-fast litgpt eager-pytorch)) {
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --runtime), $rt);
    is($c, 2, "deepseek-v3 --ep 16 --runtime $rt: exit 2");
    like($e, qr/^gpuplan: infer: --runtime \Q$rt\E runs no expert parallelism \(.+\): the MoE serving model \(--ep 16\) prices SGLang's, vLLM's and TensorRT-LLM's engines: give --runtime sglang, vllm or trtllm, or price \Q$rt\E's own split with --tp N and none of the serving options$/m,
         "$rt: names the runtime and the option") or diag $e;
    ($c, $o, $e) = run_gp(qw(infer qwen3-30b-a3b --gpu h200-sxm --gpus 2 --dp-attention --runtime), $rt);
    is($c, 2, "qwen3-30b-a3b --dp-attention on 2 GPUs under $rt: exit 2");
    ($c, $o, $e) = run_gp(qw(infer qwen3-30b-a3b --gpu h200-sxm --gpus 2 --tp 2 --runtime), $rt);
    is($c, 0, "qwen3-30b-a3b --tp 2 under $rt: its own split, priced") or diag $e;
}
for my $rt (qw(vllm trtllm)) {
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu h200-sxm --gpus 16 --ep 16 --runtime), $rt);
    is($c, 0, "deepseek-v3 --ep 16 under $rt: priced") or diag $e;
}

# 4. --itl-max 2h's refusal named the milliseconds it read ("got
# 7200000"), not the text typed; --ttft-max took no time with its unit at
# all ("expects a number, got '2h'").  Both read a bare number as
# milliseconds or a time with its unit (the parser gp.infer's itl_max and
# ttft_max are), and the bound's refusal names the text as typed.
{
    my @job = qw(infer llama3-8b --gpu h100-sxm --target 1000);
    for my $k (qw(itl-max ttft-max)) {
        for my $t (['2h'], ['7.2e6'], ['3600001'], ['0']) {
            ($c, $o, $e) = run_gp(@job, "--$k", $t->[0]);
            is($c, 1, "--$k $t->[0]: past the bound, exit 1");
            like($e, qr/^gpuplan: infer: --\Q$k\E must be a number of milliseconds in \(0, 3600000\] \(got \Q$t->[0]\E\)$/m,
                 "--$k $t->[0]: names the text typed") or diag $e;
        }
        # 500 ms, said three ways: the same answer, byte for byte
        ($c, my $o0, $e) = run_gp(@job, "--$k", '500');
        is($c, 0, "--$k 500 runs") or diag $e;
        for my $v (qw(500ms 0.5s)) {
            ($c, $o, $e) = run_gp(@job, "--$k", $v);
            is($c, 0, "--$k $v runs") or diag $e;
            is($o, $o0, "--$k $v: the answer of --$k 500");
        }
        ($c, $o, $e) = run_gp(@job, "--$k", '5xx');
        is($c, 2, "--$k 5xx: no time, exit 2");
    }
}

done_testing();
