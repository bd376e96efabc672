# A new user's walk (followups15): one block a fix.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
require './tests/cli/lib.pl';

my ($c, $o, $e);
my $tmp = tempdir(CLEANUP => 1);

# 1. DeepSeek-V3's checkpoint is published in FP8 (config.json
# quantization_config quant_method fp8), yet `gpuplan infer deepseek-v3
# --gpu b200 --gpus 8 --ep 8 --dp-attention` priced bf16 weights and said
# it did not fit.  The catalog model's dtype (the weights as released) is
# now infer's default --weights where it is quantized, said on the
# "defaults assumed" line; --weights still overrides.
{
    my @job = qw(infer deepseek-v3 --gpu b200 --gpus 8 --ep 8 --dp-attention);
    ($c, $o, $e) = run_gp(@job);
    is($c, 0, 'deepseek-v3 EP8 on 8 b200: exit 0') or diag $e;
    unlike($o, qr/does not fit/, 'it fits in its released fp8') or diag $o;
    like($o, qr/^deepseek-v3 on 8 x b200: .*, fp8 weights, bf16 KV,/m, 'the header says fp8 weights');
    like($o, qr/^assumed\s+weights=fp8 \(deepseek-v3's checkpoint as released: the catalog model's dtype\), /m,
         'the defaults line says where fp8 came from') or diag $o;
    # the default is exactly --weights fp8: the same table but the defaults line
    my ($c2, $o2) = run_gp(@job, '--weights', 'fp8');
    (my $a = $o) =~ s/^assumed.*\n//m;
    (my $b = $o2) =~ s/^assumed.*\n//m;
    is($a, $b, 'the default prices what --weights fp8 prices');
    unlike($o2, qr/weights=fp8 \(/, '--weights fp8 given: not said as a default');
    # --weights bf16 overrides: the 16-bit weights do not fit (2 x 671B's
    # experts over 8 GPUs, 197.71 GB a GPU, past 172 GB)
    ($c, $o, $e) = run_gp(@job, '--weights', 'bf16');
    like($o, qr/^does not fit: decode: needs [\d.]+ GB per GPU \(weights 197\.71,/m,
         '--weights bf16 overrides: does not fit') or diag $o;
    like($o, qr/, bf16 weights, bf16 KV,/, '... priced in bf16');
    unlike($o, qr/weights=fp8/, '... no fp8 default said');
    # the fit hints do not offer the format already priced
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu h100-sxm --gpus 8 --tp 8));
    like($o, qr/^does not fit: .*; try --weights int4/m, 'fp8 short on 8 h100: int4 offered') or diag $o;
    unlike($o, qr/--weights fp8/, '... not --weights fp8, which it is');
}

# The same from Lua, and a model of 16-bit release (llama3-8b) keeps bf16.
{
    my $f = "$tmp/released.lua";
    write_file($f, <<'LUA');
local gp = require "gpuplan"
local r = gp.infer{ model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8 }
print("dsv3", r.weights)
r = gp.infer{ model = "deepseek-v3", gpu = "h200-sxm", gpus = 8, tp = 8, weights = "bf16" }
print("dsv3 bf16", r.weights)
r = gp.infer{ model = "llama3-8b", gpu = "h100-sxm" }
print("llama", r.weights)
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 0, 'Lua: exit 0') or diag $e;
    like($o, qr/^dsv3\tfp8$/m, 'gp.infer: deepseek-v3 in fp8 by default');
    like($o, qr/^dsv3 bf16\tbf16$/m, 'weights = "bf16" overrides');
    like($o, qr/^llama\tbf16$/m, 'llama3-8b (released in bf16): bf16');
}

