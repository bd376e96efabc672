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

my $all = shipped_cases();
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

# 4. A user catalog entry spelt over many lines with a bad field was said
# at the entry's first line ("m.lua:1: model 'my-8b': field 'params_b'"),
# the field lines below.  Now at the field's own line, for the schema's
# refusals (line 6: params_b), the references' (line 13: scaleup's
# fabric) and the engine's checks (line 4: kv_heads, "kv_heads (5) must
# divide heads (32)"); a required field left out keeps the entry's line
# (no line spells it).
{
    my $cat = "$dir/cat";
    mkdir $cat;
    my $write = sub {
        my ($model_extra, $gpu_fabric, $params) = @_;
        open my $out, '>', "$cat/m.lua" or die $!;
        print $out <<"LUA";
model {
  id = "my-8b", name = "My 8B", family = "llama",
  layers = 32, hidden = 4096, heads = 32, head_dim = 128,
  $model_extra
  ffn_hidden = 14336, ffn_gated = true, vocab = 128256, norm = "rms",
  $params
  source = "test",
}
gpu {
  id = "g2", name = "G", vendor = "T", arch = "hopper",
  memory = GiB(48), mem_bw = "1TB/s",
  peak = { bf16 = "100TFLOPS", fp32 = "10TFLOPS" },
  scaleup = { fabric = "$gpu_fabric", domain = 4 },
  source = "t",
}
LUA
        close $out;
    };
    $write->('kv_heads = 8,', 'nvlink4', 'params_b = -1,');
    ($c, $o, $e) = run_gp('catalog', 'check', $cat);
    is($c, 1, 'a bad params_b: catalog check exits 1');
    like($e, qr/^\Q$cat\E\/m\.lua:6: model 'my-8b': field 'params_b': must be positive, got -1$/m,
         'the schema\'s refusal at its field\'s line (6)') or diag $e;
    $write->('kv_heads = 8,', 'nvlink-x', 'params_b = 8.03,');
    ($c, $o, $e) = run_gp('catalog', 'check', $cat);
    like($e, qr/^\Q$cat\E\/m\.lua:13: gpu 'g2': field 'scaleup\.fabric': /m,
         'an unknown reference at its field\'s line (13)') or diag $e;
    $write->('kv_heads = 5,', 'nvlink4', 'params_b = 8.03,');
    ($c, $o, $e) = run_gp('catalog', 'check', $cat);
    like($e, qr/^\Q$cat\E\/m\.lua:4: model 'my-8b': kv_heads \(5\) must divide heads \(32\)$/m,
         'the engine\'s check at the line of the field it opens with (4)') or diag $e;
    $write->('kv_heads = 8,', 'nvlink4', '');
    ($c, $o, $e) = run_gp('catalog', 'check', $cat);
    like($e, qr/^\Q$cat\E\/m\.lua:1: model 'my-8b': field 'params_b': required field is missing$/m,
         'a missing field: the entry\'s first line') or diag $e;
}

# 5. train --shared-norm: a model field given as a flag was "unknown
# option" alone; now said to be the model's, set in its catalog entry.
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--shared-norm');
is($c, 2, 'train --shared-norm: a usage error');
like($e, qr/unknown option '--shared-norm' \(shared_norm is a field of the model, not of the job: set it in the model's catalog entry, docs\/models\.md\)/,
     'the model\'s field, and where it goes') or diag $e;
# and the misspelt new option offers itself, not '--zero'
($c, $o, $e) = run_gp('train', 'llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--zero-gather-copy');
like($e, qr/unknown option '--zero-gather-copy' \(did you mean '--zero-gather-copies'\?\)/,
     '--zero-gather-copy: --zero-gather-copies offered') or diag $e;

done_testing();
