# Hardening round 79b: a validation case a predictor refuses, and the comm
# command's sizes.  Each test fails on the tree before its fix; each checks
# the exit code and the message.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();
require JSON::PP;

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

my $all = shipped_cases();
sub shipped { my ($id) = @_; my ($x) = grep { $_->{id} eq $id } @$all; ok($x, "$id is shipped"); return JSON::PP->new->decode(JSON::PP->new->encode($x)) }
# the case written out alone; the line of the first line matching $re
sub case_file {
    my ($name, $case, $re) = @_;
    my $text = JSON::PP->new->canonical->pretty->encode([$case]);
    my @lines = split /\n/, $text;
    my ($line) = $re ? grep { $lines[$_ - 1] =~ $re } 1 .. @lines : (2);
    my $f = "$dir/$name.json";
    write_file($f, $text);
    return ($f, $line);
}

# 1. A case the reader takes and a predictor refuses read "prediction
# failed: ep 2 given for a dense model" (or the refusal alone) with no file
# and line.  Now FILE:LINE: case 'ID': as the reader's own refusals, at the
# field's line where the refusal names an option the case gives with that
# value (parallel.ep 2), else at the case's first line (line 2 of a pretty
# one-case array).  Still not predicted: exit 0, the row's reason.
{
    my $id = 'mbridge2511-b200-llama31-405b';
    my $case = shipped($id);
    $case->{parallel}{ep} = 2;
    my ($f, $line) = case_file('ep', $case, qr/^\s*"ep" : 2,?$/);
    ok($line > 2, "parallel.ep is on line $line");
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    is($c, 0, 'ep 2 on a dense model: not predicted, exit 0') or diag $e;
    like($o, qr/^\Q$id\E,train,tokens_per_s_per_gpu,661,,,,,\Q$f\E:$line: case '\Q$id\E': field 'parallel\.ep': train: ep 2 given for a dense model,/m,
         "FILE:$line, the case, the field, the refusal's words") or diag $o;
    unlike($o, qr/prediction failed|\.lua:\d+/, 'no "prediction failed", no internal file:line') or diag $o;
    # the text table alike
    ($c, $o, $e) = run_gp('validate', $f);
    is($c, 0, 'text: exit 0');
    like($o, qr/\Q$f\E:$line: case '\Q$id\E': field 'parallel\.ep': train: ep 2 given for a dense model/,
         'text: the same reason') or diag $o;
}
# A model that does not fit: the refusal names no field, so the case's line.
{
    my $id = 'nim180-llama33-70b-2xh100-fp8-5000-500-c5-output_throughput';
    my $case = shipped($id);
    $case->{hardware}{gpu} = 'rtx-4090';
    my ($f, $line) = case_file('fit', $case);
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    is($c, 0, 'does not fit: not predicted, exit 0') or diag $e;
    like($o, qr/,"\Q$f\E:2: case '\Q$id\E': does not fit: needs [\d.]+ GB per GPU/m,
         'FILE:2 (the case), the verdict kept') or diag $o;
}
# A refusal raised inside a predictor naming a case field by its path:
# model.moe = {} -> "model.moe.experts is required", at model.moe's line
# (the nearest field the file holds).
{
    my ($x) = grep { $_->{kind} eq 'memory' && ref $_->{model} eq 'HASH' } @$all;
    ok($x, 'a memory case with an inline model is shipped');
    my $case = JSON::PP->new->decode(JSON::PP->new->encode($x));
    $case->{model}{moe} = {};
    my ($f, $line) = case_file('moe', $case, qr/^\s*"moe" : \{\},?$/);
    ok($line > 2, "model.moe is on line $line");
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    is($c, 0, 'moe {}: not predicted, exit 0') or diag $e;
    like($o, qr/,\Q$f\E:$line: case '[^']+': field 'model\.moe\.experts': model\.moe\.experts is required/m,
         "FILE:$line, the field") or diag $o;
    unlike($o, qr/prediction failed/, 'no "prediction failed"') or diag $o;
}
# An rl case with model.moe = {} failed inside the predictor: "attempt to
# perform arithmetic on a nil value (field 'experts')", a Lua error.  Now
# the other predictors' refusal, at model.moe's line.
{
    my $id = 'verl-playverl-grpo-qwen2.5-0.5b-h100-8-fsdp-gsm8k';
    my $case = shipped($id);
    $case->{model}{moe} = {};
    my ($f, $line) = case_file('rlmoe', $case, qr/^\s*"moe" : \{\},?$/);
    ok($line > 2, "model.moe is on line $line");
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    is($c, 0, 'rl moe {}: not predicted, exit 0') or diag $e;
    like($o, qr/,\Q$f\E:$line: case '\Q$id\E': field 'model\.moe\.experts': model\.moe\.experts is required,/m,
         "FILE:$line, the field, the refusal") or diag $o;
    unlike($o, qr/attempt to|prediction failed/, 'no Lua error') or diag $o;
}