# gpt-oss-120b ships its routed experts alone in MXFP4 (quantization_config
# quant_method mxfp4, attention, router, embeddings and lm_head left out):
# the catalog's expert_dtype.  The MoE serving model, which prices experts
# in a format of their own, takes it by default; one model on its replicas
# (one format for every linear) says it and offers it when short.
{
    ($c, $o, $e) = run_gp(qw(infer gpt-oss-120b --gpu h100-sxm --gpus 2 --ep 2));
    is($c, 0, 'gpt-oss-120b EP2: exit 0') or diag $e;
    like($o, qr/, bf16 weights \(mxfp4 experts\), /, 'the experts in mxfp4, the rest bf16') or diag $o;
    like($o, qr/expert_weights=mxfp4 \(gpt-oss-120b's checkpoint as released: the catalog model's expert_dtype\)/,
         'said on the defaults line');
    my ($c2, $o2) = run_gp(qw(infer gpt-oss-120b --gpu h100-sxm --gpus 2 --ep 2 --expert-weights mxfp4));
    (my $a = $o) =~ s/^assumed.*\n//m;
    (my $b = $o2) =~ s/^assumed.*\n//m;
    is($a, $b, 'the default prices what --expert-weights mxfp4 prices');
    ($c, $o, $e) = run_gp(qw(infer gpt-oss-120b --gpu h100-sxm --gpus 2 --ep 2 --weights bf16));
    unlike($o, qr/mxfp4/, '--weights bf16: every linear in bf16') or diag $o;
    ($c, $o, $e) = run_gp(qw(infer gpt-oss-120b --gpu h100-sxm));
    like($o, qr/^does not fit: .*; try --expert-weights mxfp4 \(the checkpoint's experts\), /m,
         'one model short on one h100: the checkpoint\'s experts offered') or diag $o;
    ($c, $o, $e) = run_gp(qw(infer gpt-oss-120b --gpu h100-sxm --gpus 4 --tp 4));
    like($o, qr/weights=bf16 \(gpt-oss-120b's checkpoint keeps its routed experts in mxfp4, the rest 16-bit: --expert-weights mxfp4 prices them so/,
         'one model that fits: the defaults line says the experts were not') or diag $o;
}

# gpuplan model import reads the experts' format from quantization_config.
{
    my $d = "$tmp/gpt-oss-mini";
    mkdir $d;
    write_file("$d/config.json", <<'JSON');
{"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_hidden_layers": 2,
 "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
 "intermediate_size": 256, "num_local_experts": 4, "num_experts_per_tok": 2,
 "vocab_size": 1000, "tie_word_embeddings": false, "max_position_embeddings": 4096,
 "torch_dtype": "bfloat16",
 "quantization_config": {"quant_method": "mxfp4",
   "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router", "model.embed_tokens", "lm_head"]}}
JSON
    ($c, $o, $e) = run_gp('model', 'import', "$d/config.json");
    like($o, qr/expert_dtype = "mxfp4"/, 'model import: expert_dtype mxfp4') or diag "$o$e";
    like($o, qr/dtype = "bf16"/, '... the rest bf16');
}

# 2. `gpuplan comm --gpu h800-sxm --max 10TB` priced 8 TB messages on
# 80 GiB cards.  nccl-tests holds a send and a receive buffer of the
# largest size on each GPU and caps it at (maxMem - reserve - 1 GiB) / 2
# with its data check off (src/common.cu): h800-sxm's usable 79.1 GiB
# (catalog usable_memory, 84,932,978,278 B) less min(ceil(79.1/16) GiB,
# 4 GiB) = 4 GiB and 1 GiB, halved: (84932978278 - 5 x 2^30) / 2 =
# 39,782,134,579 B.  A larger --max is refused, exit 1, naming it.
{
    ($c, $o, $e) = run_gp(qw(comm --gpu h800-sxm --op all_reduce --min 1GB --max 10TB));
    is($c, 1, 'comm --max 10TB on h800-sxm: exit 1');
    is($o, '', '... nothing priced');
    like($e, qr/^gpuplan: comm: --max 10TB: a message of 8192000000000 B needs a send and a receive buffer of its size on each GPU \(nccl-tests' AllocateBuffs\), 15258\.8 GiB, past h800-sxm's 79\.1 GiB; give --max at most 39782134579 B /m,
         '... naming --max, the buffers and the most that fits') or diag $e;
    # the bound itself runs; one byte more does not (the sweep's top size
    # is what counts: --min 1GB doubles to 32 GB, past it)
    ($c, $o, $e) = run_gp(qw(comm --gpu h800-sxm --min 39782134579 --max 39782134579));
    is($c, 0, '--max at the bound: priced') or diag $e;
    ($c, $o, $e) = run_gp(qw(comm --gpu h800-sxm --min 39782134580 --max 39782134580));
    is($c, 1, 'one byte past it: refused');
    # a system's card alike, and the Lua sweep
    ($c, $o, $e) = run_gp(qw(comm --system dgx-h100 --min 64GiB --max 64GiB));
    like($e, qr/^gpuplan: comm: --max 64GiB: .* past h100-sxm's /m, '--system: its card\'s memory') or diag $e;
    my $f = "$tmp/sweep.lua";
    write_file($f, <<'LUA');
local ok, e = pcall(require("gpuplan.comm").sweep, { gpu = "h800-sxm", min = 2^30, max = 2^40 })
print(ok, e)
LUA
    ($c, $o, $e) = run_gp('run', $f);
    like($o, qr/^false\t.*comm: max 1099511627776\S*: a message of 1099511627776 B needs/m,
         'Lua: refused, naming max') or diag "$o$e";
}

# 3. `gpuplan infer deepseek-v3 --gpu h200-sxm --gpus 8 --tp 8 --ep 8`
# printed "KV per sequence per GPU 1.295 GB" (1.405 at bf16 weights): 8
# times one sequence's cache, since under TP attention each GPU of the
# group holds the latent cache of all the group's sequences (the figure
# that sizes a GPU's batch, engine/serve.c serve_memory).  One sequence's
# MLA cache: 61 layers x (512 + 64) x 2 B x 2304 tokens = 161,906,688 B,
# 0.162 GB; x 8 = 1.295 GB.  The row says both; the refusal says whose KV.
{
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu h200-sxm --gpus 8 --tp 8 --ep 8));
    is($c, 0, 'deepseek-v3 TP8 EP8: exit 0') or diag $e;
    like($o, qr/^KV per sequence per GPU\s+0\.162 GB on each GPU of a TP8 attention group \(MLA's latent cache, not split by heads\); 1\.295 GB per sequence of a GPU's batch \(each GPU holds the group's 8 GPUs' sequences\)$/m,
         'one sequence 0.162 GB, 8 x that a GPU per sequence of its batch') or diag $o;
    # DP attention: a GPU holds its own sequences only, one figure
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu h200-sxm --gpus 8 --ep 8 --dp-attention));
    like($o, qr/^KV per sequence per GPU\s+0\.162 GB$/m, 'DP attention: 0.162 GB alone') or diag $o;
    # the refusal of a batch of one: TP16 on H20 in bf16 (2.447 GB =
    # 16 x 61 x 576 x 2 B x 2176 tokens at in + out/2)
    ($c, $o, $e) = run_gp(qw(infer deepseek-v3 --gpu h20 --gpus 16 --ep 16 --weights bf16));
    like($o, qr/KV 2\.447 for TP16 attention's 16 sequences at in \+ out\/2,/,
         'the refusal: the KV of the group\'s 16 sequences, not one\'s') or diag $o;
}

