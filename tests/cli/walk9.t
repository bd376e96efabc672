# What a ninth walk (a new user's first hour from the README and docs/:
# each command, a case file of their own, a card of their own in Lua)
# found.  One block a fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';

my ($c, $o, $e);

# 1. A card or model given as an argument to a command that takes none
# (roofline, comm): "gpuplan roofline h100-sxm" answered "--gpu ID is
# required" of the card it had been given, and "gpuplan comm h100-sxm"
# pointed at --system.  Now the message names the option the id goes with.
($c, $o, $e) = run_gp('roofline', 'h100-sxm');
is($c, 2, 'roofline CARD: a usage error');
like($e, qr/^gpuplan: roofline: no arguments \(got 'h100-sxm'\): give it as --gpu h100-sxm$/m,
     'roofline CARD: names --gpu') or diag $e;
($c, $o, $e) = run_gp('roofline', '--gpu', 'h100-sxm', 'llama3-8b');
is($c, 2, 'roofline --gpu CARD MODEL: a usage error');
like($e, qr/\(got 'llama3-8b'\): give it as --model llama3-8b$/m, 'names --model') or diag $e;
($c, $o, $e) = run_gp('comm', 'h100-sxm');
is($c, 2, 'comm CARD: a usage error');
like($e, qr/^gpuplan: comm: no arguments \(got 'h100-sxm'\): give it as --gpu h100-sxm$/m,
     'comm CARD: names --gpu, not --system') or diag $e;
($c, $o, $e) = run_gp('comm', 'dgx-h100');
like($e, qr/\(got 'dgx-h100'\): give it as --system dgx-h100$/m, 'comm SYSTEM: names --system')
  or diag $e;
($c, $o, $e) = run_gp('comm', 'no-such-thing');
is($c, 2, 'comm WORD: a usage error');
like($e, qr/\(got 'no-such-thing'\); --system ID or --gpu ID$/m, 'comm WORD: both options')
  or diag $e;

# 2. train --price (or --currency, --market) without --tokens: the run's
# days and cost need its size, and the text printed nothing of the price
# given -- an option accepted that changed no line.  Now the hour's and
# the step's cost, which need no size, and what --tokens adds.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3',
                      '--price', '2CNY/h');
is($c, 0, 'train --price without --tokens exits 0') or diag $e;
my ($step) = $o =~ /^step\s+([\d.]+)/m;
# 2 CNY/GPU-h x 8 GPUs = 16 CNY an hour; a step: 16 x step_s / 3600
# (step_s 4.54 s: 0.020 CNY); two decimals as printed, hence the tolerance
like($o, qr/^cost: 2\.00 CNY\/GPU-h x 8 GPUs = 16\.00 CNY an hour, ([\d.]+) CNY a step \(--tokens N: the run's days and cost\)$/m,
     'train --price: the hour and the step priced') or diag $o;
my ($per_step) = $o =~ / ([\d.]+) CNY a step/;
ok(defined $step && defined $per_step && abs($per_step - 16 * $step / 3600) < 0.0006,
   "a step's cost is 16 x step / 3600 (step $step s)");
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero', '3');
unlike($o, qr/^cost/m, 'no price given: no cost line (the default price alone is no question)');

# 3. validate on a user's case file whose cases are all predicted printed
# a "Not predicted" title over a header and no rows.  Now one line says
# there are none (the shipped file, with cases not predicted, keeps its
# table: tests/cli/validate.t).
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $f = "$dir/mine.json";
    open(my $fh, '>', $f) or die;
    # a collective case as validation/cases.json writes one: 8 x H100
    # all-reduce of 1 GiB, a measurement of the user's own
    print $fh <<'JSON';
[{"id": "my-ar", "kind": "collective", "collective": "all_reduce", "bytes": 1073741824,
  "hardware": {"gpu": "h100-sxm", "gpus": 8, "gpus_per_node": 8},
  "measured": {"metric": "busbw_gbps", "value": 450, "unit": "GB/s"},
  "source": {"title": "my nccl-tests run", "id": "mine"}}]
JSON
    close $fh;
    ($c, $o, $e) = run_gp('validate', $f);
    is($c, 0, 'validate a file of one predicted case exits 0') or diag $e;
    like($o, qr/^Not predicted: none$/m, 'no empty "Not predicted" table: "none"') or diag $o;
    unlike($o, qr/^id\s+kind\s+metric\s+reason\s*$/m, 'no header over no rows');
    like($o, qr/^my-ar\s+collective\s+busbw_gbps/m, 'the predicted case is listed');
}

