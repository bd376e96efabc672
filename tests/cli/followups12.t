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

done_testing();