# 4. --weights FP8, --kv FP8, --runtime VLLM were refused (names are read
# in either case since --currency and --market, newuser13.t); their Lua
# keys alike.  And gp.train{seq = "4096"} was refused where gp.sweep{gpus
# = "256"} was taken: text that is a plain number is that number wherever
# a count, tokens, number or fraction goes (one rule: gpuplan.options
# normal, the resolve step), a quantity's bare number still needs a unit.
{
    my ($c1, $o1, $e1) = run_gp(qw(infer llama3-8b --gpu h100-sxm --weights FP8 --kv FP8 --runtime VLLM));
    my ($c2, $o2, $e2) = run_gp(qw(infer llama3-8b --gpu h100-sxm --weights fp8 --kv fp8 --runtime vllm));
    is($c1, 0, 'infer --weights FP8 --kv FP8 --runtime VLLM: exit 0') or diag $e1;
    is($o1, $o2, '... the answer of fp8, fp8, vllm');
    ($c1, $o1, $e1) = run_gp(qw(fit llama3-8b --gpu h100-sxm --method infer --weights INT4 --kv FP8));
    ($c2, $o2, $e2) = run_gp(qw(fit llama3-8b --gpu h100-sxm --method infer --weights int4 --kv fp8));
    is($c1, 0, 'fit --weights INT4 --kv FP8: exit 0') or diag $e1;
    is($o1, $o2, '... the answer of int4, fp8');
    ($c1, $o1, $e1) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --precision BF16 --tokens 1B));
    ($c2, $o2, $e2) = run_gp(qw(train llama3-8b --gpu h100-sxm --gpus 8 --precision bf16 --tokens 1B));
    is($o1, $o2, 'train --precision BF16: as bf16') or diag $e1;
    ($c, $o, $e) = run_gp(qw(infer llama3-8b --gpu h100-sxm --runtime VLLX));
    is($c, 2, 'an unknown runtime in capitals: still a usage error');
    like($e, qr/--runtime must be .* \(got 'VLLX'\)/, '... named as typed (followups17)') or diag $e;
    my $f = "$tmp/case.lua";
    write_file($f, <<'LUA');
