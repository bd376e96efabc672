# The MoE serving model with --concurrency past what its KV holds: the
# extra requests wait in the scheduler's queue, as on the one-model path
# (engine infer_queue_batch, the rule both take), where it printed "does
# not fit: batch 150 per GPU does not fit: the KV budget holds 75 per
# GPU" (exit 0, an answer).  On the code before, tests 4-7 fail.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use JSON::PP ();

my @dsv3 = ('infer', 'deepseek-v3', '--gpu', 'h800-sxm', '--gpus', '16', '--ep', '16',
            '--dp-attention', '--input', '1000', '--output', '1000');

# C by hand: a sequence's MLA cache a token is 61 layers x (512 + 64) x 2
# bytes = 70272 B, whole on each DP-attention GPU; kv policy mean admits
# 1000 + 1000 / 2 = 1500 tokens, 105,408,000 B (0.105 GB); the GPU's KV
# budget (the engine's kv_budget, read from the JSON) over it, floored:
# 75 a GPU, C = 75 x 16 = 1200 an instance.
my ($c, $o, $e) = run_gp(@dsv3, '--format', 'json');
is($c, 0, 'EP16 DP attention: runs') or diag $e;
my $free = JSON::PP::decode_json($o);
my $per = int($free->{kv_budget} / (1500 * 70272));
my $C = 16 * $per;
is($free->{batch}, $C, "the KV holds $per a GPU, $C an instance");

# 3-5. Concurrency 2C: a running batch of C (C / 16 a GPU), the other C
# wait; the throughput is a C batch's: the same figure as --concurrency C
# (the engine prices the same batch; the JSON's numbers compared exactly).
my ($c2, $o2, $e2) = run_gp(@dsv3, '--concurrency', 2 * $C, '--format', 'json');
is($c2, 0, "--concurrency " . 2 * $C . ": runs, not refused") or diag "$o2 $e2";
my $q = JSON::PP::decode_json($o2);
my (undef, $o1) = run_gp(@dsv3, '--concurrency', $C, '--format', 'json');
my $one = JSON::PP::decode_json($o1);
ok($q->{fits} && $q->{batch} == $C && $q->{batch_per_gpu} == $per,
   "... a running batch of $C ($per a GPU)");
is($q->{tokens_per_s}, $one->{tokens_per_s}, '... the throughput of a C batch');

# 6-7. The text: the batch row is the KV's and the assumed line says how
# many run and how many wait.
($c, $o, $e) = run_gp(@dsv3, '--concurrency', 2 * $C);
like($o, qr/^batch per GPU\s+$per \(KV holds $per; x 1 instances\)$/m, '... the batch row') or diag $o;
like($o, qr/concurrency=@{[2 * $C]}: $C run at once \($C a replica, $per a GPU, what its KV holds\), the other $C wait/,
     '... and the line says how many wait') or diag $o;

# 8-9. Not one sequence fits (a 150000-token prompt: 155000 x 70272 B =
# 10.9 GB of KV against a budget under 8 GB): refused, exit 0 (an answer).
($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h800-sxm', '--gpus', '16', '--ep', '16',
                      '--dp-attention', '--input', '150000', '--output', '10000', '--concurrency', '32');
is($c, 0, 'not one sequence fits: an answer') or diag $e;
like($o, qr/^does not fit: decode: .*one sequence's KV/m, '... refused naming one sequence') or diag $o;

# 10. A batch asked past the KV is the user's step: still refused.
($c, $o, $e) = run_gp(@dsv3, '--batch', 2 * $per);
like($o, qr/^does not fit: batch @{[2 * $per]} per GPU does not fit: the KV budget holds $per per GPU/m,
     '--batch past the KV: refused') or diag $o;

done_testing();
