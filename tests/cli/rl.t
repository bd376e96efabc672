# gpuplan rl: the phase table, the summary lines, formats and errors; and
# scripts/grpo.lua and scripts/video_sft.lua, whose conclusions must follow
# from the numbers they print.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my @job = ('qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
           '--recompute', 'full', '--prompts', '64', '--group', '8',
           '--prompt-len', '512', '--response-len', '2048', '--response-max', '8192');
my ($c, $o, $e) = run_gp('rl', @job, '--price', '$2.00/h', '--steps', '500');
is($c, 0, 'rl exits 0');
like($o, qr/^qwen2\.5-7b GRPO on 8 x h100-sxm, colocated \(train tp 1, pp 1, dp 8, cp 1, zero 3; rollout tp 1, 8 engines\): 64 prompts x 8 = 512 samples, prompt 512 \+ response 2048 \(exp, max 8192\)$/m,
     'title names the job, the placement and the lengths');
like($o, qr/^phase\s+pool\s+GPUs\s+seconds\s+share\s+idle \(s\)\s+memory GiB$/m, 'phase table header');
my %sec;
for my $l (split /\n/, $o) {
    $sec{$1} = $2 if $l =~ /^(rollout|logprob|reference|actor_update|weight_sync|step)\s+\S*\s+\d+\s+([\d.]+)\s/;
}
ok(defined $sec{$_}, "a $_ row") for qw(rollout logprob reference actor_update weight_sync step);
my $sum = 0;
$sum += $sec{$_} for qw(rollout logprob reference actor_update weight_sync);
# Each row is printed to 0.001 s: five roundings of 0.0005 at most.
ok(abs($sum - $sec{step}) <= 0.003, 'colocated: the phases add up to the step');
like($o, qr/^rollout: 8 engines x 64 samples \(all at once\), prefill [\d.]+ s, decode [\d.]+ s over \d+ steps \(mean batch [\d.]+\); tail [\d.]+ s after 90% of the samples finished, longest response \d+ tokens/m,
     'rollout line: engines, batch, tail, longest');
like($o, qr/^throughput: [\d.]+ samples\/s, \d+ tokens\/s \(\d+ per GPU\), \d+ generated tokens\/s$/m, 'throughput line');
like($o, qr/^memory: peak [\d.]+ GiB of 79\.1 GiB per GPU; fits: yes$/m, 'memory verdict');
my ($cs, $ck) = $o =~ /^cost: ([\d.]+) USD per step, ([\d.]+) USD per 1k prompts at 2\.00 USD\/GPU-h$/m;
ok(defined $cs, 'cost line');
# step x 8 GPUs x $2 / 3600; per 1k prompts x 1000 / 64 (printed roundings).
ok(abs($cs - $sec{step} * 8 * 2 / 3600) <= 0.001, 'cost per step = step x GPUs x price');
ok(abs($ck - $cs * 1000 / 64) <= 0.02, 'cost per 1k prompts = cost per step x 1000 / 64');
like($o, qr/^run: 500 steps in [\d.]+ hours on 8 GPUs; cost \d+ USD$/m, 'run line');

($c, $o, $e) = run_gp('rl', @job, '--rollout-gpus', '4');
is($c, 0, 'separate pools exit 0');
like($o, qr/rollout 4 \+ training 4 GPUs, staleness 1/, 'title names the split');
like($o, qr/^pools: rollout 4 GPUs busy [\d.]+ s, idle [\d.]+ s \([\d.]+%\); training 4 GPUs busy [\d.]+ s, idle [\d.]+ s \([\d.]+%\)$/m,
     'pools line');
($c, $o, $e) = run_gp('rl', @job, '--rollout-gpus', 'auto');
is($c, 0, 'searched split exits 0');
like($o, qr/rollout \d \+ training \d GPUs/, 'the search names its split');

($c, $o, $e) = run_gp('rl', @job, '--format', 'json');
is($c, 0, 'json exits 0');
like($o, qr/"step_s":/, 'json has the step');
like($o, qr/"phases":\[/, 'json has the phases');

($c, $o, $e) = run_gp('rl', @job, '--format', 'csv');
is($c, 0, 'csv exits 0');
like($o, qr/^phase,pool,GPUs,seconds,share,idle \(s\),memory GiB/m, 'csv header');

# Errors: usage (2) and job errors (1), each naming the input.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b');
is($c, 2, 'missing --gpu is a usage error');
($c, $o, $e) = run_gp('rl', @job, '--rollout-gpus', 'half');
is($c, 2, '--rollout-gpus must be a number or auto');
like($e, qr/--rollout-gpus expects a number of GPUs or 'auto'/, 'and says so');
($c, $o, $e) = run_gp('rl', @job, '--algo', 'dpo');
is($c, 1, 'an unknown algo exits 1');
like($e, qr/^gpuplan: rl: algo must be grpo or ppo/m, 'names the option');
unlike($e, qr/\.lua:\d+/, 'no internal file:line in the message');
($c, $o, $e) = run_gp('rl', @job, '--tokens', '1e9');
is($c, 2, '--tokens is not an RL option');
($c, $o, $e) = run_gp('rl', @job, '--global-batch', '100');
is($c, 1, 'a mini-batch that does not divide the samples exits 1');
like($e, qr/not a whole number of mini-batches of 100/, 'and says why');

done_testing();
