# A hybrid Mamba-2 stack from the command line: the catalog's Nemotron 3
# Nano counted by `model params`, the step pricers' refusal, and a bad
# hybrid_pattern refused at its line in a catalog file and a case file.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

# Hand counts (tests/c/t_model.c): 23 Mamba layers x 38,742,208 =
# 891,070,784; 6 attention layers x 23,396,352 = 140,378,112; total
# 31,577,937,344; KV 2 x 6 x 2 x 128 x 2 B = 6,144 a token; the Mamba
# state as vLLM serves it, the SSM state fp32 and the conv window bf16:
# 23 x (4 B x 64 x 64 x 128 + 2 B x 3 x 6144) = 49,082,368 a sequence
# (the bf16 figure, 24,965,120, is t_model.c's model_mamba_state_bytes).
my ($c, $o, $e) = run_gp('model', 'params', 'nemotron-3-nano-30b-a3b');
is($c, 0, 'model params nemotron-3-nano-30b-a3b: exit 0') or diag $e;
like($o, qr/^mamba\s+891070784\s/m, 'the 23 Mamba layers');
like($o, qr/^attention\s+140378112\s/m, 'the 6 attention layers');
like($o, qr/^total\s+31577937344\s/m, 'total 31.58B');
like($o, qr/^kv_bytes_per_token\s+6144\s/m, 'KV of the attention layers only');
like($o, qr/^mamba_state_bytes\s+49082368\s/m, 'the Mamba state a sequence, at the dtypes infer holds it');

