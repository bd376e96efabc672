# The review of this session's option and walk changes: each block a
# refusal or a message that said the wrong thing on odd input.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);
my @train = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--zero', '1');

# 1. --dp-bucket is a whole number of elements: 0.5 priced 2 x 8e9
# collectives a step (a 1.2e6 s step); refused naming the option, as a
# negative one is.
($c, $o, $e) = run_gp(@train, '--dp-bucket', '0.5');
is($c, 1, '--dp-bucket 0.5: out of range, exit 1') or diag $o;
like($e, qr/^gpuplan: train: --dp-bucket must be a whole number 0\.\.1000000000000000 \(got 0\.5\)$/m,
     '--dp-bucket 0.5: named, the whole number asked') or diag $e;
($c, $o, $e) = run_gp(@train, '--dp-bucket', '26214400');
is($c, 0, '--dp-bucket 26214400 (apex bucket_cap_mb 100 over fp32): taken') or diag $e;

# 2. A unit typed apart from its number: the joined form is offered only
# where the option reads it (its parse and its kind's check).
# --global-batch reads no 1K (a count is written out): no "as 1K".
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--global-batch', '1', 'K');
like($e, qr/\('K' follows --global-batch 1: an option takes one value\)$/m,
     '--global-batch 1 K: the stray word, no joined form') or diag $e;
unlike($e, qr/as 1K/, '... not offered as 1K, which --global-batch refuses');
# --tokens reads 1b (a decimal suffix in either case): offered
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1', 'b');
like($e, qr/\('b' follows --tokens 1: an option takes one value, a number and its unit written together, as 1b\)$/m,
     '--tokens 1 b: offered as 1b') or diag $e;
# a card id in two words is no number and its unit
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100', 'sxm');
like($e, qr/\('sxm' follows --gpu h100: an option takes one value\)$/m, '--gpu h100 sxm: no joined form')
     or diag $e;
# a quantity refused for its missing unit names the unit typed after it
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--memory', '40', 'GiB');
like($e, qr/^gpuplan: infer: --memory '40' needs a unit, e\.g\. 6GB \('GiB' follows --memory 40: an option takes one value, a number and its unit written together, as 40GiB\)$/m,
     '--memory 40 GiB: the unit named, the joined form offered') or diag $e;
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--host-bw', '60', 'GB/s');
like($e, qr/as 60GB\/s\)$/m, '--host-bw 60 GB/s: offered as 60GB/s') or diag $e;

# 3. comm's sizes past the range name the value as typed: 99999999999G is
# 99999999999 x 1024^3 = 1.07e20 B, a number the user never wrote; and
# 99999999999GB, a size in the units' form past their range, is out of
# range (exit 1), not "expects a size like 4GB".
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '99999999999G');
is($c, 1, 'comm --max 99999999999G: out of range, exit 1');
like($e, qr/^gpuplan: comm: --max must be a size of 1 B to 2\^50 B \(1 PiB\), got 1\.0737418239893e\+20 \(--max 99999999999G\)$/m,
     '... the bytes and the value typed') or diag $e;
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '99999999999GB');
is($c, 1, 'comm --max 99999999999GB: out of range, exit 1');
like($e, qr/^gpuplan: comm: --max must be a size of 1 B to 2\^50 B \(1 PiB\), got '99999999999GB'$/m,
     '... said as out of range') or diag $e;

# 4. infer --target over a list of cards: a card the catalog does not hold
# is refused as the list without --target refuses it (a usage error, exit
# 2), not a row of a table that exits 0; a card named twice is the same
# rule (gp.sweep.cards) and the same exit as without --target.
my @t = ('--weights', 'fp8', '--target', '25600');
($c, $o, $e) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'l4,t4', @t);
is($c, 2, 'infer --target over l4,t4: a usage error') or diag $o;
like($e, qr/^gpuplan: infer: --gpu: unknown gpu 't4' \(did you mean/m, '... naming t4') or diag $e;
my ($c2, $o2, $e2) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'l4,t4');
is($c, $c2, '... the exit of the list without --target');
($c, $o, $e) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'h100-sxm,h100-sxm', @t);
($c2, $o2, $e2) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'h100-sxm,h100-sxm');
is($c, $c2, 'a card named twice: the same exit with and without --target');
is($e, $e2, '... and the same words');

done_testing();
