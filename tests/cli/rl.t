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
like($o, qr/^qwen2\.5-7b GRPO on 8 x h100-sxm, colocated \(train tp 1, pp 1, dp 8, cp 1, zero 3; rollout tp 1, 8 engines\): 64 prompts x 8 = 512 samples, prompt 512 \+ response 2048 \(exp, max 8192, 1% cut there\)$/m,
     'title names the job, the placement and the lengths');
like($o, qr/^phase\s+pool\s+GPUs\s+seconds\s+share\s+idle \(s\)\s+memory GiB\s+80% range$/m, 'phase table header');
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
# No "*" after a range: the validated RL cases that train on this job's
# stack, hf (verl's FSDP runs: the one-step-off recipe with Ulysses and
# play-verl's four GRPO/PPO runs, all sharded dense), are a regime of their
# own, so the range is theirs; an AMD job's below is new in two ways.
like($o, qr/^throughput: [\d.]+ samples\/s \([\d.]+-[\d.]+\), \d+ tokens\/s \(\d+-\d+\), \d+ per GPU, \d+ generated tokens\/s$/m, 'throughput line');
like($o, qr/^memory: peak [\d.]+ GiB of 79\.1 GiB per GPU; fits: yes$/m, 'memory verdict');
my ($cs, $ck) = $o =~ /^cost: ([\d.]+) USD \([\d.]+-[\d.]+\) per step, ([\d.]+) USD \([\d.]+-[\d.]+\) per 1k prompts at 2\.00 USD\/GPU-h$/m;
ok(defined $cs, 'cost line');
# step x 8 GPUs x $2 / 3600; per 1k prompts x 1000 / 64 (printed roundings).
ok(abs($cs - $sec{step} * 8 * 2 / 3600) <= 0.001, 'cost per step = step x GPUs x price');
ok(abs($ck - $cs * 1000 / 64) <= 0.02, 'cost per 1k prompts = cost per step x 1000 / 64');
like($o, qr/^run: 500 steps in [\d.]+ hours \([\d.]+-[\d.]+\) on 8 GPUs; cost \d+ USD \(\d+-\d+\)$/m, 'run line');
like($o, qr/^ranges: where 80% of published runs like this landed \(\d+ cases: vendor=NVIDIA\/stack=hf\/moe=dense\/style=sharded\)$/m,
     'an hf-stack RL job: the hf RL cases\' range');
# No RL case runs on AMD's CDNA3 either (the OpenRLHF cases put Ampere
# among the measured): said so, a "*" after each range.  The MI300X has no
# catalog system, so the job names its NICs.
my @cdna = ((map { $_ eq 'h100-sxm' ? 'mi300x' : $_ } @job),
            '--nics', '8', '--nic-fabric', 'ib-ndr-400');
($c, $o, $e) = run_gp('rl', @cdna, '--price', '$2.00/h', '--steps', '500');
is($c, 0, 'a CDNA3 job exits 0');
like($o, qr/^throughput: [\d.]+ samples\/s \([\d.]+-[\d.]+\)\*, \d+ tokens\/s \(\d+-\d+\)\*, \d+ per GPU/m,
     'its ranges marked "*"');
like($o, qr/^run: 500 steps in [\d.]+ hours \([\d.]+-[\d.]+\)\* on 8 GPUs; cost \d+ USD \(\d+-\d+\)\*$/m,
     'its run line too');
like($o, qr/^ranges: \*no published run like this \(no validated rl case has vendor AMD, gen cdna3\): the 80% range of all \d+ rl cases$/m,
     'an RL card generation never measured: said plainly');

# The same job on one MI300X node without naming NICs: its 8 GPUs fit
# the node, so the ZeRO-3 weight sync's all-gather stays on the
# node's links.  (The sync once sized its topology two nodes past the
# job's, which a node without NICs cannot have: "rl: 3 nodes need
# --nics > 0 to talk".)
my @cdna1 = map { $_ eq 'h100-sxm' ? 'mi300x' : $_ } @job;
($c, $o, $e) = run_gp('rl', @cdna1);
is($c, 0, 'a one-node ZeRO-3 job on a card with no catalog system exits 0') or diag($e);
like($o, qr/^step\s+8\s+[\d.]+\s+100\.0%/m, 'and prints its step');
unlike($e, qr/nodes need/, 'no phantom nodes');

