# Hardening round 79: inputs a new user gives to the options and paths of
# the last rounds (stage_layers, ema, the case file's fields, a script's
# model table) that were taken silently, said wrongly or refused without
# the line.  Each test fails on the tree before its fix; each checks the
# exit code and the message.
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();
require JSON::PP;

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);
my @meg = ('llama3-8b', '--gpu', 'h100-sxm', '--gpus', '8', '--pp', '2', '--stack', 'megatron');

# 1. A --stage-layers entry that is a whole number past the bound (2^31 - 1,
# 16777217, 1e20 written out) was said as not a whole number: "must be a
# whole number of layers >= 1 (got '2147483647')".  Now the bound it
# passes, 16777216 (GP_COUNT_MAX).  The train and rl commands and a
# script's stage_layers alike.
for my $v ('2147483647', '16777217', '99999999999999999999') {
    ($c, $o, $e) = run_gp('train', @meg, '--stage-layers', "$v,1");
    is($c, 1, "--stage-layers $v,1: exit 1");
    like($e, qr/^gpuplan: train: value 1 of --stage-layers must be at most 16777216 layers \(got '$v'\)$/m,
         "--stage-layers $v,1: its bound named") or diag $e;
    is($o, '', 'nothing printed');
}
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--pp', '2',
                      '--stack', 'megatron', '--stage-layers', '14,2147483647');
is($c, 1, 'rl --stage-layers 14,2147483647: exit 1');
like($e, qr/^gpuplan: rl: value 2 of --stage-layers must be at most 16777216 layers \(got '2147483647'\)$/m,
     'rl: the second entry and its bound') or diag $e;
# The ones below the bound keep their words.
($c, $o, $e) = run_gp('train', @meg, '--stage-layers', '0,32');
is($c, 1, '--stage-layers 0,32: exit 1');
like($e, qr/value 1 of --stage-layers must be a whole number of layers >= 1 \(got '0'\)/,
     '0: still "a whole number of layers >= 1"') or diag $e;
# A script's list: 2^31 (a float) was said as no whole number.
{
    my $f = "$dir/sl.lua";
    write_file($f, qq(local gp = require "gpuplan"\n)
        . qq(gp.train { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, pp = 2, stack = "megatron",\n)
        . qq(  stage_layers = { 2 ^ 31, 16 } }\n));
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 1, 'stage_layers = {2^31, 16}: exit 1');
    like($e, qr/^gpuplan: \Q$f\E:2: train: stage_layers\[1\] must be at most 16777216 layers \(got 2147483648(\.0)?\)$/m,
         'the Lua key, its entry and the bound') or diag $e;
}

# 2. A script's model table with params_b = 0/0 was refused "(got -nan)",
# the C library's spelling of NaN (lua_pushfstring's %f), where every
# other key says NaN.
{
    my $f = "$dir/nan.lua";
    write_file($f, qq(local gp = require "gpuplan"\n)
        . qq(gp.infer { gpu = "h100-sxm", model = { layers = 32, hidden = 4096, heads = 32,\n)
        . qq(  kv_heads = 8, ffn_hidden = 14336, vocab = 128256, params_b = 0 / 0 } }\n));
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 1, 'params_b NaN: exit 1');
    like($e, qr/^gpuplan: \Q$f\E:2: infer: model\.params_b must be a positive number of billions, at most 1e6 \(got NaN\)$/m,
         'NaN said as NaN') or diag $e;
    unlike($e, qr/-nan/, 'not "-nan"');
}

# 3. A script's model table: attn_sinks = "no" was taken as true (any value
# but false and nil is, in Lua: gp.infer then priced vLLM's sink path),
# and name = 5 or family = {} were carried on (name into gp.infer's
# result as its model), where the catalog's schema refuses all three.
for my $kv (['attn_sinks = "no"', qr/model\.attn_sinks must be true or false \(got string 'no'\)/],
            ['name = 5', qr/model\.name must be a string \(got 5\)/],
            ['family = {}', qr/model\.family must be a string \(got a table\)/]) {
    my ($field, $want) = @$kv;
    my $f = "$dir/meta.lua";
    write_file($f, qq(local gp = require "gpuplan"\n)
        . qq(gp.infer { gpu = "h100-sxm", model = { layers = 32, hidden = 4096, heads = 32,\n)
        . qq(  kv_heads = 8, ffn_hidden = 14336, vocab = 128256, $field } }\n));
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 1, "model $field: exit 1");
    like($e, qr/^gpuplan: \Q$f\E:2: infer: $want$/m, "model $field: refused by its key") or diag $e;
}
# true and a string name price as before
{
    my $f = "$dir/meta_ok.lua";
    write_file($f, qq(local gp = require "gpuplan"\n)
        . qq(local r = gp.infer { gpu = "h100-sxm", model = { layers = 32, hidden = 4096, heads = 32,\n)
        . qq(  kv_heads = 8, ffn_hidden = 14336, vocab = 128256, name = "m", attn_sinks = true } }\n)
        . qq(print(r.model)\n));
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 0, 'attn_sinks = true, name = "m": runs') or diag $e;
    is($o, "m\n", 'the name is the result\'s model');
}