# train prices the stack on Megatron-Core's fused kernels: each layer kind
# its own block (tests/c/t_hybrid.c derives them).
my @nano = ('nemotron-3-nano-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '8', '--stack', 'megatron');
($c, $o, $e) = run_gp('train', @nano, '--ep', '8');
is($c, 0, 'train of a hybrid stack: exit 0') or diag $e;
like($o, qr/^nemotron-3-nano-30b-a3b on 8 x h100-sxm \(tp 1, pp 1, dp 8, cp 1, ep 8, zero 0\)/m,
     'priced at its layout');
like($o, qr/^ep_comm\s+\d/m, 'the E layers\' all-to-alls');
# fit and train agree on the memory: the weights, 2 B x 5,473,371,584 at EP 8
# (t_hybrid.c) = 10.19 GiB.
($c, $o, $e) = run_gp('fit', @nano, '--ep', '8');
is($c, 0, 'fit of a hybrid stack: exit 0') or diag $e;
like($o, qr/^weights\s+10\.19\s/m, 'fit: every kind\'s weights');
# What the step does not price of a hybrid stack: refused by its flag.
($c, $o, $e) = run_gp('train', @nano, '--cp', '2');
is($c, 2, 'cp 2 on a hybrid stack: a usage error');
like($e, qr/^gpuplan: train: --cp 2: a hybrid stack \(model\.hybrid_pattern\) is priced without context parallelism/m,
     'named by its flag') or diag $e;
($c, $o, $e) = run_gp('train', @nano, '--zero', '3');
is($c, 2, 'zero 3 on a hybrid stack: a usage error');
like($e, qr/^gpuplan: train: --zero 3: a hybrid stack .* give --zero 0 or 1$/m, 'named by its flag') or diag $e;
# LoRA: refused by the method that sets its adapters, fit as train.
($c, $o, $e) = run_gp('fit', @nano, '--method', 'qlora');
is($c, 2, 'qlora on a hybrid stack: a usage error');
like($e, qr/^gpuplan: fit: --method lora or qlora \(adapters of --lora-rank 8\): a hybrid stack \(model\.hybrid_pattern\) is priced in full training/m,
     'named by the method, not only the rank it sets') or diag $e;
# plan searches a hybrid stack's layouts with what the step refuses pruned:
# ZeRO 2 and 3 and CP > 1 are not tried, and a ZeRO list of those alone is
# a usage error.
($c, $o, $e) = run_gp('plan', @nano[0..2], '--gpus', '16', '--stack', 'megatron', '--zero', '0,1,2,3',
                      '--cp-max', '4', '--ep-max', '8', '--top', '50');
is($c, 0, 'plan of a hybrid stack: exit 0') or diag $e;
my @rows = grep { /^h100-sxm\s+16\s/ } split /\n/, $o;
ok(@rows >= 10, 'plan ranks its layouts') or diag $o;
is(scalar(grep { /ZeRO-[23]|CP\d/ } @rows), 0, 'none at ZeRO 2/3 or CP > 1') or diag $o;
like($o, qr/^h100-sxm\s+16\s+TP\d+ PP\d+ EP\d+/m, 'EP layouts among them');
($c, $o, $e) = run_gp('plan', @nano[0..2], '--gpus', '16', '--stack', 'megatron', '--zero', '2,3');
is($c, 2, 'plan at ZeRO 2 and 3 only: a usage error');
like($e, qr/^gpuplan: plan: --zero: a hybrid stack \(model\.hybrid_pattern\) is priced at ZeRO 0 or 1/m,
     'named by its flag') or diag $e;
# Serving: infer prices its KV (6 attention layers, 6,144 B a token) and
# its Mamba state (23 layers x 2,134,016 B = 49,082,368 B a sequence):
# 2304 tokens x 6,144 + 49,082,368 = 63,238,144 B = 0.063 GB.
($c, $o, $e) = run_gp('infer', 'nemotron-3-nano-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '1');
is($c, 0, 'infer of a hybrid stack: exit 0') or diag $e;
like($o, qr/^KV per sequence per GPU\s+0\.063 GB$/m, 'a sequence: its KV and its Mamba state') or diag $o;
($c, $o, $e) = run_gp('infer', 'nemotron-3-nano-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '1', '--ops');
like($o, qr/^ssm_update\s+23\s/m, 'decode: the state update in the 23 Mamba layers') or diag $o;
unlike($o, qr/^ssd_scan\s/m, 'decode: no chunked scan');
# What infer does not price for it: usage errors naming the flag.
for my $bad (['--pp', '2', '--gpus', '2'], ['--ep', '2', '--gpus', '2']) {
    ($c, $o, $e) = run_gp('infer', 'nemotron-3-nano-30b-a3b', '--gpu', 'h100-sxm', @$bad);
    is($c, 2, "infer @$bad: a usage error");
    like($e, qr/^gpuplan: infer: $bad->[0]( 2)?: a hybrid stack/m, "named by its flag") or diag $e;
}
# rl's rollouts do not price it.
($c, $o, $e) = run_gp('rl', 'nemotron-3-nano-30b-a3b', '--gpu', 'h100-sxm', '--gpus', '8');
is($c, 1, 'rl of a hybrid stack: exit 1');
like($e, qr/^gpuplan: rl: nemotron-3-nano-30b-a3b is a hybrid stack \(its hybrid_pattern\): its Mamba layers are not priced by rl/m,
     'refused, naming the model') or diag $e;

my $dir = tempdir(CLEANUP => 1);
mkdir "$dir/cat";
my $entry = "model { id = 'hyb', name = 'x', layers = 4, hidden = 64, heads = 8, ffn_hidden = 128, "
    . "vocab = 100, params_b = 1, source = 't', hybrid_pattern = '%s', "
    . "mamba = { heads = 4, head_dim = 16, state = 8, groups = 2 } }\n";
write_file("$dir/cat/a.lua", "-- a model\n" . sprintf($entry, 'M*X-'));
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
is($c, 1, 'an unknown letter in a catalog file: exit 1');
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'hyb': field 'hybrid_pattern': unknown layer 'X' at letter 3 \(M Mamba, \* attention, - MLP, E MoE\)$/m,
     'named at the entry\'s line') or diag $e;
write_file("$dir/cat/a.lua", "-- a model\n" . sprintf($entry, 'M*M'));
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
is($c, 1, 'a pattern of the wrong length in a catalog file: exit 1');
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'hyb': field 'hybrid_pattern': has 3 letters but layers is 4 \(one letter a layer\)$/m,
     'named at the entry\'s line, with the layers') or diag $e;

write_file("$dir/cat/a.lua", "-- a model\n" . sprintf($entry, '**--'));
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
is($c, 1, 'a mamba table beside a pattern without M in a catalog file: exit 1');
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'hyb': field 'hybrid_pattern': has no Mamba layer \(M\) but the model has a mamba table$/m,
     'named at the entry\'s line') or diag $e;