($c, $o, $e) = run_gp('rl', @job, '--rollout-gpus', '4');
is($c, 0, 'separate pools exit 0');
like($o, qr/rollout 4 \+ training 4 GPUs, staleness 1/, 'title names the split');
like($o, qr/^pools: rollout 4 GPUs busy [\d.]+ s, idle [\d.]+ s \([\d.]+%\); training 4 GPUs busy [\d.]+ s, idle [\d.]+ s \([\d.]+%\)$/m,
     'pools line');
# Eight steps ahead with refits that wait for the engines: the title says
# so; with the pools waiting for each other (staleness 0) no generation is
# pending at a refit, and the flag is refused.
($c, $o, $e) = run_gp('rl', @job, '--rollout-gpus', '4', '--staleness', '8', '--refit-drain');
is($c, 0, 'refit_drain exits 0') or diag $e;
like($o, qr/staleness 8 \(each refit draining the engines\)/, 'title names the draining refits');
($c, $o, $e) = run_gp('rl', @job, '--rollout-gpus', '4', '--staleness', '0', '--refit-drain');
isnt($c, 0, 'refit_drain at staleness 0 refused');
like($e, qr/--refit-drain applies to separate pools at --staleness >= 1 \(got --staleness 0\)/,
     'naming the flag and the staleness');
($c, $o, $e) = run_gp('rl', @job, '--rollout-gpus', 'auto');
is($c, 0, 'searched split exits 0');
like($o, qr/rollout \d \+ training \d GPUs/, 'the search names its split');

