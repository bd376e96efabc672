# moe_groups: group-limited routing (moe.groups, moe.group_top_k) refused
# at a catalog entry's and a case file's line, and from a config.json's
# n_group / topk_group, with the reason (tests/lua/moe_groups.t prices it).
use strict;
use warnings;
use Test::More;
require './tests/cli/lib.pl';
use File::Temp ();

my ($c, $o, $e);
my $dir = File::Temp::tempdir(CLEANUP => 1);

# A catalog entry: 256 experts in 6 groups do not split evenly.
mkdir "$dir/cat";
my $entry = "-- a model\nmodel { id = 'grp', name = 'x', layers = 4, hidden = 64, heads = 8, ffn_hidden = 128, "
    . "vocab = 100, params_b = 1, source = 't', "
    . "moe = { experts = 256, top_k = 8, ffn_hidden = 32, groups = %d, group_top_k = %d } }\n";
write_file("$dir/cat/a.lua", sprintf($entry, 6, 4));
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
is($c, 1, 'groups 6 of 256 experts in a catalog file: exit 1');
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'grp': field 'moe\.groups': moe\.groups \(6\) must divide moe\.experts \(256\): the router splits the experts into equal groups$/m,
     'at its line, the field and the reason') or diag $e;
write_file("$dir/cat/a.lua", sprintf($entry, 8, 9));
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
like($e, qr/^\Q$dir\E\/cat\/a\.lua:2: model 'grp': field 'moe\.group_top_k': moe\.group_top_k must be in 1\.\.groups \(8\), got 9$/m,
     'group_top_k past the groups') or diag $e;
write_file("$dir/cat/a.lua", sprintf($entry, 8, 4));
($c, $o, $e) = run_gp('catalog', 'check', "$dir/cat");
# (the toy entry's params_b is another field's problem)
unlike($e, qr/moe\./, '8 groups, 4 picked: the moe table checks') or diag $e;

# A case file (refused at its moe table's line, 7): top 8 from 1 of 64
# groups of 4 is refused.
write_file("$dir/grp.json", <<'JSON');
[
 {
  "id": "grp-case",
  "kind": "train",
  "model": {
   "name": "tiny", "layers": 4, "hidden": 64, "heads": 4, "ffn_hidden": 256, "vocab": 1000,
   "moe": {"experts": 256, "top_k": 8, "expert_ffn_hidden": 32,
           "groups": 64, "group_top_k": 1}
  },
  "hardware": {"gpu": "h100-sxm", "gpus": 8},
  "parallel": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1, "global_batch": 64},
  "workload": {"seq_len": 128, "precision": "bf16"},
  "measured": {"metric": "step_time_s", "value": 0.05, "unit": "s"},
  "source": {"title": "t", "where": "t", "id": "t", "date": "2026-01-01"}
 }
]
JSON
($c, $o, $e) = run_gp('validate', "$dir/grp.json");
is($c, 1, 'top 8 from one group of 4 in a case file: exit 1');
is($e, "gpuplan: $dir/grp.json:7: case 'grp-case': field 'model.moe.top_k': moe.top_k (8) must be at "
     . "most group_top_k x experts / groups (1 x 4 = 4): a token's experts come from its picked groups\n",
     'at its line, the reason') or diag $e;

# A config.json: DeepSeek-V3's n_group 8 / topk_group 4 imported as
# moe.groups / group_top_k; n_group 6 of 256 experts refused.
($c, $o, $e) = run_gp('model', 'import', 'tests/fixtures/hf/deepseek-v3.json');
is($c, 0, 'DeepSeek-V3 config.json imports') or diag $e;
like($o, qr/moe = \{[^}]*groups = 8, group_top_k = 4 \}/, 'with its groups');
open(my $fh, '<', 'tests/fixtures/hf/deepseek-v3.json') or die;
my $cfg = do { local $/; <$fh> };
close $fh;
$cfg =~ s/"n_group": 8/"n_group": 6/ or die;
write_file("$dir/bad.json", $cfg);
($c, $o, $e) = run_gp('model', 'import', "$dir/bad.json");
is($c, 1, 'n_group 6 of 256 experts: exit 1');
like($e, qr/n_group 6 must divide the expert count 256 \(n_routed_experts\)/, 'the field and the reason') or diag $e;
# topk_method greedy (DeepSeek-V2-Lite's) takes top-k over every expert.
$cfg =~ s/"n_group": 6/"n_group": 8/;
$cfg =~ s/"topk_method": "noaux_tc"/"topk_method": "greedy"/ or die;
write_file("$dir/greedy.json", $cfg);
($c, $o, $e) = run_gp('model', 'import', "$dir/greedy.json");
unlike($o, qr/groups =/, 'topk_method greedy: no groups') or diag $e;

done_testing;
