# Hardening round 80: a key stated twice in one object of a JSON input
# (case file, config.json, plan shard), a catalog settings field set twice
# in one directory, FSDP strategies labelled by their own names in plan's
# layouts, and the option values a fuzz pass found taken silently.  Each
# test fails on the tree before its fix; each checks the exit code and the
# message.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

# 1. Duplicate keys.  lua-cjson keeps the last value of a repeated key in
# silence: "tp": 8 then "tp": 4 priced tp 4.  Now the file, the line of the
# second and the line of the first.
{
    my $f = "$dir/dup.json";
    write_file($f, qq([{"id": "x",\n  "kind": "train",\n  "parallel": {"tp": 8, "pp": 1,\n     "tp": 4}}]\n));
    ($c, $o, $e) = run_gp('validate', $f);
    is($c, 1, 'case file, a key twice: exit 1');
    like($e, qr/^gpuplan: \Q$f\E:4: duplicate key 'tp' in one object \(first at line 3\)/m,
         'FILE:LINE, the key and its first line') or diag $e;
    is($o, '', 'nothing printed');
    # escapes decoded before the keys are compared ("\u0069" is "i")
    write_file($f, qq([{"id": "x", "k\\u0069nd": "train", "kind": "infer"}]\n));
    ($c, $o, $e) = run_gp('validate', $f);
    is($c, 1, 'an escaped spelling of the same key: exit 1');
    like($e, qr/\Q$f\E:1: duplicate key 'kind' in one object \(twice on this line\)/,
         'the decoded key named') or diag $e;
}
# The walk: keys of sibling objects, string values equal to a key, and
# strings holding brackets, commas and escaped quotes are not keys of the
# open object; the shipped case file states each key once (it held
# "overlap_param_gather" twice in 12 cases, the same value).
{
    my $f = "$dir/walk.lua";
    write_file($f, <<'LUA');
local files = require "gpuplan.files"
local ok = files.json_duplicate("a", '{"a": "a", "b": ["a", "a"], "c": {"a": 1}, "d": {"a": 2}, '
  .. '"e": "}\\"{,", "f": [{"a": 1}, {"a": 2}], "g": {"h": {"a": 1}, "a": 2}}')
print(ok == nil and "clean" or ok)
print(files.json_duplicate("b", '[{"x": {"y": 1}, "z": [1, {"q": 2}], "x": 3}]') or "missed")
print(files.json_duplicate("c", '{"k": 1}', 7) or "clean")
print(files.json_duplicate("d", '{"k": 1, "k": 2}', 7) or "missed")
local text = assert(io.open("validation/cases.json")):read("a")
print(files.json_duplicate("validation/cases.json", text) or "shipped clean")
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 0, 'the walk runs') or diag $e;
    is($o, "clean\nb:1: duplicate key 'x' in one object (twice on this line); a JSON decoder "
         . "keeps the last in silence: state it once\nclean\nd:7: duplicate key 'k' in one "
         . "object (twice on this line); a JSON decoder keeps the last in silence: state it "
         . "once\nshipped clean\n", 'nested and sibling objects told apart; line offset kept')
      or diag $o;
}
# A config.json (model import and params read it through one reader).
{
    open(my $fh, '<', 'tests/fixtures/hf/llama-2-7b.json') or die $!;
    my $t = do { local $/; <$fh> };
    close $fh;
    my @l = split /\n/, $t;
    my ($n) = grep { $l[$_] =~ /"num_hidden_layers"/ } 0 .. $#l;
    splice(@l, $n + 1, 0, '  "num_hidden_layers": 40,');
    my $f = "$dir/config.json";
    write_file($f, join("\n", @l) . "\n");
    my ($first, $second) = ($n + 1, $n + 2);
    for my $sub ('import', 'params') {
        ($c, $o, $e) = run_gp('model', $sub, $f);
        is($c, 1, "model $sub, a key twice: exit 1");
        like($e, qr/^gpuplan: \Q$f\E:$second: duplicate key 'num_hidden_layers' in one object \(first at line $first\)/m,
             "model $sub: FILE:LINE") or diag $e;
    }
}
# A plan shard (one JSON object a line): the line of the file.
{
    my @plan = ('plan', 'llama2-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--top', '2',
                '--format', 'json');
    ($c, $o, $e) = run_gp(@plan);
    is($c, 0, 'plan --format json: exit 0') or diag $e;
    my @lines = split /\n/, $o;
    ok($lines[1] =~ s/"cp":1,/"cp":1,"cp":2,/, 'a result line given cp twice');
    my $f = "$dir/shard.jsonl";
    write_file($f, join("\n", @lines) . "\n");
    ($c, $o, $e) = run_gp('merge', $f);
    is($c, 1, 'merge, a key twice: exit 1');
    like($e, qr/^gpuplan: merge: \Q$f\E:2: duplicate key 'cp' in one object \(twice on this line\)/m,
         'merge: FILE:LINE') or diag $e;
}