($c, $o, $e) = run_gp('rl', @job, '--format', 'json');
is($c, 0, 'json exits 0');
like($o, qr/"step_s":/, 'json has the step');
like($o, qr/"phases":\[/, 'json has the phases');

($c, $o, $e) = run_gp('rl', @job, '--format', 'csv');
is($c, 0, 'csv exits 0');
like($o, qr/^phase,pool,gpus,seconds,share,idle,mem_gib/m, 'csv header: the keys');

# Errors: usage (2) and job errors (1), each naming the input.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b');
is($c, 2, 'missing --gpu is a usage error');
($c, $o, $e) = run_gp('rl', @job, '--rollout-gpus', 'half');
is($c, 2, '--rollout-gpus must be a number or auto');
like($e, qr/--rollout-gpus expects a number of GPUs or 'auto'/, 'and says so');
($c, $o, $e) = run_gp('rl', @job, '--algo', 'dpo');
is($c, 2, 'an unknown algo: a usage error, exit 2');
like($e, qr/^gpuplan: rl: --algo must be grpo or ppo/m, 'names the option');
unlike($e, qr/\.lua:\d+/, 'no internal file:line in the message');
($c, $o, $e) = run_gp('rl', @job, '--tokens', '1e9');
is($c, 2, '--tokens is not an RL option');
($c, $o, $e) = run_gp('rl', @job, '--global-batch', '100');
is($c, 2, 'a mini-batch that does not divide the samples: a usage error, exit 2');
like($e, qr/not a whole number of mini-batches of 100/, 'and says why');

# scripts/grpo.lua: the conclusion follows from its table.
($c, $o, $e) = run_gp('run', 'scripts/grpo.lua');
is($c, 0, 'grpo.lua runs');
my (@g, %cell);
for my $l (split /\n/, $o) {
    next unless $l =~ /^(qwen\S+)\s+(8k|32k)\s+(\S+)\s+(colocated|disaggregated)\s+(tp\d cp\d(?: \(\d+\+\d+\))?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+yes\s*$/;
    my %r = (model => $1, resp => $2, gpu => $3, pl => $4, step => $6, roll => $7, usd => $10);
    push @g, \%r;
    $cell{"$1 $2 $3 $4"} = \%r;
}
ok(@g >= 20, 'grpo.lua: most of the 24 jobs fit') or diag($o);
for my $m ('qwen2.5-7b', 'qwen2.5-32b') {
    for my $resp ('8k', '32k') {
        my @j = grep { $_->{model} eq $m && $_->{resp} eq $resp } @g;
        my ($cheap) = sort { $a->{usd} <=> $b->{usd} } @j;
        my ($fast) = sort { $a->{step} <=> $b->{step} } @j;
        like($o, qr/^  \Q$m\E, $resp responses: cheapest \Q$cheap->{gpu}\E $cheap->{pl} \(\Q$cheap->{usd}\E USD per 1k prompts\); fastest \Q$fast->{gpu}\E $fast->{pl} \(\Q$fast->{step}\E s a step\)\.$/m,
             "grpo.lua: $m $resp -- cheapest and fastest as the table says");
    }
}
my ($wins, $total, $lw, $lt) = (0, 0, 0, 0);
for my $k (keys %cell) {
    next unless $k =~ /^(\S+ (\S+) \S+) colocated$/;
    my ($a, $b) = ($cell{$k}, $cell{"$1 disaggregated"});
    next unless $b;
    $total++;
    $wins++ if $b->{step} < $a->{step};
    if ($2 eq '32k') { $lt++; $lw++ if $b->{step} < $a->{step} }
}
like($o, qr/^  Separate pools beat one colocated pool in $wins of $total jobs where both fit \($lw of $lt with 32k responses\)\.$/m,
     'grpo.lua: the placement count follows from the table');
my @sh = sort { $a <=> $b } map { $_->{roll} / $_->{step} } grep { $_->{pl} eq 'colocated' } @g;
my ($lo, $hi) = $o =~ /^  The rollout is (\d+)-(\d+)% of a colocated step/m;
# Shares from the printed 0.1 s columns: within a point of the printed range.
ok(defined $lo && abs($lo - 100 * $sh[0]) <= 1 && abs($hi - 100 * $sh[-1]) <= 1,
   'grpo.lua: the rollout share range follows from the table');

# Its k-steps-ahead table: the conclusion's figures are the table's rows
# (1, 8 in flight, 8 draining), the saving 1 - step8 / step1, and steps
# ahead never slower.
my %ah;
for my $l (split /\n/, $o) {
    next unless $l =~ /^\s+(\d+)\s+(in flight|drain)\s+tp\d cp\d \(\d+\+\d+\)\s+([\d.]+)\s/;
    $ah{"$1 $2"} = $3;
}
ok($ah{'1 in flight'} && $ah{'8 in flight'} && $ah{'8 drain'}, 'grpo.lua: the steps-ahead rows');
ok($ah{'2 in flight'} <= $ah{'1 in flight'} && $ah{'4 in flight'} <= $ah{'2 in flight'}
   && $ah{'8 in flight'} <= $ah{'4 in flight'}, 'grpo.lua: more steps ahead is never slower');
my $save = sprintf('%.0f', 100 * (1 - $ah{'8 in flight'} / $ah{'1 in flight'}));
like($o, qr/^  Eight steps ahead the 7B's 32k-response step takes \Q$ah{'8 in flight'}\E s against \Q$ah{'1 in flight'}\E s one step ahead \((\d+)% less\); with refits that drain the engines it stays at \Q$ah{'8 drain'}\E s\.$/m,
     'grpo.lua: the steps-ahead conclusion follows from its table');
my ($said) = $o =~ /one step ahead \((\d+)% less\)/;
ok(defined $said && abs($said - $save) <= 1, 'grpo.lua: the saving from the printed steps');

# Samples that no data-parallel split divides: without --global-batch the
# error names the samples, not a --global-batch the user never gave.
# (PPO: GRPO refuses a group of one.)
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--prompts', '1', '--group', '1',
                      '--algo', 'ppo');
is($c, 2, 'rl --prompts 1 --group 1 on dp 8: a usage error, exit 2');
like($e, qr/^gpuplan: rl: the 1 samples \(prompts x group\) must be a multiple of dp x batch = 8 x 1$/m,
     'names the samples, no --global-batch');
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--prompts', '8', '--group', '1',
                      '--algo', 'ppo', '--global-batch', '4');
like($e, qr/^gpuplan: rl: --global-batch 4 and the 8 samples must be multiples of dp x batch = 8 x 1$/m,
     'a --global-batch given is named');

# A job gp.rl refuses in every layout (no prompts; 3 GPUs that split no
# 1024 samples) is its message, one line: the script indexed the missing
# result and died with a traceback of its own line 70.
for my $x (['--prompts', '0', qr/^gpuplan: grpo: qwen2\.5-7b on 32 x h100-sxm: rl: prompts must be a whole number 1\.\.16777216 \(got 0\)$/],
           ['--gpus', '3', qr/^gpuplan: grpo: qwen2\.5-7b on 3 x h100-sxm: rl: the 1024 samples \(prompts x group\) must be a multiple of dp x batch = 3 x 1$/]) {
    my ($cx, undef, $ex) = run_gp('run', 'scripts/grpo.lua', $x->[0], $x->[1]);
    is($cx, 1, "grpo.lua $x->[0] $x->[1]: exit 1");
    like($ex, $x->[2], "grpo.lua $x->[0] $x->[1]: gp.rl's reason");
    unlike($ex, qr/traceback/, "grpo.lua $x->[0] $x->[1]: no traceback");
}

