# What a twelfth new-user walk (an ML engineer deciding what to rent: a
# 70B full fine-tune on H100/H20/H800/H200, QLoRA on one consumer card,
# GRPO on Qwen3-8B, DeepSeek serving on H20, 405B pre-training on 256
# H100, a budget, a currency, a card of one's own) found on the command
# line: a refusal without the fix, a word the command cannot take, a
# number read as nothing.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);
my $tmp = File::Temp::tempdir(CLEANUP => 1);
my @job = ('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3');

# The "days" and "tokens" of train's JSON for --tokens T.
sub days_of {
    my ($t) = @_;
    my ($c, $o, $e) = run_gp(@job, '--tokens', $t, '--format', 'json');
    die "train --tokens $t: $e" if $c;
    my ($days) = $o =~ /"days":([0-9.e+-]+)/;
    my ($tps) = $o =~ /"tokens_per_s":([0-9.e+-]+)/;
    my ($tok) = $o =~ /"tokens":([0-9.e+-]+)/;
    return ($days, $tps, $tok);
}

# 1. --tokens 2B: the guide says "2B tokens in 3 days" and --budget takes
# "$50k", but --tokens refused "2B" ("expects a number").  A decimal
# suffix K, M, B (or G), T in either case, the Lua key alike.
{
    my ($d9, $tps, $tok) = days_of('2e9');
    # days = tokens / (tokens/s) / 86400 s a day: 2e9 / tps / 86400; the
    # JSON's own two numbers, printed to 16 digits: 1e-9 relative
    ok(abs($d9 - 2e9 / $tps / 86400) <= 1e-9 * $d9, "2e9 tokens: days = 2e9 / tokens_per_s / 86400 ($d9)");
    for my $t ('2B', '2b', '2G', '2000M', '2000000K', '0.002T', ' 2 B') {
        my ($d, undef, $n) = days_of($t);
        is($n, $tok, "--tokens '$t' is 2e9 tokens");
        is($d, $d9, "... and the same days as 2e9");
    }
    ($c, $o, $e) = run_gp(@job, '--tokens', '2x');
    is($c, 2, '--tokens 2x: a usage error, exit 2');
    like($e, qr/^gpuplan: train: --tokens must be a count of tokens: a number \(2e12\) or one with a suffix K, M, B or T \(500M, 2B, 1\.5T\) \(got '2x'\)$/m,
         'names the option, the text and the forms it takes');
    for my $t ('B', '0x10', '2BB', '2 B B', '') {
        ($c, $o, $e) = run_gp(@job, '--tokens', $t);
        is($c, 2, "--tokens '$t': exit 2");
    }
    ($c, $o, $e) = run_gp(@job, '--tokens', '-5B');
    is($c, 1, '--tokens -5B: out of range, exit 1');
    is($e, "gpuplan: train: --tokens must be a positive number up to 1e+15 (got -5B)\n", 'the text typed, the bound');
    ($c, $o, $e) = run_gp(@job, '--tokens', '2000T');
    is($c, 1, '--tokens 2000T (2e15): past the bound, exit 1');
    # plan reads it as train does: 1T over 256 GPUs of 405B has days
    ($c, $o, $e) = run_gp('plan', 'llama3.1-405b', '--gpu', 'h100-sxm', '--gpus', '256', '--tokens', '1T', '--top', '1', '--format', 'csv');
    is($c, 0, 'plan --tokens 1T: exit 0') or diag $e;
    my ($c2, $o2) = run_gp('plan', 'llama3.1-405b', '--gpu', 'h100-sxm', '--gpus', '256', '--tokens', '1e12', '--top', '1', '--format', 'csv');
    is($o, $o2, 'plan --tokens 1T is --tokens 1e12, row for row');
    # the Lua key: the same reader
    my $f = "$tmp/t.lua";
    write_file($f, <<'LUA');
local gp = require("gpuplan")
local o = { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, zero = 3 }
local function days(t) o.tokens = t return gp.train(o).days end
print(days("1.5T") == days(1.5e12), days(2e9) == days("2B"))
print(select(2, pcall(days, "2 x")))
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($o, "true\ttrue\n$f:3: train: tokens must be a count of tokens: a number (2e12) or one with a suffix K, M, B or T (500M, 2B, 1.5T) (got string '2 x')\n",
       'gp.train{tokens = "2B"} and "1.5T": as the command line') or diag $e;
    # plan --svg labels its axis with the run's tokens: "2B" reached
    # string.format("%.3g") as text and crashed naming cmd/plan.lua:517
    my @pj = ('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--top', '1');
    ($c, $o, $e) = run_gp(@pj, '--tokens', '2B', '--svg', "$tmp/b");
    is($c, 0, 'plan --tokens 2B --svg: exit 0') or diag $e;
    my ($c3, $o3, $e3) = run_gp(@pj, '--tokens', '2e9', '--svg', "$tmp/n");
    my $svg = sub { open(my $fh, '<', shift) or return ''; local $/; <$fh> };
    like($svg->("$tmp/b-pareto.svg"), qr/days to train 2e\+09 tokens/, '... its axis: 2e+09 tokens');
    is($svg->("$tmp/b-pareto.svg"), $svg->("$tmp/n-pareto.svg"), '... the picture of --tokens 2e9');
}