# 4. plan --svg where no layout fits: the three files were written as
# empty axes -- the Pareto chart's note "0 layouts; the line joins those no
# other beats on both", the memory and step charts nothing -- and none said
# why.  Each now carries the reason the text gives (405B on one H100).
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    ($c, $o, $e) = run_gp('plan', 'llama3.1-405b', '--gpu', 'h100-sxm', '--gpus', '1',
                          '--tokens', '1e11', '--svg', "$dir/p");
    is($c, 0, 'plan --svg with nothing fitting exits 0 (an answer)') or diag $e;
    like($o, qr/^no layout fits \(the nearest layout needs/m, 'the text says none fits') or diag $o;
    for my $k (qw(pareto memory step)) {
        open(my $fh, '<', "$dir/p-$k.svg") or do { fail("p-$k.svg written"); next };
        local $/;
        my $svg = <$fh>;
        like($svg, qr/>No layout fits \(the nearest layout needs [\d.]+ GiB per GPU/, "p-$k.svg says why it is empty");
        unlike($svg, qr/0 layouts; the line joins/, "p-$k.svg: no '0 layouts' note");
    }
}

# 5. fit --method infer on several GPUs titled "on h100-sxm x2, method
# infer" and sized a whole replica a GPU (tp 1): neither the title nor
# the defaults said how the GPUs held the model, where gpuplan infer's
# title says "(tp 1, pp 1)".  Now the title says tp, pp and the replicas.
# Llama 3.1 70B in bf16: 70.6e9 x 2 B = 131.4 GiB a whole replica, 65.7
# GiB a GPU at tp 2 (the weights row, which must halve).
{
    my %w;
    for my $t ([], ['--tp', '2']) {
        ($c, $o, $e) = run_gp('fit', 'llama3.1-70b', '--gpu', 'h100-sxm', '--gpus', '2',
                              '--method', 'infer', @$t);
        is($c, 0, "fit --method infer --gpus 2 @$t exits 0") or diag $e;
        my $tp = @$t ? 2 : 1;
        my $rep = @$t ? '' : ', 2 replicas';
        like($o, qr/^llama3\.1-70b on h100-sxm x2, method infer \(tp $tp, pp 1\Q$rep\E\)$/m,
             "title: tp $tp$rep") or diag $o;
        ($w{$tp}) = $o =~ /^weights\s+([\d.]+)/m;
    }
    # 2 x the tp-2 share, to the table's two decimals
    ok(defined $w{1} && defined $w{2} && abs($w{1} - 2 * $w{2}) < 0.02,
       "tp 1 holds the whole weights a GPU ($w{1} GiB = 2 x $w{2})");
}

# 6. A case file's measured value written as a string ("7000"): "'measured'
# needs a metric and a numeric value" at the case's first line, where every
# other wrong field is named at its own.  Now the field and its line.
{
    my $dir = File::Temp::tempdir(CLEANUP => 1);
    my $f = "$dir/mine.json";
    open(my $fh, '>', $f) or die;
    print $fh <<'JSON';
[{"id": "my-ar", "kind": "collective", "collective": "all_reduce", "bytes": 1073741824,
  "hardware": {"gpu": "h100-sxm", "gpus": 8, "gpus_per_node": 8},
  "measured": {"metric": "busbw_gbps",
               "value": "450"},
  "source": {"title": "my nccl-tests run", "id": "mine"}}]
JSON
    close $fh;
    ($c, $o, $e) = run_gp('validate', $f);
    is($c, 1, 'a string value: an error');
    like($e, qr/^gpuplan: \Q$f\E:4: case 'my-ar': field 'measured\.value': expected a number, got "450"$/m,
         'named at its line (4), as the field it is') or diag $e;
}

# 7. In Lua a deadline is a string with its unit or a number of seconds
# (sweep.lua duration), so gp.sweep{deadline = 30} ranked against 30 s and
# returned no layout, where the command line refuses a bare 30; the
# option's help (the reference of both) named only the units.
($c, $o, $e) = run_gp('plan', '--help');
like($o =~ s/\s+/ /gr, qr/--deadline D train --tokens within D \(30d, 12h, 2w; Lua: a string with its unit, or a number of seconds: deadline = 30 is 30 s/,
     'plan --help: a Lua deadline number is seconds') or diag $o;

# 8. comm --max 1e20 (a size past an integer's range) and --max 1.5 (no
# whole byte count) both read "--max expects a size like 8, 1MiB or 4GB",
# where 1e16 was told the range.  Now 1e20 is told the range too (2^50 B,
# exit 1; the value as typed follows), and 1.5 that a size is whole bytes (a usage error, exit 2).
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '1e20');
is($c, 1, 'comm --max 1e20: out of range, exit 1');
like($e, qr/^gpuplan: comm: --max must be a size of 1 B to 2\^50 B \(1 PiB\), got 1e\+20 \(--max 1e20\)$/m,
     'comm --max 1e20: the range') or diag $e;
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--max', '1.5');
is($c, 2, 'comm --max 1.5: a usage error');
like($e, qr/^gpuplan: comm: --max '1\.5': a size is a whole number of bytes/m,
     'comm --max 1.5: whole bytes') or diag $e;
($c, $o, $e) = run_gp('comm', '--system', 'dgx-h100', '--min', '1e6', '--max', '1e6');
is($c, 0, 'comm --min 1e6 --max 1e6: one size') or diag $e;
like($o, qr/^\s+1000000\s/m, '1e6 bytes is 1000000');

done_testing();
