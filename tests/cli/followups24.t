# followups24: small items earlier walks left, one block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

# 1. An unknown catalog name (--gpu, --nic-fabric, the MODEL) exited 1,
# as if the job could not run; the rule is exit 2 for an unknown enum or
# catalog name, a usage error, with the did-you-mean text kept.
for my $t ([[qw(fit llama3-8b --gpu a100-sxm-80g)],
            qr/^gpuplan: fit: --gpu: unknown gpu 'a100-sxm-80g' \(did you mean a100-sxm-80gb, /],
           [[qw(train llama3-8b --gpu h100-sxm --gpus 16 --nic-fabric ib2)],
            qr/^gpuplan: train: --nic-fabric: unknown fabric 'ib2' \(see 'gpuplan catalog list fabrics'\)/],
           [[qw(infer llama3-8bb --gpu h100-sxm)],
            qr/^gpuplan: infer: unknown model 'llama3-8bb' \(did you mean llama3-8b, /],
           [[qw(comm --gpu h100-sxmm)], qr/^gpuplan: comm: --gpu: unknown gpu 'h100-sxmm' \(did you mean /]) {
    my ($argv, $want) = @$t;
    ($c, $o, $e) = run_gp(@$argv);
    is($c, 2, "@$argv: exit 2");
    like($e, $want, "@$argv: names the flag and what it takes") or diag $e;
    like($e, qr/^usage: gpuplan $argv->[0] /m, "@$argv: the usage lines, as every usage error");
    is($o, '', "@$argv: nothing priced");
}
# a script's pcall gets the message it always got, no mark in it
write_file("$dir/cat.lua", <<'LUA');
local gp = require "gpuplan"
local ok, e = pcall(gp.memory, { model = "llama3-8b", gpu = "h100-sxmm" })
io.write(tostring(ok), " ", e, "\n")
LUA
($c, $o, $e) = run_gp('run', "$dir/cat.lua");
is($c, 0, 'a script catches it') or diag $e;
like($o, qr/^false \S*cat\.lua:2: unknown gpu 'h100-sxmm' \(did you mean /, 'as a plain message');
# a card a catalog has but a job cannot use is still exit 1 (not a name
# problem): an out-of-range value, as before
($c, $o, $e) = run_gp(qw(fit llama3-8b --gpu h100-sxm --margin 1.5));
is($c, 1, '--margin 1.5: out of range, exit 1');

# ... and in a case file (gpuplan validate FILE): a value the field does
# not take -- an enum's, the kind, the metric -- exits 2 naming FILE:LINE;
# a unit that contradicts its metric is still an error in a value, exit 1.
{
    my $case = sub {
        my (%o) = (kind => 'train', precision => 'bf16', metric => 'mfu', unit => 'fraction', @_);
        return <<"JSON";
[
{
  "id": "b", "kind": "$o{kind}",
  "model": {"name": "m", "layers": 2, "hidden": 64, "heads": 2, "vocab": 100, "ffn_hidden": 256},
  "hardware": {"gpu": "h100-sxm", "gpus": 8},
  "parallel": {"tp": 8},
  "workload": {"seq_len": 128,
    "precision": "$o{precision}", "method": "pretrain"},
  "measured": {"metric": "$o{metric}", "value": 0.3, "unit": "$o{unit}"}
}
]
JSON
    };
    # "[" line 1, "{" line 2, "id"/"kind" line 3 (an unknown kind is said at its own line), "model" 4, "hardware" 5,
    # "parallel" 6, "workload" 7, "precision" 8, "measured" 9
    for my $t ([[precision => 'fp17'], 2, qr/:8: case 'b': field 'workload\.precision': expected one of fp32, tf32, bf16, fp16, fp8, fp4, got "fp17" \(did you mean 'fp16'\?\)$/m],
               [[kind => 'trian'], 2, qr/:3: case 'b': unknown kind 'trian' \(train, memory, infer, collective, rl\)$/m],
               [[metric => 'mfuu'], 2, qr/:9: case 'b': field 'measured\.metric': 'mfuu' is not a train metric /m],
               [[unit => 'percent'], 1, qr/:9: case 'b': field 'measured\.unit': 'percent', but mfu's unit is 'fraction'$/m]) {
        my ($set, $rc, $want) = @$t;
        my $f = "$dir/$set->[0].json";
        write_file($f, $case->(@$set));
        ($c, $o, $e) = run_gp('validate', $f);
        is($c, $rc, "case file $set->[0] '$set->[1]': exit $rc");
        like($e, qr/^gpuplan: \Q$f\E$want/m, "... names FILE:LINE and the field") or diag $e;
    }
    write_file("$dir/good.json", $case->());
    ($c, $o, $e) = run_gp('validate', "$dir/good.json");
    is($c, 0, 'the same case with good values: exit 0') or diag $e;
}

# 2. llama.cpp's own --split-mode (row or layer) is no option of infer:
# its row split is --tp under --runtime llama.cpp, its layer split --pp
# (lua/gpuplan/infer.lua row_split).  The refusal said only "unknown
# option '--split-mode'"; it now says what to give, on the command line
# and in a script, off llama.cpp or at one GPU alike.
for my $argv ([qw(infer llama3-8b --gpu h100-sxm --split-mode row)],
              [qw(infer llama3-8b --gpu h100-sxm --gpus 2 --runtime llama.cpp --split-mode row)]) {
    ($c, $o, $e) = run_gp(@$argv);
    is($c, 2, "@$argv: a usage error");
    like($e, qr/^gpuplan: infer: unknown option '--split-mode' \(llama\.cpp's --split-mode: give --tp N for its row split or --pp N for its layer split, with --runtime llama\.cpp\)$/m,
         "@$argv: names the flag and what to give") or diag $e;
}
write_file("$dir/split.lua", <<'LUA');
local gp = require "gpuplan"
local ok, e = pcall(gp.infer, { model = "llama3-8b", gpu = "h100-sxm", split_mode = "row" })
io.write(e, "\n")
LUA
($c, $o, $e) = run_gp('run', "$dir/split.lua");
like($o, qr/infer: unknown option 'split_mode' \(llama\.cpp's --split-mode: give tp = N for its row split or pp = N for its layer split, with runtime = 'llama\.cpp'\)$/,
     'a script: in its Lua keys') or diag $o, $e;
# what it points to is priced: the row split under llama.cpp
($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu h100-sxm --gpus 2 --tp 2 --runtime llama.cpp));
is($c, 0, '--tp 2 --runtime llama.cpp: priced') or diag $e;

# 3. The Mamba mixer's dims had two limits: a script's table read
# 1..2147483647 (engine/lgp_model.c), the engine then refused past
# 16777216 ("must be at most"), the catalog and case files past 16777216
# (schema COUNT_MAX).  One limit now, GP_COUNT_MAX = 2^24 (a count of
# the model, engine/common.h), in the reader's one message.  And groups
# not dividing heads (Megatron-Core mamba_mixer.py "nheads must be evenly
# divisible by ngroups") is one wording everywhere, refused at a catalog
# entry's or a case file's line (a case was "not predicted" with no line).
write_file("$dir/mamba.lua", <<'LUA');
local gp = require "gpuplan"
local function copy(t)
  local r = {}
  for k, v in pairs(t) do
    if type(k) ~= "string" or k:sub(1, 1) ~= "_" then r[k] = type(v) == "table" and copy(v) or v end
  end
  return r
end
local m = copy(gp.catalog():get("models", "nemotron-3-nano-30b-a3b"))
for _, t in ipairs { { "heads", 1 << 25 }, { "state", 1 << 31 }, { "groups", 0 }, { "groups", 5 } } do
  local mm = copy(m)
  mm.mamba[t[1]] = t[2]
  local ok, e = pcall(gp.memory, { model = mm, gpu = "h100-sxm" })
  io.write(e, "\n")
end
LUA
($c, $o, $e) = run_gp('run', "$dir/mamba.lua");
is($c, 0, 'the script runs') or diag $e;
my @l = split /\n/, $o;
like($l[0], qr/model\.mamba\.heads must be an integer in 1\.\.16777216 \(got 33554432\)$/, '2^25 heads: the count bound');
like($l[1], qr/model\.mamba\.state must be an integer in 1\.\.16777216 \(got 2147483648\)$/, '2^31: the same bound, not 2147483647');
like($l[2], qr/model\.mamba\.groups must be an integer in 1\.\.16777216 \(got 0\)$/, '0 groups: the same range');
like($l[3], qr/model\.mamba\.groups \(5\) must divide mamba\.heads \(64\): the heads of a group share its B and C$/,
     '5 groups of 64 heads: refused with the reason');
mkdir "$dir/cat";
my $entry = "-- a model\nmodel { id = 'hyb', name = 'x', layers = 4, hidden = 64, heads = 8, ffn_hidden = 128, "
    . "vocab = 100, params_b = 1, source = 't', hybrid_pattern = 'M*--', "
    . "mamba = { heads = 4, head_dim = 16, state = %d, groups = %d } }\n";
write_file("$dir/cat/a.lua", sprintf($entry, 8, 3));
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
is($c, 1, 'groups 3 of 4 heads in a catalog file: exit 1');
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'hyb': field 'mamba\.groups': mamba\.groups \(3\) must divide mamba\.heads \(4\): the heads of a group share its B and C$/m,
     'the field and the one wording') or diag $e;
write_file("$dir/cat/a.lua", sprintf($entry, 1 << 25, 2));
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'hyb': field 'mamba\.state': must be <= 16777216, got 33554432$/m,
     'a catalog file: the same bound') or diag $e;
write_file("$dir/cat/a.lua", sprintf($entry, 8, 2));
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
# (the toy entry's params_b is another field's problem: only the mamba
# table is judged here)
unlike($e, qr/mamba/, 'groups 2 of 4 heads: the mamba table checks') or diag $e;
write_file("$dir/hyb.json", <<'JSON');
[
 {
  "id": "hyb-case",
  "kind": "train",
  "model": {
   "name": "tiny", "layers": 4, "hidden": 64, "heads": 4, "ffn_hidden": 256,
   "vocab": 1000, "hybrid_pattern": "M*--",
   "mamba": {"heads": 4, "head_dim": 16, "state": 8, "groups": 3}
  },
  "hardware": {"gpu": "h100-sxm", "gpus": 8},
  "parallel": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1, "global_batch": 64},
  "workload": {"seq_len": 128, "precision": "bf16"},
  "measured": {"metric": "step_time_s", "value": 0.05, "unit": "s"},
  "source": {"title": "t", "where": "t", "id": "t", "date": "2026-01-01"}
 }
]
JSON
($c, $o, $e) = run_gp('validate', "$dir/hyb.json");
is($c, 1, 'groups 3 of 4 heads in a case file: exit 1');
is($e, "gpuplan: $dir/hyb.json:8: case 'hyb-case': field 'model.mamba.groups': mamba.groups (3) "
     . "must divide mamba.heads (4): the heads of a group share its B and C\n", 'at its line, the one wording') or diag $e;

# 4. A hybrid stack (nemotron-3-nano-30b-a3b: Mamba, attention and MoE
# layers): the refusal named a field of a table ("model.hybrid_pattern: a
# hybrid stack's ...") and not the model the user gave, and roofline --
# which refuses it too -- was not among the commands it listed.  The
# commands that do not price its serving state (infer, roofline) now name
# the model; train, fit and plan price it (tests/cli/mamba.t).
# infer and roofline now price its serving state (tests/cli/mamba.t); rl's
# rollouts do not.
for my $argv ([qw(rl nemotron-3-nano-30b-a3b --gpu h100-sxm --gpus 8)]) {
    ($c, $o, $e) = run_gp(@$argv);
    is($c, 1, "@$argv: exit 1 (a model the command cannot price)");
    like($e, qr/^gpuplan: $argv->[0]: nemotron-3-nano-30b-a3b is a hybrid stack \(its hybrid_pattern\): its Mamba layers are not priced by rl \(its rollouts' serving state\); infer, roofline, train, fit and plan price it, `gpuplan model params` counts its parameters$/m,
         "@$argv: names the model and what is not priced") or diag $e;
}

done_testing;