# 2. Unknown ids: the list was the first six ids sharing three letters, in
# alphabetical order -- llama-3.1-8b suggested six other Llamas and never
# llama3.1-8b.  An id written with other separators, another case or a
# Hugging Face organisation is that id alone; else the nearest first.
{
    for my $case (['llama-3.1-8b', 'llama3.1-8b'], ['meta-llama/Llama-3.1-70B', 'llama3.1-70b'],
                  ['qwen3_8b', 'qwen3-8b'], ['Qwen-3-8B', 'qwen3-8b'], ['llama-3-70b', 'llama3-70b']) {
        my ($typed, $id) = @$case;
        ($c, $o, $e) = run_gp('fit', $typed, '--gpu', 'h100-sxm');
        is($c, 2, "fit $typed: exit 2, as every unknown model (a usage error)");
        like($e, qr/^\Qgpuplan: fit: unknown model '$typed' (did you mean $id?)\E\nusage: /, "$typed: $id alone");
    }
    ($c, $o, $e) = run_gp('fit', 'qwen2.5-72b-instruct', '--gpu', 'h100-sxm');
    like($e, qr/\(did you mean qwen2\.5-72b, /, 'an id the name begins with (a -instruct tune): first');
    ($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'H200');
    like($e, qr/unknown gpu 'H200' \(did you mean h200-nvl, h200-sxm, /, 'H200: the H200s first, before h20');
    ($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h800');
    like($e, qr/unknown gpu 'h800' \(did you mean h800-sxm, h800-pcie, /, 'h800: both H800s first');
}

# 3. A catalog card of one's own: each check named one missing required
# field, so a price written from memory went back four times (date,
# provider, provider_kind, source).  All at once, beside an unknown field.
{
    my $dir = "$tmp/cat";
    mkdir $dir;
    write_file("$dir/c.lua", <<'LUA');
price { id = "h20/mine", gpu = "h20", price = "9CNY/h", region = "cn" }
price { id = "h20/mine2", gpu = "h20", price = "9CNY/h", market = "cn" }
LUA
    ($c, $o, $e) = run_gp('catalog', 'check', $dir);
    is($c, 1, 'catalog check: exit 1');
    like($o . $e, qr/^\Q$dir\E\/c\.lua:1: price 'h20\/mine': field 'date': required field is missing \(so are 'provider', 'provider_kind', 'source'\)$/m,
         'every missing field of the entry in one line');
    like($o . $e, qr/^\Q$dir\E\/c\.lua:2: price 'h20\/mine2': field 'market': unknown field \(known: [^)]*\); required and missing: 'date', 'provider', 'provider_kind', 'region', 'source'$/m,
         'an unknown field says what is missing too');
}

# 4. --itl-max on a MoE model without the MoE serving model ("deepseek-v3
# --gpus 16 --itl-max 50") said "needs --target or the MoE serving
# options", naming none of them.
{
    ($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h20', '--gpus', '16', '--itl-max', '50');
    is($c, 2, 'infer --itl-max alone: a usage error');
    like($e, qr/^gpuplan: infer: --itl-max needs --target or the MoE serving options \(--ep N, --dp-attention, --disagg \.\.\.: 'serving a MoE model across many GPUs' in 'gpuplan infer --help'\)$/m,
         'names the options and where the help lists them');
    # and the named way works: --ep 16 with fp8 weights fits 16 H20s
    ($c, $o, $e) = run_gp('infer', 'deepseek-v3', '--gpu', 'h20', '--gpus', '16', '--ep', '16', '--weights', 'fp8', '--itl-max', '50');
    is($c, 0, '... --ep 16: answered') or diag $e;
    like($o, qr/^ITL\s+\d/m, '... with an ITL');
}

# 5. `gpuplan guide`: the help says "Without a command, runs the default
# guide", and `gpuplan guide` was "unknown command 'guide'"; the guide's
# own --help said "usage: gpuplan run guide", no command that runs it.
{
    my ($c0, $o0) = run_gp('--currency', 'CNY', '--market', 'cn');
    ($c, $o, $e) = run_gp('guide', '--currency', 'CNY', '--market', 'cn');
    is($c, 0, 'gpuplan guide: exit 0') or diag $e;
    is($o, $o0, '... the guide, as without a command');
    ($c, $o, $e) = run_gp('guide', '--help');
    like($o, qr/^usage: gpuplan guide \[options\]$/m, 'its help names the command that runs it');
    ($c, $o, $e) = run_gp('help', 'guide');
    like($o, qr/^usage: gpuplan guide \[options\]$/m, 'gpuplan help guide: the same');
    ($c, $o, $e) = run_gp('--format', 'markdown', '--help');
    like($o, qr/^usage: gpuplan guide \[options\]$/m, 'gpuplan --format markdown --help: the same');
    ($c, $o, $e) = run_gp('guide', '--foo');
    is($c, 2, 'gpuplan guide --foo: exit 2');
    is($e, "gpuplan: guide: unknown option '--foo'\n", '... named as the guide\'s');
    ($c, $o, $e) = run_gp('--help');
    like($o, qr/^  guide\s+the default guide/m, 'listed among the commands');
}

# 6. --seq 8k: "expects an integer, got '8k'", no way forward; which
# thousand is the user's (8192 as a context is spoken of, 8000 as a
# count), so the refusal names both.
{
    ($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--seq', '8k');
    is($c, 2, '--seq 8k: a usage error');
    like($e, qr/^gpuplan: fit: option '--seq' expects an integer, got '8k' \(write the count out: 8192 for 8 x 1024, 8000 for 8 x 1000\)$/m,
         'names 8192 and 8000');
    ($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '1k');
    like($e, qr/got '1k' \(write the count out: 1024 for 1 x 1024, 1000 for 1 x 1000\)$/m, 'any count: --gpus 1k');
    ($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--seq', '8x');
    like($e, qr/got '8x'$/m, 'no hint where the text is no such count');
}

# 7. gpuplan rl's defaults line said "fsdp version: 1 (FSDP1 ...)", words
# for an option rl did not take, where train's said fsdp_version=1: the
# actor's FSDP is gp.train's, so rl takes --fsdp-version (veRL's
# actor strategy fsdp2) and its step moves with it.
{
    my @rl = ('rl', 'qwen3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3');
    ($c, $o, $e) = run_gp(@rl);
    is($c, 0, 'rl --zero 3: exit 0') or diag $e;
    like($o, qr/^defaults: .*, fsdp_version=1 \(FSDP1/m, 'the defaults line names the flag');
    unlike($o, qr/fsdp version: /, 'not in words');
    my ($s1) = $o =~ /^step\s+8\s+([\d.]+)/m;
    ($c, $o, $e) = run_gp(@rl, '--fsdp-version', '2');
    is($c, 0, 'rl --fsdp-version 2: exit 0') or diag $e;
    my ($s2) = $o =~ /^step\s+8\s+([\d.]+)/m;
    unlike($o, qr/fsdp_version=/, 'given: not on the defaults line');
    # FSDP2 copies each gather out and the gradients in (train_stage.c
    # fsdp_copies): the update is slower, never faster
    ok($s2 > $s1, "FSDP2's copies lengthen the step ($s1 -> $s2 s)");
    ($c, $o, $e) = run_gp(@rl, '--fsdp-version', '3');
    is($c, 1, '--fsdp-version 3: out of range, exit 1');
    is($e, "gpuplan: rl: --fsdp-version must be a whole number 1..2 (got 3)\n", '... named');
}

# 8. plan --budget that no layout meets: "0 timed (273 skipped by the
# bound), 0 fit" read as nothing fitting, where the same search without
# the budget fit 2; the bound skipped them at their least time, before
# their memory was priced.
{
    my @p = ('plan', 'llama3.1-405b', '--gpu', 'h100-sxm', '--gpus', '256', '--tokens', '1e12');
    ($c, $o, $e) = run_gp(@p);
    like($o, qr/^searched: h100-sxm 141 layouts: 141 timed \(0 skipped by the bound\), 2 fit$/m, 'without a budget: 2 fit');
    ($c, $o, $e) = run_gp(@p, '--budget', '2M');
    is($c, 0, 'with --budget 2M: exit 0');
    like($o, qr/^no layout fits within the budget/m, 'nothing within it');
    like($o, qr/^searched: h100-sxm 141 layouts: 0 timed \(141 skipped by the bound: at their least time they miss the budget, fitting or not\), 0 fit, 0 within the budget$/m,
         'says why they were skipped, and that fitting was not asked');
    ($c, $o, $e) = run_gp(@p, '--deadline', '100d');
    like($o, qr/\(141 skipped by the bound: at their least time they miss the deadline, fitting or not\)/, 'a deadline: the same');
}

done_testing();
