# --no-flash on a runtime with no unfused attention path (lua/gpuplan/
# infer.lua M.no_flash_path), and the other refusals of this hardening
# round: each a usage error (exit 2) naming the flag and the runtime or
# layout, where the job was priced in silence before.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);
for my $r (qw(vllm sglang trtllm litgpt gpt-fast nim-http)) {
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--runtime', $r, '--no-flash');
    is($c, 2, "infer --runtime $r --no-flash: a usage error");
    like($e, qr/^gpuplan: infer: --no-flash with --runtime \Q$r\E: /m, "$r: names the flag and the runtime");
}
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--runtime', 'llama.cpp', '--no-flash');
is($c, 0, 'infer --runtime llama.cpp --no-flash: priced (its -fa off)') or diag $e;

($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--runtime', 'autoawq',
                      '--weights', 'awq', '--tp', '2');
is($c, 2, 'autoawq --tp 2: a usage error');
like($e, qr/--tp 2 with --runtime autoawq: .*give --pp 2/, 'autoawq --tp 2: says the layer split');

($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--stack', 'megatron',
                      '--tp-overlap', '--sp', '--tp-overlap-aggregate');
is($c, 2, '--tp-overlap-aggregate at tp 1: a usage error');
like($e, qr/--tp-overlap-aggregate .*it needs --tp > 1/, 'names the flag and tp');

($c, $o, $e) = run_gp('train', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '8', '--ep', '8',
                      '--stack', 'hf', '--capacity-factor', '1.25');
is($c, 2, '--capacity-factor on stack hf: a usage error');
like($e, qr/--capacity-factor 1\.25 pads the experts' buffers; --stack hf/, 'names the flag and the stack');

# A flag given in its --no- form is named so when it is misplaced (it read
# "--flash applies to training" to a user who typed --no-flash).
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer', '--no-flash');
is($c, 2, 'fit --method infer --no-flash: a usage error');
like($e, qr/^gpuplan: fit: --no-flash applies to training, not --method infer$/m, 'names --no-flash as typed');
done_testing();