my $case = <<'JSON';
[
 {
  "id": "hyb-case",
  "kind": "train",
  "model": {
   "name": "tiny", "layers": 4, "hidden": 64, "heads": 4, "ffn_hidden": 256,
   "vocab": 1000, "hybrid_pattern": "M*E-",
   "mamba": {"heads": 4, "head_dim": 16, "state": 8, "groups": 2}
  },
  "hardware": {"gpu": "h100-sxm", "gpus": 8},
  "parallel": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1, "global_batch": 64},
  "workload": {"seq_len": 128, "precision": "bf16"},
  "measured": {"metric": "step_time_s", "value": 0.05, "unit": "s"},
  "source": {"title": "t", "where": "t", "id": "t", "date": "2026-01-01"}
 }
]
JSON
write_file("$dir/case.json", $case);
($c, $o, $e) = run_gp('validate', "$dir/case.json");
is($c, 1, 'E without a moe table in a case file: exit 1');
is($e, "gpuplan: $dir/case.json:7: case 'hyb-case': field 'model.hybrid_pattern': "
     . "has MoE layers (E) but the model has no moe table\n", 'named at its line') or diag $e;

# A mamba table beside no pattern, and a moe table beside a pattern
# without E: refused at the line as the other pattern faults (the case
# was "not predicted", the catalog's words the engine's), the engine, the
# catalog and a case file in one wording (schema.hybrid_problem).
(my $nopat = $entry) =~ s/hybrid_pattern = '%s', //;
write_file("$dir/cat/a.lua", "-- a model\n" . $nopat);
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
is($c, 1, 'a mamba table without a pattern in a catalog file: exit 1');
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'hyb': field 'hybrid_pattern': is missing, but the model has a mamba table \(the pattern says which layers are Mamba layers\)$/m,
     'named at the entry\'s line') or diag $e;
(my $nopat_case = $case) =~ s/"hybrid_pattern": "M\*E-",\n//;
write_file("$dir/case.json", $nopat_case);
($c, $o, $e) = run_gp('validate', "$dir/case.json");
is($c, 1, 'a mamba table without a pattern in a case file: exit 1, not a case "not predicted"');
# The field is absent, so the line named is the table that lacks it: the
# case's "model": { at line 5 (the case's own { is line 2).
is($e, "gpuplan: $dir/case.json:5: case 'hyb-case': field 'model.hybrid_pattern': "
     . "is missing, but the model has a mamba table (the pattern says which layers are Mamba "
     . "layers)\n", 'named at the model table\'s line (the field is absent)') or diag $e;
(my $moe_case = $case) =~ s/"M\*E-"/"M*M-"/;
$moe_case =~ s/"vocab": 1000,/"vocab": 1000, "moe": {"experts": 4, "top_k": 1, "expert_ffn_hidden": 64},/;
write_file("$dir/case.json", $moe_case);
($c, $o, $e) = run_gp('validate', "$dir/case.json");
is($c, 1, 'a moe table beside a pattern without E in a case file: exit 1');
is($e, "gpuplan: $dir/case.json:7: case 'hyb-case': field 'model.hybrid_pattern': "
     . "has no MoE layer (E) but the model has a moe table\n", 'named at its line') or diag $e;

done_testing();