# scripts/video_sft.lua: the conclusion follows from its table.
($c, $o, $e) = run_gp('run', 'scripts/video_sft.lua');
is($c, 0, 'video_sft.lua runs');
my (@v);
for my $l (split /\n/, $o) {
    next unless $l =~ /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(tp\d cp(\d) pp\d(?: sp)?)\s+(selective|full|none)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)/;
    push @v, { seq => $1, frames => $2, gpu => $3, n => $4, layout => $5, cp => $6, rc => $7,
               days => $11, cost => $12 };
}
ok(@v >= 12, 'video_sft.lua: most runs fit') or diag($o);
for my $seq (32768, 65536) {
    my @j = grep { $_->{seq} == $seq } @v;
    my ($cheap) = sort { $a->{cost} <=> $b->{cost} } @j;
    my ($fast) = sort { $a->{days} <=> $b->{days} } @j;
    like($o, qr/^  $seq tokens: cheapest $cheap->{n} x \Q$cheap->{gpu}\E with \Q$cheap->{layout}\E \($cheap->{rc} recompute\), \Q$cheap->{days}\E days, $cheap->{cost} USD; fastest $fast->{n} x \Q$fast->{gpu}\E with \Q$fast->{layout}\E, \Q$fast->{days}\E days, $fast->{cost} USD\.$/m,
         "video_sft.lua: $seq tokens -- cheapest and fastest as the table says");
    my $ncp = grep { $_->{cp} > 1 } @j;
    my $n = @j;
    like($o, qr/^  At $seq tokens the best layout uses context parallelism in $ncp of $n fitting runs\.$/m,
         "video_sft.lua: the CP count at $seq follows from the table");
}
# 192 frames at 448 px: 96 units x 256 tokens = 24576 = 75% of 32768.
like($o, qr/^32768\s+192\s/m, 'video_sft.lua: 192 frames fill 75% of 32k');

# 24.3 / 19.9: a rollout that does not fit (70B on 8 H100s colocated) has no
# step: the verdict leads, and no step time, throughput or cost is printed.
($c, $o, $e) = run_gp('rl', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '8', '--steps', '10');
is($c, 0, 'a step that does not fit is an answer: exit 0');
like($o, qr/\Adoes not fit: training: needs [\d.]+ GiB per GPU.*; rollout: no room for the engines' KV cache/,
     'the verdict is the first line and names the rollout');
