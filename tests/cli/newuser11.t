# What an eleventh new-user walk (a pre-training lead: MoE and dense
# pre-training plans, offloaded optimizers, a vision fine-tune, a published
# run checked with a case file of one's own) found on the command line: an
# answer that was wrong, silent or unreadable.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);
my $tmp = File::Temp::tempdir(CLEANUP => 1);

sub put {
    my ($name, $text) = @_;
    open(my $fh, '>', "$tmp/$name") or die;
    print $fh $text;
    close $fh;
    return "$tmp/$name";
}

# 1. A case file with a wrong field was refused naming the file and the
# case ("c.json: case 'b': field 'parallel.pp': must be >= 1, got -1"),
# never the line, where a JSON syntax error names FILE:LINE and
# docs/output.md promises "one line naming the file:line".  Two cases, the
# second's pp on line 19 of the file: the refusal names c.json:19.
{
    my $case = sub {
        my ($id, $pp) = @_;
        return <<"JSON";
{
  "id": "$id", "kind": "train",
  "notes": "a \\"quoted\\" {brace} [x]: \\"parallel\\": {\\"pp\\": 0}",
  "model": {"name": "m", "layers": 2, "hidden": 64, "heads": 2, "vocab": 100, "ffn_hidden": 256},
  "hardware": {"gpu": "h100-sxm", "gpus": 8},
  "parallel": {"tp": 8,
    "pp": $pp},
  "workload": {"seq_len": 128, "precision": "bf16", "method": "pretrain"},
  "measured": {"metric": "mfu", "value": 0.3, "unit": "fraction"}
}
JSON
    };
    # "[" line 1; case 'a' lines 2-11 (10 lines); "," line 12; case 'b'
    # from line 13, its "pp" on its 7th line: 19
    my $f = put('c.json', "[\n" . $case->('a', 1) . ",\n" . $case->('b', -1) . "]\n");
    ($c, $o, $e) = run_gp('validate', $f);
    is($c, 1, 'a bad field: exit 1');
    is($e, "gpuplan: $f:19: case 'b': field 'parallel.pp': must be >= 1, got -1\n",
       'names the file and the line of the field');
    is($o, '', 'nothing on stdout');
    # an unknown kind: the line of its "kind" field (14, the case 'b'
    # starting on 13 with its id), where the refusal now points
    $f = put('k.json', "[\n" . $case->('a', 1) . ",\n" . ($case->('b', 1) =~ s/"train"/"trian"/r) . "]\n");
    ($c, $o, $e) = run_gp('validate', $f);
    like($e, qr/^gpuplan: \Q$f\E:14: case 'b': unknown kind 'trian'/, 'unknown kind: the kind\'s line');
    # a value that is no case at all, after a good one: "," line 12, an
    # empty line 13, the 7 on line 14
    $f = put('n.json', "[\n" . $case->('a', 1) . ",\n\n  7]\n");
    ($c, $o, $e) = run_gp('validate', $f);
    like($e, qr/^gpuplan: \Q$f\E:14: case 2: expected a case object, got a number/, 'a number: its line');
}

# 2. plan --shard with text that is no K/N ('a', '1-3', '', '2/3x') exited
# 1, where docs/output.md makes "a value the option cannot parse" a usage
# error (exit 2, as --deadline abc is).  A K/N that parses but is out of
# range (0/3, 4/3) stays exit 1.
for my $v ('a', '1-3', '', '2/3x') {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--no-progress', '--shard', $v);
    is($c, 2, "--shard '$v': exit 2");
    like($e, qr/^gpuplan: plan: --shard '\Q$v\E' must be K\/N with 1 <= K <= N\nusage: gpuplan plan/, "--shard '$v': the reason, then the usage line");
}
for my $v ('0/3', '4/3') {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--no-progress', '--shard', $v);
    is($c, 1, "--shard $v: out of range, exit 1");
}

