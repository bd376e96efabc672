# gpuplan model import / params: what a user sees.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my $F = 'tests/fixtures/hf';

# Import prints a catalog entry on stdout, the defaults on stderr.
my ($c, $o, $e) = run_gp('model', 'import', "$F/mixtral-8x7b.json");
is($c, 0, 'import exits 0') or diag $e;
like($o, qr/^model \{\n  id = "mixtral-8x7b",\n/, 'entry starts with the id');
like($o, qr/^  moe = \{ experts = 8, top_k = 2, shared_experts = 0, ffn_hidden = 14336, dense_layers = 0 \},$/m,
     'MoE fields in fixed order');
# 46,702,792,704 parameters -> "46.7028"; active 12,879,925,248 -> "12.8799".
like($o, qr/^  params_b = 46\.7028,$/m, 'params_b is the engine count');
like($o, qr/^  active_params_b = 12\.8799,$/m, 'active_params_b for MoE');
like($e, qr/^note: expert width = intermediate_size \(Mixtral style\)$/m,
     'applied default reported on stderr');
unlike($o, qr/^note:/m, 'no diagnostics on stdout');

# Same input, same bytes.
my (undef, $o2) = run_gp('model', 'import', "$F/mixtral-8x7b.json");
is($o2, $o, 'import output is deterministic');

# --id, and what it prints passes `catalog check` from a user directory.
my $dir = tempdir(CLEANUP => 1);
my $n = 0;
for my $f (qw(llama-2-7b llama-3.1-8b qwen2.5-7b mixtral-8x7b deepseek-v3
              qwen2-vl-7b qwen3-30b-a3b llava-1.5-7b)) {
    ($c, $o, $e) = run_gp('model', 'import', "$F/$f.json", '--id', "imported-$f");
    is($c, 0, "import $f") or diag $e;
    write_file("$dir/$f.lua", $o);
    $n++;
}
($c, $o, $e) = run_gp('catalog', 'check', $dir);
is($c, 0, 'imported entries pass catalog check') or diag $e;
like($o, qr/^ok: $n entries in /, "catalog check counts $n entries");

# The imported entry is usable at once from a user catalog.
{
    local $ENV{GPUPLAN_CATALOG} = $dir;
    local $ENV{XDG_CONFIG_HOME} = '/nonexistent';
    ($c, $o, $e) = run_gp('model', 'params', 'imported-llama-2-7b', '--format', 'csv');
    is($c, 0, 'params of an imported id') or diag $e;
    # 32*202,383,360 + 2*131,072,000 + 4,096 = 6,738,415,616.
    like($o, qr/^total,6738415616,100\.0%,all parameters$/m, 'Llama-2-7B total');
}

# params on a catalog id: components and the MLA KV size.
($c, $o, $e) = run_gp('model', 'params', 'deepseek-v3', '--format', 'csv');
is($c, 0, 'params deepseek-v3') or diag $e;
like($o, qr/^total,671026404352,/m, 'DeepSeek-V3 total 671,026,404,352');
like($o, qr/^active,37552282624,/m, 'DeepSeek-V3 active 37,552,282,624');
# 61 layers * (512 + 64) * 2 bytes = 70,272.
like($o, qr/^kv_bytes_per_token,70272,/m, 'MLA KV bytes per token');

# An encoder-decoder: the encoder's share and the cross-attention K/V.
($c, $o, $e) = run_gp('model', 'params', 'flan-t5-xxl', '--format', 'csv');
is($c, 0, 'params flan-t5-xxl') or diag $e;
# 2 x 131,596,288 + 24 x 192,946,176 + 24 x 260,059,136 + 4,096 + 8,192.
like($o, qr/^total,11135332352,/m, 'Flan-T5-XXL total 11,135,332,352');
# 24 x 192,946,176 + 4,096 final norm + 32 x 64 bias table.
like($o, qr/^encoder,4630714368,41\.6%,/m, 'the encoder stack, 41.6%');
# 2 x 24 x 64 heads x 64 x 2 bytes = 393,216 per input token.
like($o, qr/^cross_kv_bytes_per_input_token,393216,/m, 'cross K/V per input token');
($c, $o, $e) = run_gp('model', 'import', "$F/t5-3b.json");
is($c, 0, 'import a T5 config') or diag $e;
like($o, qr/^  encoder_layers = 24,\n/m, 'encoder_layers in the entry');
like($o, qr/^  ffn_act = "relu",\n/m, 'T5 v1.0: relu');
like($e, qr/^note: num_decoder_layers absent: = num_layers \(T5Config\)$/m,
     'the decoder depth default is reported');

# params straight from a config.json.
($c, $o, $e) = run_gp('model', 'params', "$F/qwen2-vl-7b.json", '--format', 'csv');
is($c, 0, 'params of a config.json') or diag $e;
# ViT 629,678,080 + patch conv 3*2*14^2*1280 = 1,505,280 (temporal patch
# of 2 frames) + LayerNorm 2,560 + merger 44,573,184 = 675,759,104.
like($o, qr/^vision,675759104,/m, 'Qwen2-VL-7B vision tower + merger');

# Errors: file and field named, exit 1; usage problems exit 2.
($c, $o, $e) = run_gp('model', 'import', "$F/bad-kv-heads.json");
is($c, 1, 'contradictory config exits 1');
# (line 6 of the fixture holds "num_key_value_heads": 6)
like($e, qr/^gpuplan: \Q$F\E\/bad-kv-heads\.json:6: num_key_value_heads 6 does not divide num_attention_heads 32$/m,
     'kv heads error names file, line and fields');
is($o, '', 'nothing on stdout on error');
($c, $o, $e) = run_gp('model', 'import', "$F/bad-missing-layers.json");
is($c, 1, 'missing field exits 1');
like($e, qr/missing field 'num_hidden_layers'/, 'missing field named');
($c, $o, $e) = run_gp('model', 'import', "$F/nope.json");
is($c, 1, 'missing file exits 1');
like($e, qr/nope\.json: cannot open/, 'missing file named');
($c, $o, $e) = run_gp('model', 'import', "$F/llama-2-7b.json", '--id', 'Has Spaces');
is($c, 1, 'bad --id exits 1');
like($e, qr/id 'Has Spaces' must be lower-case/, 'bad id explained');
($c, $o, $e) = run_gp('model', 'params', 'no-such-model');
is($c, 1, 'unknown model exits 1');
like($e, qr/unknown model 'no-such-model'/, 'unknown model named');
($c, $o, $e) = run_gp('model');
is($c, 2, 'no subcommand exits 2');
like($e, qr/usage: gpuplan model import/, 'usage shown');
($c, $o, $e) = run_gp('model', 'import');
is($c, 2, 'import without a file exits 2');
($c, $o, $e) = run_gp('model', 'frob');
is($c, 2, 'unknown subcommand exits 2');
like($e, qr/unknown subcommand 'frob'/, 'unknown subcommand named');

# Extra arguments and options params does not read are usage errors.
($c, $o, $e) = run_gp('model', 'params', 'llama3-8b', 'extra');
is($c, 2, 'model params with two ids: usage error');
($c, $o, $e) = run_gp('model', 'params', 'llama3-8b', '--name', 'x');
is($c, 2, 'model params --name: usage error');
like($e, qr/^gpuplan: model params: --name /, 'names the option');
($c, $o, $e) = run_gp('model', 'import', 'x.json', '--image-size', '0');
is($c, 2, '--image-size 0: usage error');
like($e, qr/^gpuplan: model: --image-size must be an integer in 1\.\.16777216 \(got 0\)/, 'names the option');
# past the import's bound (gpuplan.hf COUNT_MAX = 2^24): the option, not
# the Lua API ("model_from_hf: opts.image_size must be ..."), and exit 2
($c, $o, $e) = run_gp('model', 'import', 'x.json', '--image-size', '1e9');
is($c, 2, '--image-size 1e9: usage error');
like($e, qr/^gpuplan: model: --image-size must be an integer in 1\.\.16777216 \(got 1000000000\)/,
     'a size past the bound names the option');
unlike($e, qr/model_from_hf/, 'not the Lua function');
# A directory is not a config file: say so, not a JSON decoder's internals.
my $dd = tempdir(CLEANUP => 1);
($c, $o, $e) = run_gp('model', 'import', $dd);
is($c, 1, 'model import DIR: exit 1');
like($e, qr/^gpuplan: \Q$dd\E: cannot read/, 'names the path');
unlike($e, qr/cjson|bad argument/, 'no decoder internals');
done_testing();