# 2. Catalog: an id defined twice in one directory is an error (it was);
# a later directory overrides it.  A settings field set twice in one
# directory took the second in silence: now refused as the id is.
{
    my ($a, $b) = ("$dir/cat_a", "$dir/cat_b");
    mkdir $a; mkdir $b;
    open(my $fh, '<', 'catalog/gpus/amd-instinct.lua') or die $!;
    my $src = do { local $/; <$fh> };
    close $fh;
    my ($entry) = $src =~ /^(gpu \{\n(?:.*\n)*?\}\n)/m;
    ok($entry && $entry =~ /id = "mi250x"/, 'the MI250X entry read') or diag $entry;
    write_file("$a/x.lua", $entry . $entry);
    ($c, $o, $e) = run_gp('catalog', 'check', $a);
    is($c, 1, 'an id twice in one directory: exit 1');
    like($e, qr/\Q$a\E\/x\.lua:\d+: duplicate gpu 'mi250x' \(first defined at \Q$a\E\/x\.lua:1\)/,
         'both places named') or diag $e;
    write_file("$a/x.lua", $entry);
    local $ENV{GPUPLAN_CATALOG} = $a;
    ($c, $o, $e) = run_gp('catalog', 'show', 'mi250x');
    is($c, 0, 'the same id in a later directory: an override, exit 0') or diag $e;
    like($o, qr/^gpu 'mi250x' \(\Q$a\E\/x\.lua:1\)/, 'the override is the entry shown') or diag $o;
    write_file("$b/s.lua", "settings { safety_margin = 0.2 }\nsettings { safety_margin = 0.3 }\n");
    ($c, $o, $e) = run_gp('catalog', 'check', $b);
    is($c, 1, 'a settings field twice in one directory: exit 1');
    like($e, qr/\Q$b\E\/s\.lua:2: settings: field 'safety_margin' set twice in one directory \(first at \Q$b\E\/s\.lua:1\)/,
         'both places named') or diag $e;
    # two fields, one each: fine; a later directory overrides a field
    write_file("$b/s.lua", "settings { safety_margin = 0.2 }\nsettings { currency = \"USD\" }\n");
    ($c, $o, $e) = run_gp('catalog', 'check', $b);
    is($c, 0, 'two fields set once each: exit 0') or diag $e;
}