# 3. plan --deadline and --budget past the bound on amounts (1e15,
# docs/output.md) named a number the user never typed: '--deadline 1e300d'
# said "--deadline must be a number in [0, 1e+15] (got 8.64e+304)" (its
# seconds), '1e304w' (past a double) "sweep.deadline must be finite", and
# '--budget 1e30' a range [0, ...] whose 0 "must be a positive amount"
# refuses.  Each names the text typed and the bound; the bound itself
# (1e15 USD; 1e12k = 1e15) is taken.
for my $a (['--deadline', '1e300d', 'at most 1e15 s'], ['--deadline', '1e304w', 'at most 1e15 s'],
           ['--budget', '1e30', 'at most 1e15'], ['--budget', '1.1e15', 'at most 1e15']) {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9',
                          '--no-progress', $a->[0], $a->[1]);
    is($c, 1, "$a->[0] $a->[1]: exit 1");
    like($e, qr/^gpuplan: plan: \Q$a->[0] '$a->[1]': $a->[2]\E/, "$a->[0] $a->[1]: names the text and the bound");
}
for my $b ('1e15', '1e12k') {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9',
                          '--no-progress', '--budget', $b);
    is($c, 0, "--budget $b, the bound: taken") or diag $e;
}

# 4. --capacity-factor's refusals gave two ranges: 0 "must be a number in
# (0, 64]", 100 "must be a number in [0, 64]" (the declaration's range,
# whose 0 the memory model's own check refused).  One range, [0, 64], for
# every value refused: 0 is the dropless default (Megatron-Core's
# moe_expert_capacity_factor None), taken.
for my $f ('100', '-1') {
    ($c, $o, $e) = run_gp('train', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '32', '--ep', '8',
                          '--capacity-factor', $f);
    is($c, 1, "--capacity-factor $f: exit 1");
    like($e, qr/^gpuplan: train: --capacity-factor must be a number in \[0, 64\] \(got $f\)/,
         "--capacity-factor $f: the range [0, 64]");
}
($c, $o, $e) = run_gp('train', 'qwen3-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '32', '--ep', '8',
                      '--capacity-factor', '0');
is($c, 0, "--capacity-factor 0 (dropless): taken") or diag $e;