like($o, qr/^step\s+8\s+-\s+no rollout\s/m, 'the step row has no seconds');
unlike($o, qr/^(throughput|cost|run|rollout)\b[^\n]*:/m, 'no throughput, cost, run or rollout line');
($c, $o, $e) = run_gp('rl', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '8', '--format', 'json');
like($o, qr/\A\{.*"fits":false/s, 'json: fits false at the top level');
like($o, qr/"rollout_fits":false/, 'json: rollout_fits false');
# (at the top level: update and forward are training steps, each with its
# own step_s)
{
    require JSON::PP;
    my $j = JSON::PP::decode_json($o);
    my @present = grep { exists $j->{$_} } qw(step_s cost_step cost_1k_prompts samples_per_s);
    is("@present", '', 'json: no step time, cost or throughput');
}
# csv: idle is the JSON's seconds (docs/output.md), so the rollout's and
# the step's cells are empty where text says "does not fit" and "no
# rollout"; fits and rollout_fits say why.
($c, $o, $e) = run_gp('rl', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '8', '--format', 'csv');
{
    my @l = split /\n/, $o;
    my @h = split /,/, $l[0];
    my ($ii) = grep { $h[$_] eq 'idle' } 0 .. $#h;
    my ($ri) = grep { $h[$_] eq 'rollout_fits' } 0 .. $#h;
    ok(defined $ii && defined $ri, 'csv: idle and rollout_fits columns');
    my %row = map { my @f = split /,/, $_, -1; ($f[0] => \@f) } @l[1 .. $#l];
    is($row{rollout}[$ii], '', 'csv: the rollout row leaves idle empty (not "does not fit")');
    is($row{step}[$ii], '', 'csv: the step row leaves idle empty (not "no rollout")');
    is($row{rollout}[$ri], 'no', 'csv: rollout_fits says the rollout cannot run');
    unlike($o, qr/does not fit|no rollout/, 'csv: no words in a numeric column');
}
# Training that does not fit beside a rollout that runs (separate pools):
# every figure is labelled as what it would be if it fit.
($c, $o, $e) = run_gp('rl', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '16', '--zero', '3',
                      '--rollout-tp', '8', '--recompute', 'full', '--no-colocated', '--steps', '10');
like($o, qr/\Adoes not fit: training: .*what it would take if it fit\n/, 'the verdict leads');
like($o, qr/^throughput \(if it fit\): /m, 'throughput labelled');
like($o, qr/^cost \(if it fit\): /m, 'cost labelled');
like($o, qr/^run \(if it fit\): 10 steps/m, 'run labelled');

# An engine over two hosts (TP 16 on 16 H100s) charged its executor's
# cross-host round trip: the rollout line says what a step carries.
($c, $o, $e) = run_gp('rl', 'llama3.1-8b', '--gpu', 'h100-sxm', '--gpus', '16',
                      '--rollout-tp', '16', '--zero', '3', '--prompts', '64', '--group', '8',
                      '--prompt-len', '512', '--response-len', '2048',
                      '--engine-xhost-step', '0.00156');
is($c, 0, 'engine-xhost-step exits 0');
like($o, qr/the engine's host work [\d.]+ s, 1\.56 ms a step of it the executor's across hosts,/,
     'the rollout line names the cross-host round trip');
($c, $o, $e) = run_gp('rl', 'llama3.1-8b', '--gpu', 'h100-sxm', '--gpus', '16',
                      '--rollout-tp', '8', '--zero', '3', '--prompts', '64', '--group', '8',
                      '--prompt-len', '512', '--response-len', '2048',
                      '--engine-xhost-step', '0.00156');
unlike($o, qr/across hosts/, 'an engine within a host: not named');

# A colocated weight sync through a CUDA-IPC buffer (--ipc-transfer): a
# line says how many hand-offs it took; separate pools refuse it, naming
# the flag; a bad value is refused on one line.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
                      '--recompute', 'full', '--ipc-transfer', '0.14');
is($c, 0, 'ipc-transfer exits 0');
like($o, qr/^weight sync: [\d.]+ s, the model streamed through a CUDA-IPC buffer in \d+ hand-offs$/m,
     'the weight sync line counts the hand-offs');
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
                      '--recompute', 'full');
unlike($o, qr/^weight sync:/m, 'not given: no such line');
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
                      '--rollout-gpus', '4', '--ipc-transfer', '0.14');
isnt($c, 0, 'separate pools with --ipc-transfer: refused');
like($e, qr/^gpuplan: rl: --ipc-transfer is a colocated weight sync's/, 'naming the flag');
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8',
                      '--ipc-transfer', '-1');
isnt($c, 0, 'a negative hand-off time refused');
like($e, qr/^gpuplan: rl: --ipc-transfer must be seconds per hand-off, 0 to 60 \(got -1\)$/m,
     'one line naming the flag and the value');

# Each sampled token's log-probability returned (--logprob-host): host work
# per sequence per decode step, serial with the GPU, so the rollout row
# grows (by 64 samples an engine x ~2048 steps x 10 us ~ 1.3 s here; the
# Lua tests derive it exactly); a bad value is refused on one line.
my @lp = ('qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
          '--recompute', 'full', '--prompts', '64', '--group', '8',
          '--prompt-len', '512', '--response-len', '2048', '--format', 'csv');
my ($l0, $l1);
($c, $o, $e) = run_gp('rl', @lp);
($l0) = $o =~ /^rollout,[^,]*,\d+,([\d.]+),/m;
($c, $o, $e) = run_gp('rl', @lp, '--logprob-host', '1e-5');
is($c, 0, '--logprob-host exits 0');
($l1) = $o =~ /^rollout,[^,]*,\d+,([\d.]+),/m;
ok(defined $l0 && defined $l1 && $l1 - $l0 > 0.5 && $l1 - $l0 < 3,
   'the rollout longer by the log-probabilities\' host work');