# 3. plan's layouts under --fsdp name the strategy: shard_grad_op under
# --grad-sync step read "ZeRO-1" and hybrid_shard "ZeRO-3 HSDP".
{
    my @j = ('plan', 'llama2-7b', '--gpu', 'h100-sxm', '--stack', 'hf', '--top', '20');
    ($c, $o, $e) = run_gp(@j, '--gpus', '8', '--fsdp', 'shard_grad_op', '--grad-sync', 'step');
    is($c, 0, 'plan --fsdp shard_grad_op --grad-sync step: exit 0') or diag $e;
    like($o, qr/^h100-sxm\s+8\s+TP\d+ .*DP\d+ shard_grad_op mb/m, 'labelled shard_grad_op') or diag $o;
    unlike($o, qr/ZeRO-\d/, 'no ZeRO stage in its labels') or diag $o;
    ($c, $o, $e) = run_gp(@j, '--gpus', '16', '--fsdp', 'full_shard,hybrid_shard');
    is($c, 0, 'plan --fsdp full_shard,hybrid_shard: exit 0') or diag $e;
    like($o, qr/ DP\d+ hybrid_shard mb/, 'hybrid_shard by its name') or diag $o;
    like($o, qr/ DP\d+ full_shard mb/, 'full_shard by its name') or diag $o;
    unlike($o, qr/ZeRO-\d|HSDP/, 'no ZeRO stage, no HSDP') or diag $o;
    # without --fsdp the ZeRO stage, as before
    ($c, $o, $e) = run_gp(@j, '--gpus', '8', '--zero', '1,3');
    is($c, 0, 'plan --zero 1,3: exit 0') or diag $e;
    like($o, qr/ DP8 ZeRO-3 mb/, 'ZeRO-3 by its stage') or diag $o;
    like($o, qr/ DP8 ZeRO-1 mb/, 'ZeRO-1 by its stage') or diag $o;
    # merge checks a result's fsdp against its stage
    ($c, $o, $e) = run_gp(@j, '--gpus', '8', '--fsdp', 'shard_grad_op', '--format', 'json');
    is($c, 0, 'plan --format json: exit 0') or diag $e;
    my @lines = split /\n/, $o;
    ok($lines[1] =~ s/"fsdp":"shard_grad_op"/"fsdp":"full_shard"/, 'a result given another strategy');
    my $f = "$dir/fsdp.jsonl";
    write_file($f, join("\n", @lines) . "\n");
    ($c, $o, $e) = run_gp('merge', $f);
    is($c, 1, 'merge: a strategy its stage is not: exit 1');
    like($e, qr/\Q$f\E:2: .*fsdp 'full_shard' is not its layout's strategy shard_grad_op \(zero 2\)/,
         'the strategy and the stage named') or diag $e;
}

# 4. The fuzz pass (every subcommand's options with 0, -1, 1e308, nan, "",
# 1.5 and a 3000-character value): model import took an --id or --name
# past the catalog's bounds (an id at most 128 bytes, a name 4096:
# gpuplan.schema ID_MAX, STRING_MAX) and printed an entry the catalog then
# refused.  Now refused at the import, naming the argument and the bound.
{
    my $cfg = 'tests/fixtures/hf/llama-2-7b.json';
    ($c, $o, $e) = run_gp('model', 'import', $cfg, '--id', 'x' x 129);
    is($c, 1, 'model import --id of 129 bytes: exit 1');
    like($e, qr/^gpuplan: \Q$cfg\E: the id \(--id\) 'x{40}\.\.\.' is 129 bytes: a catalog id is at most 128$/m,
         'the argument and its bound named') or diag $e;
    is($o, '', 'no entry printed');
    ($c, $o, $e) = run_gp('model', 'import', $cfg, '--id', 'x' x 128);
    is($c, 0, 'an id of 128 bytes: exit 0') or diag $e;
    ($c, $o, $e) = run_gp('model', 'import', $cfg, '--name', 'n' x 4097);
    is($c, 1, 'model import --name of 4097 bytes: exit 1');
    like($e, qr/^gpuplan: \Q$cfg\E: the name \(--name\) 'n{40}\.\.\.' is 4097 bytes: a catalog name is at most 4096$/m,
         'the argument and its bound named') or diag $e;
    ($c, $o, $e) = run_gp('model', 'import', $cfg, '--name', 'n' x 4096);
    is($c, 0, 'a name of 4096 bytes: exit 0') or diag $e;
    # what it printed loads: the catalog takes the entry back
    my $d = "$dir/imported";
    mkdir $d;
    write_file("$d/m.lua", $o);
    ($c, $o, $e) = run_gp('catalog', 'check', $d);
    is($c, 0, 'the imported entry checks') or diag $e;
}

# rl's rollout line with a queue past 512 samples an engine: the
# scheduler's simulation runs them in 512 groups of n / 512 (engine/
# rollout.c sched_sim), so its peak batch is a multiple of that share
# (64 prompts x 500 / 8 engines = 4000 samples an engine, groups of
# 7.8125: 1023.4375 at once) and the line's "%d" raised "number has no
# integer representation" from cmd/rl.lua.  Now rounded, as the preempted
# count is.
{
    ($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--group', '500');
    is($c, 0, 'rl --group 500: exit 0') or diag $e;
    unlike($e, qr/\.lua:\d+|integer representation/, 'no internal error') or diag $e;
    like($o, qr/^rollout: 8 engines x 4000 samples \(at most \d+ at once, \d+ preempted/m,
         'the rollout line, its batch a whole number') or diag $o;
}

done_testing();
