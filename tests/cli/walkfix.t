# What a buyer's walk found (docs of the walk: 8 H100 and 8 H200 quotes, an
# H20 cluster, GRPO 7B on H100 vs H20): the fixes, one block each.
use strict;
use warnings;
use Test::More;
use JSON::PP ();
use File::Temp ();
require './tests/cli/lib.pl';

my ($c, $o, $e);
sub json_of { my @a = @_; my ($c, $o, $e) = run_gp(@a, '--format', 'json');
              is($c, 0, "exit 0: @a") or diag $e; return JSON::PP::decode_json($o) }

# 9. rl defaulted to ZeRO 0 (DDP: 16 B a parameter on every GPU), which
# does not fit a 7B actor on 8 H100s, where every RL framework shards: the
# default is now the stack's framework's -- verl's FSDP full_shard on hf
# (zero 3), OpenRLHF's --ds.zero_stage 2 on deepspeed, the distributed
# optimizer (zero 1) on megatron -- said on the defaults line; 0 at dp 1.
{
    my $base = ['rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8'];
    ($c, $o, $e) = run_gp(@$base);
    is($c, 0, 'rl 7B on 8 H100s, no --zero: exit 0') or diag $e;
    like($o, qr/\(train tp 1, pp 1, dp 8, cp 1, zero 3;/, 'hf stack: zero 3 in the title');
    like($o, qr/^memory: .*fits: yes$/m, 'it fits now') or diag $o;
    like($o, qr/^defaults: .*zero=3 \(stack hf: verl's FSDP workers, full_shard, its default\)/m,
         'the defaults line says why');
    unlike($o, qr/^would fit/m, 'no hint: nothing to fix');
    # The default is the stage given: the same step, byte for byte (no
    # tolerance: the same engine path).
    my $d = json_of(@$base);
    my $z3 = json_of(@$base, '--zero', '3');
    is($d->{zero}, 3, 'json: zero 3');
    is($d->{peak_memory}, $z3->{peak_memory}, 'default peak = --zero 3 peak');
    is($d->{step_s}, $z3->{step_s}, 'default step = --zero 3 step');
    # Each stack's stage, and the same bytes as the stage given.
    for my $case (['deepspeed', 2, qr/zero=2 \((?:--)?stack deepspeed: OpenRLHF's --ds\.zero_stage default\)/],
                  ['megatron', 1, qr/zero=1 \((?:--)?stack megatron: verl's and NeMo RL's Megatron workers, use_distributed_optimizer true\)/]) {
        my ($st, $z, $why) = @$case;
        ($c, $o, $e) = run_gp(@$base, '--stack', $st);
        like($o, qr/^defaults: .*$why/m, "stack $st: zero $z said") or diag $o;
        my $a = json_of(@$base, '--stack', $st);
        my $b = json_of(@$base, '--stack', $st, '--zero', $z);
        is($a->{zero}, $z, "stack $st: zero $z");
        is($a->{peak_memory}, $b->{peak_memory}, "stack $st: peak as --zero $z");
    }
    # Hugging Face generate on the actor: OpenRLHF without vLLM, ZeRO 2
    # (its ZeRO-3 gather per decode step is not priced, and refused).
    ($c, $o, $e) = run_gp('rl', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                          '--rollout-engine', 'hf');
    is($c, 0, 'rollout engine hf without --zero: runs') or diag $e;
    like($o, qr/zero=2 \((?:--)?rollout[-_]engine hf: OpenRLHF without vLLM engines/, '... at zero 2');
    # One GPU: nothing to shard, zero 0 (no "shards nothing" warning).
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h200-sxm', '--gpus', '1');
    is($c, 0, 'one GPU: exit 0') or diag $e;
    like($o, qr/zero=0 \(one data-parallel rank: nothing to shard\)/, 'one GPU: zero 0, said');
    unlike($o, qr/shards nothing/, 'one GPU: no ZeRO warning');
    # A stage given that does not fit still names the one that does.
    ($c, $o, $e) = run_gp(@$base, '--zero', '0');
    like($o, qr/^would fit \(priced\): --zero 2 /m, '--zero 0: the hint names --zero 2');
    # fit --method grpo prices the same RL step's memory: the same default.
    ($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'grpo');
    like($o, qr/^defaults: zero=3 \((?:--)?stack hf: verl's FSDP workers/m, 'fit --method grpo: zero 3 too')
      or diag $o;
    # train keeps DDP's 0.
    ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'lora');
    like($o, qr/zero=0\b/, 'train: zero 0 as before');
}

# 5. rl --gpu h100-sxm,h20 said "unknown gpu 'h100-sxm,h20': one gpu here,
# not a list (plan and infer compare several)": both cards exist, and
# neither plan nor infer runs an RL step.  Now: rl takes one card, run it
# a card at a time or loop over gp.rl; the loop docs/rl.md shows runs.
{
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm,h20', '--gpus', '8');
    is($c, 2, 'rl with a card list: a usage error');
    like($e, qr/^gpuplan: rl: --gpu takes one card, not a list \(got 'h100-sxm,h20'\): run rl once per card \(--gpu h100-sxm \.\.\., then the next\) and compare their step, hours and cost, or loop over the cards in Lua with gp\.rl\{gpu = ID, \.\.\.\} \(docs\/rl\.md, "Comparing cards"\)\n/,
         'says rl takes one card and how to compare') or diag $e;
    unlike($e, qr/unknown gpu|plan and infer compare/, 'no "unknown gpu", no pointer to plan/infer');
    is($o, '', 'prints no table');
    # the docs' loop, as docs/rl.md shows it
    open(my $fh, '<', 'docs/rl.md') or die;
    my $doc = do { local $/; <$fh> };
    my ($lua) = $doc =~ /Comparing cards\..*?```lua\n(.*?)```/s;
    ok(defined $lua, 'docs/rl.md: the comparing-cards loop is there');
    my $f = File::Temp->new(SUFFIX => '.lua');
    print $f $lua; close $f;
    ($c, $o, $e) = run_gp('run', $f->filename);
    is($c, 0, 'the docs loop runs') or diag $e;
    my @lines = split /\n/, $o;
    is(scalar @lines, 3, 'one line a card');
    like($o, qr/^h100-sxm\s+fits\s+step\s+[\d.]+ s\s+[\d.]+ h\s+\d+ USD$/m, 'H100: a priced line');
    like($o, qr/^h20\s+fits\s+step\s+[\d.]+ s\s+[\d.]+ h\s+no price$/m, 'H20 in USD: no price');
    # a line a card equals that card's own rl run (the same call)
    my $one = json_of('rl', 'qwen2.5-7b', '--gpu', 'h20', '--gpus', '8', '--steps', '500');
    my ($s20) = $o =~ /^h20\s+fits\s+step\s+([\d.]+) s/m;
    is($s20, sprintf('%.1f', $one->{step_s}), 'the loop\'s H20 step = rl --gpu h20\'s');
    # gp.rl's own refusal, in Lua keys
    print {($f = File::Temp->new(SUFFIX => '.lua'))} 'print(select(2, pcall(require("gpuplan").rl, {model = "qwen2.5-7b", gpu = "h100-sxm,h20", gpus = 8})))';
    close $f;
    ($c, $o, $e) = run_gp('run', $f->filename);
    like($o, qr/rl: gpu takes one card, not a list \(got 'h100-sxm,h20'\): price each card in its own call/,
         'gp.rl: the same refusal in Lua words') or diag "$o$e";
}

# 3. A short job read "0.0056 days" in plan and train while rl and the
# guide said hours: one rule now (units.duration_unit), days from one day,
# hours from one hour, minutes below, the same function in every command.
{
    my $f = File::Temp->new(SUFFIX => '.lua');
    print $f <<'LUA';
local u = require("gpuplan").units
local function show(d) local k, n = u.duration_unit(d); return k .. " " .. n end
for _, d in ipairs { 0, 1, 30, 0.999, 1 / 24, 1 / 24 - 1e-9, 0.0056 } do print(show(d)) end
print(u.fmt_duration(0.0056), u.fmt_duration(0.1875), u.fmt_duration(26.3))
local ok, msg = pcall(u.fmt_duration, "1"); print(ok, (msg:match("units%..*")))
LUA
    close $f;
    ($c, $o, $e) = run_gp('run', $f->filename);
    is($c, 0, 'units script runs') or diag $e;
    # 0 and >= 1 day: days; [1 h, 1 day): x 24 hours; below 1 h: x 1440 minutes
    is($o, join("\n", '1 days', '1 days', '1 days', '24 hours', '24 hours', '1440 minutes',
                '1440 minutes',
                # 0.0056 x 1440 = 8.064 -> 8.1; 0.1875 x 24 = 4.5; 26.3 days
                "8.1 minutes\t4.5 hours\t26.3 days",
                "false\tunits.fmt_duration: days must be a number (got string '1')", ''),
       'duration_unit: the boundaries; fmt_duration: one decimal at least');
    # train: an 8-minute job in minutes, the JSON's days x 1440
    my @job = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'lora', '--tokens', '50M');
    my $j = json_of(@job);
    ($c, $o, $e) = run_gp(@job);
    my ($t) = $o =~ /^time to train 5e\+07 tokens: ([\d.]+) minutes \(/m;
    ok(defined $t, 'train: a job under an hour in minutes') or diag $o;
    # tolerance: shown to 0.1 minute
    ok(defined $t && abs($t - $j->{days} * 1440) <= 0.05 + 1e-9, "train: $t minutes = days x 1440");
    # plan --per-card: the same job's time cell and the winner's ranges in minutes
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm,h200-sxm', '--gpus', '8',
                          '--method', 'lora', '--tokens', '50M', '--per-card');
    like($o, qr/^card\s+GPUs\s+layout\s+step \(s\)\s+MFU\s+time\s+cost/m, 'per-card: a time column');
    like($o, qr/^h100-sxm\s+8\s+TP.*\s[\d.]+ minutes\s/m, 'per-card: its cell in minutes');
    unlike($o, qr/\b0\.0\d+ days\b|\bdays\s+0\.0/, 'no 0.00x days anywhere');
    like($o, qr/^ranges \(the winner\): step [\d.]+ s \([^)]*\), [\d.]+ minutes \([\d.]+-[\d.]+\), /m,
         'the winner\'s ranges: minutes too');
    # the plan table: the same cell
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                          '--method', 'lora', '--tokens', '50M', '--top', '1');
    like($o, qr/^gpu\s+GPUs\s+layout\s+step \(s\)\s+MFU\s+time\s+cost/m, 'plan: a time column');
    like($o, qr/^h100-sxm\s+8\s+TP.*\s[\d.]+ minutes \([\d.]+-[\d.]+\)\s/m, 'plan: minutes with its range');
    # ... and its CSV keeps the number of days (the JSON's key)
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8',
                          '--method', 'lora', '--tokens', '50M', '--top', '1', '--format', 'csv');
    like($o, qr/^gpu,gpus,layout,step_s,step_s_lo,step_s_hi,mfu,days,days_lo,days_hi,/m, 'plan csv: days columns');
    like($o, qr/^h100-sxm,8,[^,]+,[\d.]+,[\d.]+,[\d.]+,[\d.]+,0\.00\d+,/m, 'plan csv: a number of days');
    # rl: hours for 500 steps (4.5 h), days for 50000 (18.9 days) -- the same rule
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--steps', '500');
    like($o, qr/^run: 500 steps in [\d.]+ hours \([\d.]+-[\d.]+\) on 8 GPUs/m, 'rl: hours under a day');
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--steps', '50000');
    like($o, qr/^run: 50000 steps in [\d.]+ days \([\d.]+-[\d.]+\) on 8 GPUs/m, 'rl: days past a day');
}

# 6. plan --tokens without --policy ranked by speed: the largest count
# searched won every time (64 GPUs for a 50M-token LoRA).  Now a run of
# --tokens ranks by its cost, said on the defaults line; --policy fastest
# keeps the old ranking; no --tokens, or a --budget: fastest, said too.
{
    my @job = ('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8..64', '--method', 'lora',
               '--tokens', '50M', '--top', '1');
    ($c, $o, $e) = run_gp(@job);
    is($c, 0, 'plan --tokens: exit 0') or diag $e;
    like($o, qr/^llama3-8b: best layouts by cheapest$/m, 'ranked by cheapest');
    like($o, qr/^defaults: .*policy=cheapest \(--tokens: the run's cost at each card's price; --policy fastest for the shortest run, --deadline to bound it\)/m,
         'the defaults line says why');
    # plan's JSON: lines, the plan's first, then its results in rank order
    my $lines = sub { my ($c, $o, $e) = run_gp(@_, '--format', 'json');
                      [map { JSON::PP::decode_json($_) } grep { /\S/ } split /\n/, $o] };
    my $cheap = $lines->(@job);
    my $fast = $lines->(@job, '--policy', 'fastest');
    is($cheap->[0]{policy}, 'cheapest', 'json: policy cheapest');
    my ($bc) = grep { ($_->{kind} // '') eq 'result' } @$cheap;
    my ($bf) = grep { ($_->{kind} // '') eq 'result' } @$fast;
    ok($bc && $bf && $bc->{cost} <= $bf->{cost}, "the cheapest's cost $bc->{cost} <= the fastest's $bf->{cost}");
    cmp_ok($bf->{gpus}, '==', 64, 'fastest: the largest count (the finding)');
    cmp_ok($bc->{gpus}, '<', 64, "cheapest: fewer GPUs ($bc->{gpus})");
    ($c, $o, $e) = run_gp(@job, '--policy', 'fastest');
    unlike($o, qr/policy=/, '--policy given: nothing said');
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--method', 'lora', '--top', '1');
    like($o, qr/^llama3-8b: best layouts by fastest$/m, 'no --tokens: fastest');
    like($o, qr/policy=fastest \(no --tokens: no run to cost, the fastest step\)/, '... said');
    ($c, $o, $e) = run_gp(@job, '--budget', '100');
    like($o, qr/policy=fastest \(--budget: the fastest run within it\)/, '--budget: fastest within it, said');
}

done_testing();
