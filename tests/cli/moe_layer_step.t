# moe.layer_step (MoE every N-th layer, Llama 4 Maverick's
# interleave_moe_layer_step 2) from the command line: the catalog entry's
# counts, and a bad step in a case file or a catalog file refused at its
# file:line with the key named, exit 1 (a value out of range).
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

# Hand count (tests/c/t_moe_step.c): 24 dense layers of 3 x 5120 x 16384
# = 6,039,797,760; 24 MoE layers of (128 + 1) x 3 x 5120 x 8192 =
# 389,566,955,520 and routers 24 x 5120 x 128 = 15,728,640; total
# 400,711,848,960, active 17,184,691,200.
my ($c, $o, $e) = run_gp('model', 'params', 'llama4-maverick');
is($c, 0, 'model params llama4-maverick: exit 0') or diag $e;
like($o, qr/^dense_mlp\s+6039797760\s/m, 'the 24 dense layers');
like($o, qr/^experts\s+389566955520\s/m, 'the experts of the 24 MoE layers');
like($o, qr/^router\s+15728640\s/m, 'the routers of the 24 MoE layers');
like($o, qr/^total\s+400711848960\s/m, 'total 400.71B');
like($o, qr/^active\s+17184691200\s/m, 'active 17.18B');

my $dir = tempdir(CLEANUP => 1);
# A train case of a 4-layer MoE model; the step sits on line 10.
sub case_with {
    my ($step) = @_;
    return <<"JSON";
[
 {
  "id": "step-case",
  "kind": "train",
  "model": {
   "name": "tiny", "layers": 4, "hidden": 64, "heads": 4, "ffn_hidden": 256,
   "ffn_gated": true, "vocab": 1000,
   "moe": {
    "experts": 4, "top_k": 1, "expert_ffn_hidden": 128,
    "layer_step": $step
   }
  },
  "hardware": {"gpu": "h100-sxm", "gpus": 8},
  "parallel": {"tp": 1, "pp": 1, "dp": 8, "ep": 4, "micro_batch": 1, "global_batch": 64},
  "workload": {"seq_len": 128, "precision": "bf16"},
  "measured": {"metric": "step_time_s", "value": 0.05, "unit": "s"},
  "source": {"title": "t", "where": "t", "id": "t", "date": "2026-01-01"}
 }
]
JSON
}

write_file("$dir/ok.json", case_with(2));
($c, $o, $e) = run_gp('validate', "$dir/ok.json", '--format', 'csv');
is($c, 0, 'a step-2 case: exit 0') or diag $e;
like($o, qr/^step-case,train,step_time_s,0\.05,[\d.]+,/m, 'and predicted');

write_file("$dir/zero.json", case_with(0));
($c, $o, $e) = run_gp('validate', "$dir/zero.json");
is($c, 1, 'layer_step 0 in a case: exit 1');
is($e, "gpuplan: $dir/zero.json:10: case 'step-case': field 'model.moe.layer_step': "
     . "must be in 1..layers (4), got 0\n", 'named at its line, in the words of a step past the layers');

write_file("$dir/over.json", case_with(5));
($c, $o, $e) = run_gp('validate', "$dir/over.json");
is($c, 1, 'layer_step past the layers in a case: exit 1');
is($e, "gpuplan: $dir/over.json:10: case 'step-case': field 'model.moe.layer_step': "
     . "must be in 1..layers (4), got 5\n", 'named at its line, with the layers');

# A fraction: the same range as a script's model table gets from the
# engine's binding ("must be an integer in 0..layers (L)"), not the field
# reader's "expected an integer", at its line; dense_layers alike.
write_file("$dir/half.json", case_with(0.5));
($c, $o, $e) = run_gp('validate', "$dir/half.json");
is($c, 1, 'layer_step 0.5 in a case: exit 1');
is($e, "gpuplan: $dir/half.json:10: case 'step-case': field 'model.moe.layer_step': "
     . "must be an integer in 1..layers (4), got 0.5\n", 'named at its line, with its range');
write_file("$dir/dfrac.json", case_with('1, "dense_layers": 1.5'));
($c, $o, $e) = run_gp('validate', "$dir/dfrac.json");
is($c, 1, 'dense_layers 1.5 in a case: exit 1');
is($e, "gpuplan: $dir/dfrac.json:10: case 'step-case': field 'model.moe.dense_layers': "
     . "must be an integer in 0..layers (4), got 1.5\n", 'dense_layers: named at its line, with its range');

# A catalog file: the entry's line.
mkdir "$dir/cat";
write_file("$dir/cat/a.lua", "-- a model\n"
    . "model { id = 'step0', name = 'x', layers = 2, hidden = 64, heads = 8, ffn_hidden = 128, "
    . "vocab = 100, params_b = 1, source = 't', moe = { experts = 4, top_k = 2, ffn_hidden = 32, "
    . "layer_step = 0 } }\n");
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
is($c, 1, 'layer_step 0 in a catalog file: exit 1');
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'step0': field 'moe\.layer_step': must be in 1\.\.layers \(2\), got 0$/m,
     'named at the entry\'s line');
write_file("$dir/cat/a.lua", "-- a model\n"
    . "model { id = 'dfrac', name = 'x', layers = 2, hidden = 64, heads = 8, ffn_hidden = 128, "
    . "vocab = 100, params_b = 1, source = 't', moe = { experts = 4, top_k = 2, ffn_hidden = 32, "
    . "dense_layers = 1.5 } }\n");
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
is($c, 1, 'dense_layers 1.5 in a catalog file: exit 1');
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'dfrac': field 'moe\.dense_layers': must be an integer in 0\.\.layers \(2\), got 1\.5$/m,
     'a fraction: the entry\'s line, the range a script reads');

# The same field named one way, in the same words, wherever a model is
# written (followups16): a catalog entry's step past its layers said
# "model 'x': moe.layer_step must be in 1..layers (2), got 5" (the
# engine's words, no field), a case file's "1..model.layers", a script's
# model table "must be an integer in 1..2147483647 (got 0)" for 0.
write_file("$dir/cat/a.lua", "-- a model\n"
    . "model { id = 'step5', name = 'x', layers = 2, hidden = 64, heads = 8, ffn_hidden = 128, "
    . "vocab = 100, params_b = 1, source = 't', moe = { experts = 4, top_k = 2, ffn_hidden = 32, "
    . "layer_step = 5 } }\n");
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
is($c, 1, 'layer_step past the layers in a catalog file: exit 1');
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'step5': field 'moe\.layer_step': must be in 1\.\.layers \(2\), got 5$/m,
     'named as a field, in the same words') or diag $e;
for my $step (0, 5) {
    write_file("$dir/s$step.lua", "local gp = require 'gpuplan'\n"
        . "gp.train { model = { name = 'x', layers = 4, hidden = 64, heads = 8, ffn_hidden = 128, "
        . "vocab = 100, moe = { experts = 4, top_k = 2, ffn_hidden = 32, layer_step = $step } }, "
        . "gpu = 'h100-sxm', gpus = 8 }\n");
    ($c, $o, $e) = run_gp('run', "$dir/s$step.lua");
    is($c, 1, "a script's model table with layer_step $step: exit 1");
    like($e, qr/^gpuplan: \Q$dir\E\/s$step\.lua:2: train: model\.moe\.layer_step must be in 1\.\.layers \(4\), got $step$/m,
         "layer_step $step: the script's line, the same words") or diag $e;
}

done_testing();