($c, $o, $e) = run_gp('rl', @lp, '--logprob-host', '2');
isnt($c, 0, 'two seconds a sequence-step refused');
like($e, qr/^gpuplan: rl: --logprob-host must be seconds per sequence per decode step, 0 to 1 \(got 2\)$/m,
     'one line naming the flag and the value');
# An MoE actor's title names its expert grid: ep, and etp where the expert
# layers fold apart from attention's TP (Megatron-Core's parallel folding:
# TP2 CP2 with EP16 over 32 GPUs, dp = 32 / (2 x 2) = 8); an expert-parallel
# engine its ep (and DP attention). A dense job keeps the title above.
($c, $o, $e) = run_gp('rl', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '32', '--tp', '2',
                      '--cp', '2', '--ep', '16', '--etp', '1', '--sp', '--stack', 'megatron',
                      '--recompute', 'full', '--zero', '1');
is($c, 0, 'rl with a folded MoE actor exits 0') or diag $e;
like($o, qr/^qwen3-30b-a3b GRPO on 32 x h100-sxm, colocated \(train tp 2, pp 1, dp 8, cp 2, ep 16, etp 1, zero 1; rollout tp 2, 16 engines\):/m,
     'title: the actor\'s ep 16 and etp 1');
($c, $o, $e) = run_gp('rl', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '32', '--rollout-gpus', '16',
                      '--rollout-tp', '16', '--rollout-ep', '16', '--tp', '4', '--ep', '4');
# 16 rollout GPUs / (tp 16) = 1 engine: singular in the title and the
# rollout line (8 engines above stay plural). No --zero: the hf stack's
# RL default, verl's FSDP full_shard, zero 3 at dp 4.
like($o, qr/\(train tp 4, pp 1, dp 4, cp 1, ep 4, zero 3; rollout tp 16 ep 16, 1 engine\)/m,
     'title: ep 4 at etp = tp (not repeated), the engine\'s ep 16, "1 engine"');
like($o, qr/^rollout: 1 engine x 512 samples /m, 'rollout line: "1 engine", singular');
unlike($o, qr/\b1 engines\b/, 'no "1 engines" anywhere');
# The actor's sharding as asked: --fsdp shard_grad_op --grad-sync step
# prices as ZeRO 1 and the title says both (as train's does).
($c, $o, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16',
                      '--fsdp', 'shard_grad_op', '--grad-sync', 'step');
like($o, qr/\(train tp 1, pp 1, dp 16, cp 1, fsdp shard_grad_op, grad-sync step \(= zero 1\); rollout tp 1, 16 engines\)/m,
     'rl title: fsdp shard_grad_op, grad-sync step (= zero 1)');
# hybrid_shard's shard groups stay in the 8-GPU H100 nodes: the title says
# so as train's does (the result carries hsdp = 8).
($c, $o, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16',
                      '--fsdp', 'hybrid_shard');