local gp = require "gpuplan"
local a = gp.infer{ model = "llama3-8b", gpu = "h100-sxm", weights = "FP8", kv = "FP8", runtime = "VLLM" }
local b = gp.infer{ model = "llama3-8b", gpu = "h100-sxm", weights = "fp8", kv = "fp8", runtime = "vllm" }
print("case", a.weights, a.kv, a.tokens_per_s == b.tokens_per_s)
local t1 = gp.train{ model = "llama3-8b", gpu = "h100-sxm", gpus = "8", seq = "4096", tp = "2", tokens = "1B" }
local t2 = gp.train{ model = "llama3-8b", gpu = "h100-sxm", gpus = 8, seq = 4096, tp = 2, tokens = "1B" }
print("numbers", t1.step_s == t2.step_s)
local s = gp.sweep{ model = "llama3-8b", gpu = "h100-sxm", gpus = "8", seq = "4096", tokens = "1B", top = 1 }
print("sweep", s ~= nil)
for _, bad in ipairs { "4096.5", "4k", "0x10", "nan" } do
  local ok, e = pcall(gp.train, { model = "llama3-8b", gpu = "h100-sxm", gpus = 8, seq = bad, tokens = "1B" })
  print("bad", bad, ok)
end
local ok, e = pcall(gp.infer, { model = "llama3-8b", gpu = "h100-sxm", memory = "80" })
print("unit", ok, e)
LUA
    ($c, $o, $e) = run_gp('run', $f);
    is($c, 0, 'Lua: exit 0') or diag $e;
    like($o, qr/^case\tfp8\tfp8\ttrue$/m, 'Lua keys in capitals: the same answer');
    like($o, qr/^numbers\ttrue$/m, 'gp.train gpus "8", seq "4096", tp "2": as 8, 4096, 2');
    like($o, qr/^sweep\ttrue$/m, 'gp.sweep seq "4096" taken as gpus "8" was');
    like($o, qr/^bad\t$_\tfalse$/m, "seq \"$_\": refused") for qw(4096.5 4k 0x10 nan);
    like($o, qr/^unit\tfalse\t.*memory '80' needs a unit/m, 'a quantity\'s bare number still needs its unit');
}

# 5. rl --rollout-gpus auto searched only splits of separate pools and
# said nothing of the colocated pool, which for Qwen2.5-7B ZeRO-3 on 8
# H20s is faster: the best split 144.6 s a step, colocated 87.3 s.  It is
# priced beside the split and said when faster, with the ratio.
{
    my @job = qw(rl qwen2.5-7b --gpu h20 --gpus 8 --zero 3 --market cn);
    my ($ca, $oa, $ea) = run_gp(@job, '--rollout-gpus', 'auto');
    is($ca, 0, 'rl --rollout-gpus auto: exit 0') or diag $ea;
    my ($split) = $oa =~ /^step\s+8\s+([\d.]+)\s/m;
    my ($cc, $oc) = run_gp(@job);
    my ($coloc) = $oc =~ /^step\s+8\s+([\d.]+)\s/m;
    ok(defined $split && defined $coloc && $coloc < $split, "colocated $coloc s < split $split s");
    # the ratio printed to 2 decimals of the two printed steps (3 decimals each)
    my $ratio = sprintf('%.2f', $split / $coloc);
    like($oa, qr/^colocated instead: \Q$coloc\E s a step, \Q$ratio\Ex faster than this split's \Q$split\E s \(--rollout-gpus auto searches separate pools only; without --rollout-gpus the rollout and training share all 8 GPUs\)$/m,
         'said, with the colocated step and the ratio') or diag $oa;
    unlike($oc, qr/colocated instead/, 'not on a colocated run');
}

done_testing();
