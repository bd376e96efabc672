# Hardening round 78: inputs a new user gives that were taken silently or
# refused without the argument or the line.  Each test fails on the tree
# before its fix.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();
require JSON::PP;

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

open my $fh, '<', 'validation/cases.json' or die $!;
my $all = JSON::PP->new->decode(do { local $/; <$fh> });
close $fh;
my %by = map { $_->{id} => $_ } @$all;

# 1. A list element of a case that the schema refuses
# (parallel.recompute_modules: ["mlp_act2"]) was reported at the case's
# first line ("FILE:2"), the scan of lines keeping objects' keys alone.
# Now at its list's key, as any other field is.
{
    my $case = JSON::PP->new->decode(JSON::PP->new->encode(
        $by{'mlm-dsv3-gb200-guide-mxfp8-alltoall-baseline-494'}));
    ok($case, 'the MXFP8 DeepSeek-V3 guide row is shipped');
    $case->{parallel}{recompute_modules} = ['mlp_act2'];
    my $text = JSON::PP->new->canonical->pretty->encode([$case]);
    my @lines = split /\n/, $text;
    my ($want) = grep { $lines[$_ - 1] =~ /"recompute_modules" : \[/ } 1 .. @lines;
    ok($want && $want > 2, "the list's key is on line $want, not the case's first");
    my $f = "$dir/list.json";
    open my $out, '>', $f or die $!;
    print $out $text;
    close $out;
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    isnt($c, 0, 'a bad list element: non-zero exit');
    like($e, qr/^gpuplan: \Q$f\E:$want: case '[^']+': field 'parallel\.recompute_modules\[1\]': expected one of .*got "mlp_act2"/m,
         "a bad list element: FILE:$want, its list's line, and the element named") or diag $e;
}

# 2. fit --tp 2 without --gpus was refused as "--gpus 1 is not a multiple
# of tp*pp*cp = 2", a --gpus never typed (fit's default, 1).  Said as the
# default, with the count to give; a --gpus given is said as before.
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--tp', '2');
is($c, 2, 'fit --tp 2 alone: a usage error');
like($e, qr/fit: --gpus 1 \(the default\) is not a multiple of tp\*pp\*cp = 2: give --gpus 2/,
     'the default named as one, and the count to give') or diag $e;
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--method', 'infer', '--tp', '2',
                      '--pp', '2');
like($e, qr/fit: --gpus 1 \(the default\) is not a multiple of tp\*pp = 4: give --gpus 4/,
     'method infer: the same, tp*pp') or diag $e;
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--tp', '2', '--gpus', '3');
like($e, qr/fit: --gpus 3 is not a multiple of tp\*pp\*cp = 2$/m, 'a --gpus given: as typed') or diag $e;
($c, $o, $e) = run_gp('fit', 'llama3-8b', '--gpu', 'h100-sxm', '--tp', '2', '--gpus', '2');
is($c, 0, 'fit --tp 2 --gpus 2 runs') or diag $e;

# 3. model import: a config.json field the importer refuses was named
# without its line ("config.json: hidden_size must be ..."), where a case
# file's names FILE:LINE.  Now FILE:LINE of the field, found key by key
# along its path (text_config.vocab_size: the vocab_size inside
# text_config, line 6, not the top level's on line 8).
{
    my $f = "$dir/config.json";
    open my $out, '>', $f or die $!;
    print $out qq({\n "model_type": "llava",\n "text_config": {\n  "model_type": "llama",\n)
        . qq(  "hidden_size": 4096,\n  "vocab_size": 0\n },\n "vocab_size": 5\n}\n);
    close $out;
    ($c, $o, $e) = run_gp('model', 'import', $f, '--id', 'x');
    is($c, 1, 'a nested field out of range: exit 1');
    like($e, qr/^gpuplan: \Q$f\E:6: text_config\.vocab_size must be an integer in 1\.\.16777216 \(got 0\)$/m,
         'FILE:6, the nested field\'s own line') or diag $e;
    is($o, '', 'nothing printed');
}

done_testing();
