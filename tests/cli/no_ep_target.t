# infer --target for a MoE model under a runtime without expert
# parallelism: its own split, TP replicas, never the serving search's EP
# pools (qwen3-235b-a22b on H100 under llama.cpp planned "32 x EP16, DP
# attention" decode pools, which 'infer --ep 16 --runtime llama.cpp'
# refuses); a serving option beside it refused, exit 2.  (The Lua side:
# tests/lua/no_ep_target.t.)
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my @job = qw(infer qwen3-235b-a22b --gpu h100-sxm --runtime llama.cpp --target 20000);
my ($c, $o, $e) = run_gp(@job);
is($c, 0, 'llama.cpp --target: planned') or diag $e;
like($o, qr/^\s+20000\s+50\.0\s+\d+\s+TP\d+\s+colocated\s/m, '... as TP replicas, colocated') or diag $o;
unlike($o, qr/EP\d+|DP attention/, '... no EP pool, no DP attention');
($c, $o, $e) = run_gp(@job, '--dp-attention');
is($c, 2, 'llama.cpp --target --dp-attention: exit 2');
like($e, qr/^gpuplan: infer: --runtime llama\.cpp runs no expert parallelism \(.+\): the MoE serving model \(--dp-attention\) prices SGLang's, vLLM's and TensorRT-LLM's engines: give --runtime sglang, vllm or trtllm, or plan llama\.cpp's own split, TP replicas, with none of the serving options$/m,
     '... naming the runtime and the option') or diag $e;
done_testing();