# 5. --moe-dispatcher and --pad-share on a dense model were taken and
# changed nothing, in silence (the dispatcher moves tokens to experts; the
# pad share prices the pads' one set of top-k experts), where
# --moe-flex-sms, --moe-balance and --capacity-factor on it are refused.
# Refused the same way, exit 1, in train and plan; pad share 0 stays taken.
for my $cmd ('train', 'plan') {
    for my $a (['--moe-dispatcher', 'flex', qr/--moe-dispatcher flex is how MoE tokens reach their experts; llama3-8b has no experts/],
               ['--pad-share', '0.5', qr/--pad-share is the padding a MoE router sends to the same experts; llama3-8b has no experts/]) {
        ($c, $o, $e) = run_gp($cmd, 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3', $a->[0], $a->[1]);
        is($c, 1, "$cmd $a->[0] $a->[1] on a dense model: exit 1");
        like($e, qr/^gpuplan: $cmd: $a->[2]/, "$cmd $a->[0]: says why");
    }
}
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3', '--pad-share', '0');
is($c, 0, '--pad-share 0 on a dense model: taken (no padding)') or diag $e;
($c, $o, $e) = run_gp('train', 'mixtral-8x7b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3', '--pad-share', '0.5', '--moe-dispatcher', 'alltoall');
is($c, 0, 'both on a MoE model: taken') or diag $e;

# 6. A switch of another command in its --no- form got no hint: 'train
# --progress' says "(an option of gpuplan plan)", 'train --no-progress'
# said only "unknown option '--no-progress'".  It names plan too; a --no-
# of an option that takes a value (--no-top) stays without one.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--no-progress');
is($c, 2, 'train --no-progress: exit 2');
like($e, qr/^gpuplan: train: unknown option '--no-progress' \(an option of gpuplan plan\)\n/, 'names plan');
($c, $o, $e) = run_gp('infer', 'llama3-8b', '--gpu', 'h100-sxm', '--no-split-ends');
like($e, qr/^gpuplan: infer: unknown option '--no-split-ends' \(an option of gpuplan train, plan and rl\)\n/,
     'infer --no-split-ends names the training commands');
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--no-top');
like($e, qr/^gpuplan: train: unknown option '--no-top'\n/, '--no-top: no switch, no hint');

# 7. plan --zero 0,1,3 --offload optimizer stopped the whole search at its
# first ZeRO-0 layout, naming that layout ("h100-sxm x 16 (TP1 DP16 mb1
# none): offload needs a ZeRO stage ..."), not the list that held the 0.
# It is refused before the search, naming --offload and --zero 0, as
# --zero-group's is; the list without 0 is searched.
($c, $o, $e) = run_gp('plan', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '16', '--no-progress',
                      '--zero', '0,1,3', '--offload', 'optimizer');
is($c, 2, 'plan --zero 0,1,3 --offload optimizer: exit 2');
like($e, qr/^gpuplan: plan: --offload optimizer goes through DeepSpeed's ZeRO optimizer: --zero 0 cannot be searched with it \(give stages 1, 2 or 3\)\nusage:/,
     'names --offload and --zero 0, no layout');
($c, $o, $e) = run_gp('plan', 'llama3-70b', '--gpu', 'h100-sxm', '--gpus', '16', '--no-progress',
                      '--zero', '1,3', '--offload', 'optimizer');
is($c, 0, '--zero 1,3 --offload optimizer: searched') or diag $e;

# 8. plan --offload params+optimizer with a ZeRO stage other than 3 in the
# search (the zero list's default, 1, included) stopped at the first such
# layout ("b200 x 8 (TP1 DP8 ZeRO-1 mb1 none): offloading the parameters
# needs --zero 3 ..."), and --delayed-update without --offload did the
# same, exit 1, naming a layout for an option no layout can take.  Both
# are refused before the search, naming the options (exit 2).
for my $a ([['--offload', 'params+optimizer'], qr/--offload params\+optimizer needs --zero 3 .*: --zero 1 cannot be searched with it \(the zero list's default is 1: give --zero 3\)/],
           [['--offload', 'params+optimizer', '--zero', '1,3'], qr/--zero 1 cannot be searched with it \(give --zero 3\)/],
           [['--offload', 'params+optimizer', '--fsdp', 'full_shard,shard_grad_op'], qr/--zero 2 cannot be searched with it \(shard_grad_op is --zero 2: search full_shard alone\)/],
           [['--delayed-update'], qr/--delayed-update delays the offloaded optimizer's step: it needs offload/]) {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--no-progress', @{$a->[0]});
    is($c, 2, "plan @{$a->[0]}: exit 2");
    like($e, qr/^gpuplan: plan: .*$a->[1]/, "plan @{$a->[0]}: names the options");
    unlike($e, qr/h100-sxm x 8 \(/, "plan @{$a->[0]}: names no layout");
}
for my $a (['--offload', 'params+optimizer', '--zero', '3'], ['--offload', 'params+optimizer', '--fsdp', 'full_shard'],
           ['--delayed-update', '--offload', 'optimizer']) {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--no-progress', @$a);
    is($c, 0, "plan @$a: searched") or diag $e;
}

# 9. train --delayed-update without --offload exited 1, where
# docs/output.md makes options that never go together (its example:
# --offload optimizer at --zero 0) a usage error, exit 2, with the usage
# line.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--delayed-update');
is($c, 2, 'train --delayed-update without --offload: exit 2');
like($e, qr/^gpuplan: train: --delayed-update delays the offloaded optimizer's step: it needs offload \(optimizer or params\+optimizer\)\nusage: gpuplan train/,
     'the reason, then the usage line');

# 10. plan --gpus A..B where doubling A never reaches B ('64..1000')
# searched 64, 128, 256 and 512 and never the 1000 typed as its end, in
# silence.  It is refused, naming the counts it would search and the
# ranges either side; a B that A doubles to (64..1024, 8..8) is searched.
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '64..1000', '--no-progress');
is($c, 1, '--gpus 64..1000: exit 1');
like($e, qr/^gpuplan: plan: --gpus '64\.\.1000': 64\.\.1000 doubles 64 to 512, never 1000 \(give 64\.\.512, 64\.\.1024 or a list ending in 1000\)/,
     'names the counts and the ranges either side');
for my $g ('64..1024', '8..8', '3..12') {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', $g, '--no-progress');
    is($c, 0, "--gpus $g: searched") or diag $e;
}
# A B past the bound on a count (2^24 = 16777216) never ended the
# doubling: past 2^62 the integer wrapped to a negative count, <= B
# again, and the list grew until memory ran out ('1..99999999999999999999'
# and '1..9223372036854775807' hung).  Refused, exit 1, naming the bound.
for my $g ('1..99999999999999999999', '1..9223372036854775807', '3..16777217') {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', $g, '--no-progress');
    is($c, 1, "--gpus $g: exit 1, no hang");
    like($e, qr/^gpuplan: plan: --gpus '\Q$g\E': B is at most 16777216, the bound on a count$/m,
         "--gpus $g: names the bound");
}

# 11. A MoE train case without the experts' width was not predicted with
# the reason "model.moe without its expert width", naming no field to
# give.  It names model.moe.expert_ffn_hidden (SCHEMA.md) and says that
# model.ffn_hidden is the dense layers'.
{
    my $f = put('moe.json', <<'JSON');
[{"id": "moe-case", "kind": "train",
  "model": {"name": "m", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn_hidden": 14336,
            "ffn_gated": true, "vocab": 32000, "moe": {"experts": 8, "top_k": 2}},
  "hardware": {"gpu": "h100-sxm", "gpus": 64, "gpus_per_node": 8, "inter_node": "ib-ndr-400", "nics_per_node": 8},
  "parallel": {"tp": 2, "pp": 1, "dp": 32, "ep": 8, "sp": true, "zero": 1, "global_batch": 256},
  "workload": {"seq_len": 4096, "precision": "bf16", "method": "pretrain"},
  "measured": {"metric": "mfu", "value": 0.3, "unit": "fraction"}}]
JSON
    ($c, $o, $e) = run_gp('validate', $f);
    is($c, 0, 'a case not predicted: exit 0 (listed with its reason)');
    # placed at the field's line (harden79b): FILE:3, model.moe's line
    like($o, qr/^moe-case\s+train\s+mfu\s+\Q$f\E:3: case 'moe-case': field 'model\.moe\.expert_ffn_hidden': model\.moe\.expert_ffn_hidden not given \(one expert's intermediate width; model\.ffn_hidden is the dense layers'\)$/m,
         'the reason names the field');
}

# 12. plan --deadline -5d exited 2 as text that is no duration, where
# --budget -1 and --deadline 0d exit 1 as values of the wrong size ("must
# be a positive ..."), docs/output.md's line between a value the option
# cannot parse (2) and one it refuses (1).  A negative duration is refused
# as 0d is; text that is no duration ('-x') stays exit 2.
for my $d ('-5d', '-0d') {
    ($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9', '--no-progress', '--deadline', $d);
    is($c, 1, "--deadline $d: exit 1, as --budget -1");
    like($e, qr/^gpuplan: plan: --deadline '$d': must be a positive duration$/m, "--deadline $d: the reason");
}
($c, $o, $e) = run_gp('plan', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--tokens', '1e9', '--no-progress', '--deadline', '-x');
is($c, 2, "--deadline -x: no duration, exit 2");

done_testing();