like($o, qr/\(train tp 1, pp 1, dp 16, cp 1, fsdp hybrid_shard \(= zero 3 hybrid in 8-GPU nodes\); /m,
     'rl title: fsdp hybrid_shard names its 8-GPU node groups');
($c, $o, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '16', '--fsdp', 'hybrid_shard',
                      '--format', 'json');
like($o, qr/"hsdp":\s*8\b/, 'rl json: hsdp 8');
# OpenRLHF's vLLM engines of 2024, fed one actor rank's micro-batch a call
# (--generation-batch without --rollout-engine): static batches of 8 an
# engine.  256 prompts x group 8 over 4 engines are 512 each: 64 rounds of
# 256 decode steps (fixed 256-token responses) = 16384 steps.
($c, $o, $e) = run_gp('rl', 'llama2-7b', '--gpu', 'a100-sxm-80gb', '--gpus', '8', '--algo', 'ppo',
                      '--reward-model', 'llama2-7b', '--zero', '3', '--prompts', '256',
                      '--prompt-len', '256', '--response-len', '256', '--response-max', '256',
                      '--rollout-gpus', '4', '--staleness', '0', '--generation-batch', '8');
is($c, 0, 'vLLM engines with --generation-batch exit 0');
like($o, qr/^rollout: 4 engines x 512 samples \(static batches of 8, each run to its longest\), .* over 16384 steps \(mean batch 8\.0\)/m,
     'vLLM fed micro-batches: static batches of 8 an engine, 64 rounds of 256 steps');

# --no-rollout-custom-ar: the engine's in-host TP all-reduces run NCCL (verl's
# disable_custom_all_reduce=True), a longer rollout than vLLM's default.
my @j = ('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '1', '--rollout-tp', '8');
my ($c1, $o1) = run_gp(@j);
my ($c2, $o2) = run_gp(@j, '--no-rollout-custom-ar');
my ($r1) = $o1 =~ /^rollout\s+\S+\s+\d+\s+([\d.]+)/m;
my ($r2) = $o2 =~ /^rollout\s+\S+\s+\d+\s+([\d.]+)/m;
ok(defined $r1 && defined $r2 && $r2 > $r1, "--no-rollout-custom-ar: rollout $r2 s > $r1 s");

# --fused-grouped-mlp: the actor trains with gp.train's layer pricing, so
# the fused experts' MLP shortens its optimizer step; expert TP refused.
my @fm = ('rl', 'qwen3-30b-a3b', '--gpu', 'gb200', '--gpus', '8', '--ep', '8', '--stack',
          'megatron', '--precision', 'fp8', '--fp8-scaling', 'block', '--prompts', '64',
          '--zero', '1');
my ($cf0, $of0) = run_gp(@fm);
my ($cf1, $of1, $ef1) = run_gp(@fm, '--fused-grouped-mlp');
is($cf1, 0, 'rl --fused-grouped-mlp exits 0') or diag $ef1;
my ($u0) = $of0 =~ /1 optimizer step of ([\d.]+) s/;
my ($u1) = $of1 =~ /1 optimizer step of ([\d.]+) s/;
ok(defined $u0 && defined $u1 && $u1 < $u0, "--fused-grouped-mlp: optimizer step $u1 s < $u0 s");
my ($cf2, $of2, $ef2) = run_gp(@fm, '--fused-grouped-mlp', '--tp', '2');
is($cf2, 2, 'rl --fused-grouped-mlp --tp 2: a usage error, exit 2');
like($ef2, qr/^gpuplan: rl: --fused-grouped-mlp needs the experts unsplit/m, '... naming why');
# The rollout holds each prompt and its longest response in one sequence:
# `fit --method grpo` and `infer` refused a sequence past the model's
# context (Llama 3 8B: 8192 tokens), `rl` priced it (prompt 8000 +
# response 1000, or 100000-token prompts).
for my $x ([['--prompt-len', '8000', '--response-len', '1000'], 'response-len 1000'],
           [['--prompt-len', '8000'], 'response-len 1024'],
           [['--response-len', '1000', '--response-max', '9000'], 'response-max 9000']) {
    my ($a, $what) = @$x;
    my ($c, $o, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'lora', @$a);
    is($c, 1, "rl @$a: exit 1");
    my $p = $a->[0] eq '--prompt-len' ? $a->[1] : 512;
    like($e, qr/^gpuplan: rl: --prompt-len $p \+ --$what tokens exceed llama3-8b's context of 8192 tokens \(max_seq\); llama3\.1-8b of the same family and shape holds it \(context 131072\)$/m,
         "rl @$a: names both lengths and the context");
}
{
    my ($c, $o, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'lora',
                             '--prompt-len', '7168', '--response-len', '1024');
    is($c, 0, 'rl: 7168 + 1024 = 8192, the whole context: priced') or diag $e;
}

# --rollout-memory and --filter-keep: 0 was refused as "(0, 1]" while 1.5
# said "[0, 1]", a range that lets 0 in; their declarations now exclude 0
# (range gt), one message for both.  --step-overhead 1e9 was refused as
# "0 or more", which it is.
for my $o ('--rollout-memory', '--filter-keep') {
    for my $v ('0', '1.5') {
        my ($c, $out, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'lora', $o, $v);
        is($c, 1, "rl $o $v: exit 1");
        like($e, qr/^gpuplan: rl: $o must be a number in \(0, 1\] \(got $v\)$/m, "rl $o $v: one range, 0 excluded");
    }
}
{
    my ($c, $out, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'lora',
                               '--step-overhead', '1e9');
    like($e, qr/--step-overhead must be seconds per step, 0 to 1000000 \(got /m, '--step-overhead: its bound said');
}

done_testing();
