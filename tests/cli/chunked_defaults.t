# chunked_defaults: the chunked prefill's step budget where the job or the
# case leaves it, by runtime and release (issue 22), on the defaults line
# of `infer` and of `validate`.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# SGLang with --enable-mixed-chunk (--chunked-prefill): its
# chunked_prefill_size for the card (server_args.py, by memory): 8192 on a
# 96 GB H20, 2048 on a 24 GB L4, 16384 on a B200 -- not TensorRT-LLM's 8192.
for my $g (['h20', 8192], ['l4', 2048], ['b200', 16384]) {
    my ($gpu, $n) = @$g;
    ($c, $o, $e) = run_gp('infer', 'qwen3-8b', '--gpu', $gpu, '--runtime', 'sglang',
                          '--chunked-prefill', '--input', '4000', '--output', '100',
                          '--concurrency', '2');
    is($c, 0, "sglang --chunked-prefill on $gpu: priced") or diag $e;
    like($o, qr/max_num_tokens=$n \(SGLang's chunked_prefill_size on $gpu; the chunked prefill's tokens a step\)/,
         "... max_num_tokens=$n, SGLang's, said") or diag $o;
}
# Without --chunked-prefill SGLang prefills apart: no such line.
($c, $o, $e) = run_gp(qw(infer qwen3-8b --gpu h20 --runtime sglang --input 4000 --output 100 --concurrency 2));
unlike($o, qr/SGLang's chunked_prefill_size/, 'sglang without --chunked-prefill: not said') or diag $o;

# A vLLM case's release picks V1's API-server budget: 0.8.3 (PR #12369:
# 8192 only on an H100/H200 by name) gives an MI325X 2048; 0.8.5 (PR
# #17073: 70 GiB or more) gives an 80 GB A100 8192; 0.9.0 leaves gp.infer's
# rule, 2048 on an A100 (PR #17885), which it says itself.
($c, $o, $e) = run_gp(qw(validate tests/fixtures/validation/vllm_v1_budget.json --format csv));
is($c, 0, 'validate the three vLLM V1 cases') or diag $e;
my %row;
for my $l (split /\n/, $o) {
    my ($id) = split /,/, $l;
    $row{$id} = $l;
}
like($row{'vllm083-mi325x'} // '', qr/max_num_tokens=2048 \(vLLM V1 release 0\.8\.3, vllm PR #12369: the API server's max_num_batched_tokens 8192 on an H100\/H200 by name, else 2048;/,
     '0.8.3 on an MI325X: 2048, the release and PR said') or diag $o;
like($row{'vllm085-a100'} // '', qr/max_num_tokens=8192 \(vLLM V1 release 0\.8\.5, vllm PR #17073: the API server's max_num_batched_tokens 8192 on a card of 70 GiB or more, else 2048;/,
     '0.8.5 on an 80 GB A100: 8192, the release and PR said') or diag $o;
like($row{'vllm090-a100'} // '', qr/max_num_tokens=2048 \(vLLM's API server's on a100-sxm-80gb;/,
     '0.9.0 on an 80 GB A100: 2048, today\'s rule') or diag $o;
unlike($row{'vllm090-a100'} // '', qr/vllm PR #1/, '... with no release rule') or diag $o;
# The budget is priced: the 64 requests of 2048 tokens on the same A100 run
# faster at 8192 a step (0.8.5) than at 2048 (0.9.0).
my ($p085) = (split /,/, $row{'vllm085-a100'} // '')[4];
my ($p090) = (split /,/, $row{'vllm090-a100'} // '')[4];
ok(defined $p085 && defined $p090 && $p085 > $p090,
   "0.8.5's 8192 a step prices faster than 0.9.0's 2048 (" . ($p085 // '?') . " > " . ($p090 // '?') . ")");

done_testing();