# The shipped record keeps its counts: the DP-attention and does-not-fit
# rows are still not predicted (exit 0), their reasons now placed, by the
# name the help gives the file (no machine path).
{
    ($c, $o, $e) = run_gp('validate', '--format', 'csv', '--kind', 'infer');
    is($c, 0, 'shipped infer cases: exit 0');
    like($o, qr/^dstack-dsr1-h200-sglang-tp8-3200in-800out-c4,infer,output_tokens_per_s,82\.63,,,,,validation\/cases\.json:\d+: case 'dstack-dsr1-h200-sglang-tp8-3200in-800out-c4': infer: concurrency 4 over 8 GPUs with DP attention: each runs whole requests \(give a multiple of 8\),/m,
         'a DP-attention row: not predicted, placed in validation/cases.json') or diag $o;
    my $n = () = $o =~ /^[^,]+,infer,[^,]+,[^,]+,,/mg;
    # 7 (before the AIPerf rows): the file's 908 infer cases less the 901 the coverage table counts
    # predicted (tests/cli/validate.t): the six before (the dstack
    # TensorRT-LLM 6400-out row that the MoE serving model refused is
    # priced since it queues requests above its KV-bound batch) and the
    # MLPerf v6.0 MI355X row at a 1000 W cap, which the cdna4 arch has no
    # power curve to price.  20: and the 13 AIPerf Qwen3-0.6B rows at a
    # concurrency that does not split evenly over their 8 replicas.  7:
    # those 13 priced as the router splits them (gpuplan.infer
    # split_replicas).
    is($n, 7, '7 infer rows not predicted, as the coverage table counts');
}

# 2. comm: a size nccl-tests would round was printed as asked: --min 7
# --max 7 gave "7 1" (count 1), where nccl-tests runs and prints count =
# 7 / 4 = 1 float, 4 B (src/common.cu setupArgs "count = size /
# wordSize(type)", printed "max(args->sendBytes, args->expectedBytes),
# args->nbytes / wordSize(type)"), and all_gather, reduce_scatter and
# all_to_all round each rank's share down to 16 B ("(count/nranks) &
# ~(16/eltSize - 1)"), printing the per-rank count.  8 x h100-sxm: 8 ranks.
my %want = (
    # size 7: 1 float -> 4 B, count 1
    all_reduce => [7, 4, 1], broadcast => [7, 4, 1], reduce => [7, 4, 1], send_recv => [7, 4, 1],
    # 1000 B = 250 floats, 31 a rank -> 28 (a multiple of 4) -> 28 x 8 x 4 = 896 B, count 28
    all_gather => [1000, 896, 28], reduce_scatter => [1000, 896, 28], all_to_all => [1000, 896, 28],
);
for my $op (sort keys %want) {
    my ($ask, $bytes, $count) = @{$want{$op}};
    ($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--op', $op, '--min', $ask, '--max', $ask,
                          '--format', 'csv');
    is($c, 0, "$op $ask B: exit 0") or diag $e;
    like($o, qr/\A[^\n]*\n$bytes,$count,/, "$op $ask B: nccl-tests' $bytes B, count $count") or diag $o;
}
# all_gather of 8 B over 8 ranks: 2 floats, 0 a rank -> 0 B, count 0 (the
# row nccl-tests prints), priced as no data moved.
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--op', 'all_gather', '--min', '8', '--max', '8',
                      '--format', 'csv');
is($c, 0, 'all_gather 8 B: exit 0');
like($o, qr/\A[^\n]*\n0,0,0\.00,/, 'all_gather 8 B over 8 ranks: 0 B, count 0, 0 us') or diag $o;
# whole sizes keep theirs: 1 MiB all_reduce, count 262144
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--min', '1MiB', '--max', '1MiB', '--format', 'csv');
like($o, qr/\A[^\n]*\n1048576,262144,/, 'all_reduce 1 MiB: as asked') or diag $o;
# the text table: the row as nccl-tests prints it
($c, $o, $e) = run_gp('comm', '--gpu', 'h100-sxm', '--min', '7', '--max', '7');
is($c, 0, 'text: exit 0');
like($o, qr/^\s+4\s+1\s+[\d.]+/m, 'text: 4 B, count 1') or diag $o;
unlike($o, qr/^\s+7\s+1\s/m, 'not 7 B') or diag $o;

done_testing();
