# What a thirteenth new-user walk (an ML engineer planning a QLoRA 70B on
# 4090s / L40S, GRPO of a 7B on 8 H20, DeepSeek-V3 and Qwen3-235B serving
# on H200 / B200 at a latency bound, a 13B pre-training on 256 H800 within
# a budget, and a Lua script that sweeps them into CSV) found: a number
# read as something else and priced without a word.  One block a fix, the
# command line and the Lua key both.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);
my $tmp = File::Temp::tempdir(CLEANUP => 1);

# 1. infer --memory above the card: --memory 1TB on a b200 (180 GiB)
# priced a KV budget of 839 GB per GPU and the tokens/s of it; a 4090
# with --memory 80GB "had 72 GB after the margin".  The runtime allocates
# on the card: more than the card's memory is out of range (exit 1),
# named with the card and its size; up to the card's memory stands.
{
    ($c, $o, $e) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'b200', '--gpus', '8', '--tp', '8', '--memory', '1TB');
    is($c, 1, 'infer --memory 1TB on a b200: out of range, exit 1');
    is($e, "gpuplan: infer: --memory '1TB' is more than b200's 180GiB, the card's memory (the runtime allocates on the card: at most that)\n",
       'names the option, the text typed, the card and its memory');
    is($o, '', '... and prints no table');
    ($c, $o, $e) = run_gp('infer', 'llama3-70b', '--gpu', 'rtx-4090', '--memory', '80GB');
    is($c, 1, 'a 24GiB rtx-4090 with --memory 80GB: exit 1');
    like($e, qr/--memory '80GB' is more than rtx-4090's 24GiB/, '... the card named');
    ($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--target', '20000', '--memory', '200GB');
    is($c, 1, 'the --target search reads the same bound: exit 1');
    # the card's whole memory stands: an 80GiB h100-sxm with --memory
    # 80GiB (85899345920 B) against its default, the catalog's
    # usable_memory 84932978278 B: the KV budget gains the difference
    # less the 10% margin, 0.9 x 966367642 = 869730877.8 B (weights,
    # workspace and reserve alike in both); 2 B for the JSON's integers
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--memory', '80GiB', '--format', 'json');
    is($c, 0, '--memory 80GiB on an 80GiB card: exit 0') or diag $e;
    my ($kv) = $o =~ /"kv_budget":([0-9]+)/;
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--format', 'json');
    my ($kv0) = $o =~ /"kv_budget":([0-9]+)/;
    ok(abs(($kv - $kv0) - 0.9 * (85899345920 - 84932978278)) <= 2,
       "... the KV budget gains 0.9 x (80GiB - usable_memory): " . ($kv - $kv0));
    # Lua: the same check, the key named
    my $f = "$tmp/mem.lua";
    write_file($f, <<'LUA');
local gp = require "gpuplan"
local ok, e = pcall(gp.infer, { model = "llama3-8b", gpu = "h100-sxm", memory = "1TB" })
print(ok, e)
ok, e = pcall(gp.infer, { model = "llama3-8b", gpu = "h100-sxm", memory = 1e12 })
print(ok, e)
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 0, 'Lua: the refusals caught') or diag $e;
    like($o, qr/^false\t\S*mem\.lua:2: infer: memory '1TB' is more than h100-sxm's 80GiB, the card's memory/m, 'memory = "1TB": refused, the key and the script line named');
    like($o, qr/^false\t\S*mem\.lua:4: infer: memory 1000GB \(931\.323GiB\) is more than h100-sxm's 80GiB/m, 'memory = 1e12 (bytes): refused');
}

# 2. Lua itl_max / ttft_max as bare numbers: the command line's --itl-max
# 50 is milliseconds, but gp.infer_plan{itl_max = 50} read 50 seconds and
# planned 40 GPUs at 75 ms ITL for deepseek-v3 on h200-sxm (20k tok/s),
# where itl_max = "50ms" plans 56 at 49 ms: a script copied from the
# command line got a plan that misses its bound, no word said.  A bare
# number of a second or more is refused, naming both readings; seconds
# under 1 and a time with its unit stand.
{
    my $f = "$tmp/itl.lua";
    write_file($f, <<'LUA');
local gp = require "gpuplan"
local base = { model = "deepseek-v3", gpu = "h200-sxm", target = 20000, input = 2000, output = 500 }
local function with(k, v) local t = {} for a, b in pairs(base) do t[a] = b end t[k] = v return t end
for _, v in ipairs { 50, 2000, 1 } do
  local ok, e = pcall(gp.infer_plan, with("itl_max", v))
  print("itl", v, ok, ok and "" or e)
end
local ok, e = pcall(gp.infer_plan, with("ttft_max", 2))
print("ttft", 2, ok, ok and "" or e)
local a = gp.infer_plan(with("itl_max", "50ms"))
local b = gp.infer_plan(with("itl_max", 0.05))
local s = gp.infer_plan(with("ttft_max", "2s"))
print("same", a.gpus == b.gpus and a.itl_s == b.itl_s, a.itl_s <= 0.05, s.ttft_s <= 2)
-- gp.infer's MoE serving model reads the same rule
ok, e = pcall(gp.infer, { model = "deepseek-v3", gpu = "h200-sxm", gpus = 16, ep = 16, dp_attention = true, itl_max = 50 })
print("infer", ok, ok and "" or e)
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 0, 'Lua: the refusals caught') or diag $e;
    like($o, qr/^itl\t50\tfalse\t\S*itl\.lua:5: \S+: itl_max = 50: a bare number is seconds here, where the command line's --itl-max reads milliseconds; from a second up write the unit: "50ms" or "50s"$/m,
         'itl_max = 50: refused, both readings offered');
    like($o, qr/^itl\t2000\tfalse\t.*itl_max = 2000: a bare number is seconds/m, 'itl_max = 2000: refused');
    like($o, qr/^itl\t1\tfalse\t.*itl_max = 1: a bare number is seconds/m, 'itl_max = 1 (the edge): refused');
    like($o, qr/^ttft\t2\tfalse\t.*ttft_max = 2: a bare number is seconds here, where the command line's --ttft-max reads milliseconds; from a second up write the unit: "2ms" or "2s"$/m,
         'ttft_max = 2: refused alike');
    like($o, qr/^same\ttrue\ttrue\ttrue$/m, 'itl_max "50ms" and 0.05 plan the same, within 50 ms; ttft_max "2s" within 2 s');
    like($o, qr/^infer\tfalse\t.*itl_max = 50: a bare number is seconds/m, 'gp.infer (MoE serving) refuses it too');
    # the command line: bare milliseconds, unchanged
    ($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--target', '20000', '--itl-max', '50', '--input', '2000', '--output', '500', '--format', 'csv');
    is($c, 0, 'infer --itl-max 50 (ms): exit 0') or diag $e;
    my ($c2, $o2) = run_gp('infer', 'deepseek-v3', '--gpu', 'h200-sxm', '--target', '20000', '--itl-max', '0.05s', '--input', '2000', '--output', '500', '--format', 'csv');
    is($o2, $o, '--itl-max 50 is --itl-max 0.05s, row for row');
}

# 3. Exit codes by docs/output.md's rule: a name that is none of the
# option's values, and options that do not go together whatever the model
# and card, are usage errors (exit 2).  rl --response-dist normal exited 1
# where --algo dpo exits 2; infer --gpus 7 --tp 8 exited 1 where fit,
# train and rl refuse --gpus 7 --tp 2 with 2; rl's rollout engines that do
# not divide the pool exited 1 where its training pool's 'is not a
# multiple of tp*pp*cp' exits 2.  The messages stay as they were.
{
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h20', '--gpus', '8', '--response-dist', 'normal');
    is($c, 2, 'rl --response-dist normal: exit 2');
    like($e, qr/^gpuplan: rl: --response-dist must be fixed, uniform or exp \(got 'normal'\)$/m, '... the values named');
    ($c, $o, $e) = run_gp('fit', 'qwen2.5-7b', '--gpu', 'h20', '--gpus', '8', '--method', 'grpo', '--response-dist', 'normal');
    is($c, 2, 'fit --method grpo --response-dist normal: exit 2');
    ($c, $o, $e) = run_gp('infer', 'qwen3-235b-a22b', '--gpu', 'b200', '--gpus', '7', '--tp', '8');
    is($c, 2, 'infer --gpus 7 --tp 8: exit 2');
    like($e, qr/^gpuplan: infer: --gpus 7 is not a multiple of tp\*pp = 8$/m, '... named by its flags');
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '6', '--tp', '2', '--pp', '2');
    is($c, 2, 'infer --gpus 6 --tp 2 --pp 2: exit 2');
    ($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tp', '2', '--pp', '2');
    is($c, 0, '... 8 of them divide: exit 0') or diag $e;
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h20', '--gpus', '8', '--rollout-tp', '3');
    is($c, 2, 'rl --rollout-tp 3 on 8 colocated GPUs: exit 2');
    like($e, qr/^gpuplan: rl: the rollout engine's 3 GPUs \(--rollout-tp 3\) do not divide --gpus 8 \(the colocated pools\)$/m, '... the message as before');
}

# 4. A fixed-length rollout (rl's default without --response-max) said
# "tail 0.00 s after 90% of the samples finished ... decode step 13.1 ms
# at the start, 6.3 ms in the tail": the tail step was priced at batch 1,
# a step that never runs when every response is 1024 tokens -- all 64 of
# an engine run the last step together.  Now that step is priced at the
# whole batch and said "at the end"; lengths that spread keep the longest
# alone "in the tail".
{
    my @rl = ('rl', 'qwen2.5-7b', '--gpu', 'h20', '--gpus', '8', '--zero', '3', '--market', 'cn');
    ($c, $o, $e) = run_gp(@rl);
    is($c, 0, 'rl fixed lengths: exit 0') or diag $e;
    my ($first, $last) = $o =~ /decode step ([0-9.]+) ms at the start, ([0-9.]+) ms at the end;/;
    ok(defined $last, 'fixed lengths: the last step said "at the end"') or diag $o;
    # the same 64 sequences a step, the last with 1023 more tokens of
    # context each: no faster than the first
    ok($last >= $first, "... the whole batch with the longest context: $last ms >= $first ms");
    ($c, $o, $e) = run_gp(@rl, '--response-max', '4096');
    my ($f2, $l2) = $o =~ /decode step ([0-9.]+) ms at the start, ([0-9.]+) ms in the tail;/;
    ok(defined $l2 && $l2 < $f2, "exp lengths: the longest alone in the tail, shorter than the full first step ($l2 < $f2 ms)") or diag $o;
    # Lua: the same numbers (itl_first and itl_last of the busiest engine)
    my $f = "$tmp/rl.lua";
    write_file($f, <<'LUA');
local gp = require "gpuplan"
local r = gp.rl { model = "qwen2.5-7b", gpu = "h20", gpus = 8, zero = 3, market = "cn" }
print(string.format("%.1f %.1f", r.rollout.itl_first * 1e3, r.rollout.itl_last * 1e3))
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($o, "$first $last\n", 'Lua: itl_first and itl_last as the command line prints them');
}

# 5. docs/lua.md gave a Lua key on by default the help of its --no- flag,
# which reads inverted for the key: "`colocated` | boolean | on |
# separate rollout and training pools" told a script that colocated =
# true separates them (it colocates: gp.rl{colocated = false} splits).
# The row now says the help is what false does, naming the flag where the
# command line has one.
{
    open(my $fh, '<', 'docs/lua.md') or die "docs/lua.md: $!";
    my $md = do { local $/; <$fh> };
    close $fh;
    like($md, qr/^\| `colocated` \| boolean \| on \| false \(--no-colocated\): separate rollout and training pools \|$/m,
         'colocated: the help is what false does');
    like($md, qr/^\| `ref_model` \| boolean \| on \| false \(--no-ref-model\): drop the KL reference model \|$/m, 'ref_model alike');
    like($md, qr/^\| `flash` \| boolean \| on \| false \(--no-flash\): unfused attention/m, 'flash alike');
    my $f = "$tmp/coloc.lua";
    write_file($f, <<'LUA');
local gp = require "gpuplan"
local b = { model = "qwen2.5-7b", gpu = "h20", gpus = 8, zero = 3, market = "cn" }
local on = gp.rl(b)
b.colocated = false
local off = gp.rl(b)
print(on.rollout_gpus, off.rollout_gpus)
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($o, "8\t4\n", 'colocated (the default) shares all 8 GPUs; false splits them, 4 rolling out') or diag $e;
}

# 6. gp.train and gp.train_job called without a table said Lua's own
# "attempt to index a nil value (local 'o')" (a number alike), where
# gp.memory, gp.sweep and gp.rl say "expected a table of options".
{
    my $f = "$tmp/notable.lua";
    write_file($f, <<'LUA');
local gp = require "gpuplan"
for _, n in ipairs { "train", "train_job" } do
  for _, v in ipairs { "nil", 5 } do
    local ok, e = pcall(gp[n], v ~= "nil" and v or nil)
    print(n, tostring(v), ok, e)
  end
end
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 0, 'the refusals caught') or diag $e;
    my $n = () = $o =~ /^train(?:_job)?\t(?:nil|5)\tfalse\t\S*notable\.lua:4: train\{\.\.\.\}: expected a table of options$/mg;
    is($n, 4, 'gp.train(nil), gp.train(5), gp.train_job(nil), gp.train_job(5): each says it wants a table') or diag $o;
    unlike($o, qr/attempt to index/, 'none says Lua\'s own words');
}

# 7. --currency usd was refused ("no exchange rate in the catalog (CNY,
# USD)") where a budget's "500kcny" is read as CNY, and --market CN found
# no price (the regions are lower case).  ISO 4217 codes in either case,
# regions likewise: the same answer as CNY and cn, on every command, the
# guide's own check and the Lua keys.
{
    for my $cmd (['train', 'llama3-8b', '--gpu', 'h800-sxm', '--gpus', '8', '--tokens', '1B'],
                 ['plan', 'llama2-13b', '--gpu', 'h800-sxm', '--gpus', '256', '--method', 'pretrain', '--tokens', '1T', '--top', '1'],
                 ['infer', 'qwen3-235b-a22b', '--gpu', 'h20', '--gpus', '8', '--tp', '8'],
                 ['guide']) {
        my ($c1, $o1, $e1) = run_gp(@$cmd, '--currency', 'cny', '--market', 'CN');
        my ($c2, $o2, $e2) = run_gp(@$cmd, '--currency', 'CNY', '--market', 'cn');
        is($c1, 0, "$cmd->[0] --currency cny --market CN: exit 0") or diag $e1;
        is($o1, $o2, "... the answer of --currency CNY --market cn");
    }
    like(scalar((run_gp('train', 'llama3-8b', '--gpu', 'h800-sxm', '--gpus', '8', '--tokens', '1B', '--currency', 'cny', '--market', 'cn'))[1]),
         qr/ CNY \(/, 'the costs in CNY');
    ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h800-sxm', '--gpus', '8', '--currency', 'eur');
    is($c, 1, 'a code the catalog has no rate for: still refused, exit 1');
    like($e, qr/currency 'eur'.*no exchange rate in the catalog \(CNY, USD\)/, '... named as given');
    my $f = "$tmp/cur.lua";
    write_file($f, <<'LUA');
local gp = require "gpuplan"
local a = gp.train { model = "llama3-8b", gpu = "h800-sxm", gpus = 8, tokens = "1B", currency = "cny", market = "CN" }
local b = gp.train { model = "llama3-8b", gpu = "h800-sxm", gpus = 8, tokens = "1B", currency = "CNY", market = "cn" }
print(a.currency, a.cost == b.cost)
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($o, "CNY\ttrue\n", 'Lua: currency "cny", market "CN" as CNY and cn') or diag $e;
}

done_testing();
