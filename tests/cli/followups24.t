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
    # "[" line 1, "{" line 2, "id"/"kind" line 3, "model" 4, "hardware" 5,
    # "parallel" 6, "workload" 7, "precision" 8, "measured" 9
    for my $t ([[precision => 'fp17'], 2, qr/:8: case 'b': field 'workload\.precision': expected one of fp32, tf32, bf16, fp16, fp8, fp4, got "fp17" \(did you mean 'fp16'\?\)$/m],
               [[kind => 'trian'], 2, qr/:2: case 'b': unknown kind 'trian' \(train, memory, infer, collective, rl\)$/m],
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

done_testing;
