# Runtime trtllm on the MoE serving model (DeepSeek-V3, EP16, DP
# attention) admits a request only when the KV for its prompt and its
# whole output is free: TensorRT-LLM's capacity scheduler default,
# GUARANTEED_NO_EVICT (gpuplan.infer's M.kv_reserve, the one rule gp.infer's
# setup applies on both paths).  The assumed line says it as on the
# one-model path.  On the code before, the MoE model priced it at kv
# policy mean: tests 2-3 fail (no such line, 140 a GPU where 105 fit).
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();

my @ds = ('infer', 'deepseek-v3', '--gpu', 'h800-sxm', '--gpus', '16', '--ep', '16',
          '--dp-attention', '--input', '1000', '--output', '1000', '--runtime', 'trtllm');

# 1-2. The text: the assumed line names the policy and its source.
my ($c, $o, $e) = run_gp(@ds);
is($c, 0, 'deepseek-v3 EP16 DP attention, runtime trtllm: runs') or diag $e;
like($o, qr/kv policy: max \(GUARANTEED_NO_EVICT, the capacity scheduler default\)/,
     '... the assumed line says kv policy max') or diag $o;

# 3. The capacity by hand: a sequence's MLA cache a token is 61 layers x
# (512 + 64) x 2 bytes = 70272 B, whole on each DP-attention GPU; under
# max a sequence holds input + output = 2000 tokens, 140,544,000 B; the
# GPU's KV pool (the JSON's kv_budget) over it, floored, is the batch a
# GPU holds (105 here; kv policy mean, 1500 tokens, would hold 140).
($c, $o, $e) = run_gp(@ds, '--format', 'json');
my $j = JSON::PP::decode_json($o);
my $per = int($j->{kv_budget} / (2000 * 70272));
ok($j->{fits} && $j->{batch_per_gpu} == $per && $j->{batch} == 16 * $per,
   "batch kv_budget / (2000 x 70272 B) = $per a GPU, " . 16 * $per . " an instance")
  or diag "got $j->{batch_per_gpu}";

# 4. Runtime sglang on the same deployment keeps kv policy mean.
($c, $o, $e) = run_gp(@ds[0 .. $#ds - 1], 'sglang');
like($o, qr/kv policy: mean/, 'runtime sglang: kv policy mean') or diag $o;

done_testing();