# 4. A case file's parallel.stage_layers: [] was read, and the case went
# unpredicted (exit 0) with gp.train's "stage_layers is empty", naming no
# line.  Now refused at its line, as any other field the schema refuses.
{
    my $all = shipped_cases();
    my ($case) = grep { $_->{id} eq 'mlm-dsv3-gb200-guide-mxfp8-hybridep-970' } @$all;
    ok($case, 'the DeepSeek-V3 GB200 guide row is shipped');
    $case->{parallel}{stage_layers} = [];
    my $text = JSON::PP->new->canonical->pretty->encode([$case]);
    my @lines = split /\n/, $text;
    my ($want) = grep { $lines[$_ - 1] =~ /"stage_layers" : \[/ } 1 .. @lines;
    ok($want && $want > 2, "the key is on line $want");
    my $f = "$dir/sl.json";
    write_file($f, $text);
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    is($c, 1, 'stage_layers []: exit 1');
    like($e, qr/^gpuplan: \Q$f\E:$want: case '[^']+': field 'parallel\.stage_layers': expected each pipeline stage's layers, first to last \(a list such as \[9, 9, 8, 6\]\), got an empty list$/m,
         "FILE:$want and the field") or diag $e;
    is($o, '', 'no table printed');
}

# 5. rl --ema refused "under --zero 3" where no --zero was given (the hf
# stack's default, verl's FSDP full_shard) or --fsdp set it: said as the
# default, or as the fsdp strategy; a --zero 3 given, as before.
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--ema');
is($c, 2, 'rl --ema alone: a usage error');
like($e, qr/^gpuplan: rl: --ema under --zero 3 \(the default\) gathers each parameter pair/m,
     'the default named as one') or diag $e;
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--ema', '--fsdp',
                      'full_shard');
is($c, 2, 'rl --ema --fsdp full_shard: a usage error');
like($e, qr/^gpuplan: rl: --ema under --zero 3 \(fsdp full_shard\) gathers/m,
     'the strategy that set it') or diag $e;
($c, $o, $e) = run_gp('rl', 'qwen2.5-7b', '--gpu', 'h100-sxm', '--gpus', '8', '--ema', '--zero', '3');
is($c, 2, 'rl --ema --zero 3: a usage error');
like($e, qr/^gpuplan: rl: --ema under --zero 3 gathers/m, 'a --zero given: as typed') or diag $e;

# 6. An itl_ms case at workload.output_len 1 (one token: no inter-token
# latency) went unpredicted with "prediction failed:
# .../lua/gpuplan/predict/infer.lua:1032: attempt to perform arithmetic on
# a nil value (field 'itl_load_s')", an internal file:line.  Now the field
# and its line, as hardware.gpu's refusal names them.
{
    my $all = shipped_cases();
    my ($case) = grep { $_->{id} eq 'gpustack-vllm0110-qwen3-8b-h100-sharegpt-c4-tpot' } @$all;
    ok($case, 'the gpustack Qwen3-8B TPOT row is shipped');
    is($case->{measured}{metric}, 'itl_ms', 'an itl_ms case');
    $case->{workload}{output_len} = 1;
    my $text = JSON::PP->new->canonical->pretty->encode([$case]);
    my @lines = split /\n/, $text;
    my ($want) = grep { $lines[$_ - 1] =~ /"output_len" : 1/ } 1 .. @lines;
    ok($want && $want > 2, "output_len is on line $want");
    my $f = "$dir/out1.json";
    write_file($f, $text);
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    is($c, 0, 'output_len 1: a case not predicted, as every refused case is (exit 0)') or diag $e;
    like($o, qr/^gpustack-vllm0110-qwen3-8b-h100-sharegpt-c4-tpot,infer,itl_ms,7\.38,,,,,\Q$f\E:$want: case '[^']+': field 'workload\.output_len': 1 output token has no inter-token latency/m,
         "its reason: FILE:$want and the field") or diag $o;
    unlike($o, qr/prediction failed|\.lua:\d+|attempt to/, 'no internal file:line, no Lua error') or diag $o;
}

# ... and a decode_tokens_per_s case at output_len 1 read "not predicted"
# alone (gp.infer's stream_tokens_per_s is nil there: no decode step runs).
{
    my $all = shipped_cases();
    my ($case) = grep { $_->{kind} eq 'infer' && $_->{measured}{metric} eq 'decode_tokens_per_s' } @$all;
    ok($case, 'a decode_tokens_per_s case is shipped');
    $case->{workload}{output_len} = 1;
    my $text = JSON::PP->new->canonical->pretty->encode([$case]);
    my @lines = split /\n/, $text;
    my ($want) = grep { $lines[$_ - 1] =~ /"output_len" : 1/ } 1 .. @lines;
    my $f = "$dir/dec1.json";
    write_file($f, $text);
    ($c, $o, $e) = run_gp('validate', $f, '--format', 'csv');
    is($c, 0, 'decode output_len 1: not predicted, exit 0') or diag $e;
    like($o, qr/,\Q$f\E:$want: case '[^']+': field 'workload\.output_len': 1 output token has no decode step \(the first token comes out of the prompt's forward/,
         "its reason: FILE:$want, the field and why") or diag $o;
    unlike($o, qr/,not predicted,/, 'not the bare "not predicted"') or diag $o;
}

done_testing();
