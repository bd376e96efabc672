/* t_memory.c - memory breakdown against hand-derived numbers. */
#include "memory.h"
#include "recipes.h"
#include "tap.h"

#include <math.h>
#include <string.h>

#define GiB 1073741824.0
/* Exact sums of a few dozen integer terms in doubles: only the last bit. */
#define EXACT 1e-12

/* GPT-3 175B block of Korthikanti et al. 2022 (Table 3): h 12288, a 96,
 * GeLU MLP of 4h, LayerNorm, s 2048. */
static gp_model gpt175(void)
{
	gp_model m;

	memset(&m, 0, sizeof m);
	m.layers = 96;
	m.hidden = 12288;
	m.heads = 96;
	m.kv_heads = 96;
	m.head_dim = 128;
	m.ffn_hidden = 4 * 12288;
	m.vocab = 51200;
	m.norm_params = 2 * 12288;
	m.linear_bias = 1;
	return m;
}

static gp_model llama2_7b(void)
{
	gp_model m;

	memset(&m, 0, sizeof m);
	m.layers = 32;
	m.hidden = 4096;
	m.heads = 32;
	m.kv_heads = 32;
	m.head_dim = 128;
	m.ffn_hidden = 11008;
	m.ffn_gated = 1;
	m.vocab = 32000;
	m.norm_params = 4096;
	return m;
}

/* The workspace's growth over the 8192 tokens up to 16384 less its growth
 * over the 8192 after: what a fused-MoE cache adds a token up to its
 * 16384-token chunk, x 8192 (one sequence of 1024, TP tp). */
static double moe_ws_bend(const gp_model *m, int tp, const gp_mem_reserve *rs)
{
	gp_infer_cfg ic;
	gp_mem_result r[3];
	gp_error err;
	int i;

	memset(&ic, 0, sizeof ic);
	ic.seqs = 1;
	ic.ctx = 1024;
	ic.tp = tp;
	for (i = 0; i < 3; i++) {
		ic.chunk_tokens = 8192.0 * (i + 1);
		if (mem_infer(m, &ic, 80e9, rs, &r[i], &err) != GP_OK)
			return -1.0;
	}
	return (r[1].bytes[GP_MEM_WORKSPACE] - r[0].bytes[GP_MEM_WORKSPACE]) -
		(r[2].bytes[GP_MEM_WORKSPACE] - r[1].bytes[GP_MEM_WORKSPACE]);
}

/* BLOOM-176B (BigScience tr11-176B-ml): 70 layers, h 14336, 112 heads,
 * GeLU MLP of 4h, LayerNorm with biases, vocab 250880, tied. */
static gp_model bloom176(void)
{
	gp_model m = gpt175();

	m.layers = 70;
	m.hidden = 14336;
	m.heads = 112;
	m.kv_heads = 112;
	m.ffn_hidden = 4 * 14336;
	m.vocab = 250880;
	m.norm_params = 2 * 14336;
	m.tied_embeddings = 1;
	return m;
}

static gp_model llama2_70b(void)
{
	gp_model m = llama2_7b();

	m.layers = 80;
	m.hidden = 8192;
	m.heads = 64;
	m.kv_heads = 8;
	m.ffn_hidden = 28672;
	m.norm_params = 8192;
	return m;
}

/* A small T5 v1.0-style encoder-decoder whose terms are easy to add by
 * hand: 2 + 2 layers, h 64, 4 heads of 32 (q width 128 != h), ReLU MLP of
 * 256, vocab 100, tied, 8 position buckets, T5LayerNorm (h per norm). */
static gp_model t5_tiny(void)
{
	gp_model m;

	memset(&m, 0, sizeof m);
	m.layers = 2;
	m.encoder_layers = 2;
	m.hidden = 64;
	m.heads = 4;
	m.kv_heads = 4;
	m.head_dim = 32;
	m.ffn_hidden = 256;
	m.ffn_relu = 1;
	m.vocab = 100;
	m.tied_embeddings = 1;
	m.norm_params = 64;
	m.rel_buckets = 8;
	return m;
}

static gp_act_cfg korthikanti(int tp, int sp, gp_recompute rc)
{
	gp_act_cfg c;

	memset(&c, 0, sizeof c);
	c.seq = 2048;
	c.micro_batch = 1;
	c.tp = tp;
	c.sp = sp;
	c.dropout = 1;
	c.flash = 0;
	c.act_bytes = 2;
	c.recompute = rc;
	return c;
}

static double states(const gp_mem_result *r)
{
	return r->bytes[GP_MEM_WEIGHTS] + r->bytes[GP_MEM_GRADS] +
		r->bytes[GP_MEM_MASTER] + r->bytes[GP_MEM_OPTIMIZER];
}

static gp_train_cfg train_cfg(void)
{
	gp_train_cfg c;

	memset(&c, 0, sizeof c);
	c.recipe = FX_MIXED16;
	c.optim = FX_ADAMW;
	c.seq = 2048;
	c.lay.micro_batch = 1;
	c.flash = 1;
	return c;
}

int main(void)
{
	gp_error err;
	gp_state_bytes sb;
	gp_act_cfg ac;
	gp_act_layer al;
	gp_mem_reserve rs;
	gp_mem_result r, r1;
	gp_train_cfg tc;
	gp_infer_cfg ic;
	gp_recipe rec;
	gp_optim opt;
	gp_quant nf4 = {4, 64, 8.0 + 32.0 / 256};
	gp_model m = gpt175(), l7 = llama2_7b(), l70 = llama2_70b(), bad;
	/* s b h for the GPT-3 block: 2048 * 1 * 12288. */
	const double sbh = 2048.0 * 12288.0;
	unsigned mask;
	int rc;

	plan(180);
	mem_reserve_default(&rs, 1);

	/* --- recipes: bytes per parameter (exact sums) --- */
	MUST(mem_state_bytes(&FX_MIXED16, &FX_ADAMW, &sb, &err));
	/* ZeRO sec. 3.1: 2 + 2 + 12 = 16. */
	is_num(sb.weights + sb.grads + sb.master + sb.optimizer, 16, 0,
	       "mixed-16 AdamW = 16 B/param");
	MUST(mem_state_bytes(&FX_MEGATRON18, &FX_ADAMW, &sb, &err));
	/* 2 bf16 + 4 fp32 grad + 4 master + 8 Adam = 18. */
	is_num(sb.weights + sb.grads + sb.master + sb.optimizer, 18, 0,
	       "megatron-18 AdamW = 18 B/param");
	MUST(mem_state_bytes(&FX_BF16, &FX_ADAMW, &sb, &err));
	/* 2 + 2 + 0 + 2*2 = 8. */
	is_num(sb.weights + sb.grads + sb.master + sb.optimizer, 8, 0,
	       "pure bf16 AdamW = 8 B/param");
	MUST(mem_state_bytes(&FX_MIXED16, &FX_ADAM8BIT, &sb, &err));
	/* 2 + 2 + 4 + 2 * (1 + 4/2048) = 10.00390625. */
	is_num(sb.weights + sb.grads + sb.master + sb.optimizer,
	       10.00390625, 1e-15, "mixed-16 8-bit Adam = 10.004 B/param");
	MUST(mem_state_bytes(&FX_MIXED16, &FX_SGD, &sb, &err));
	/* 2 + 2 + 4 + 4 (momentum) = 12. */
	is_num(sb.weights + sb.grads + sb.master + sb.optimizer, 12, 0,
	       "mixed-16 SGD momentum = 12 B/param");
	MUST(mem_state_bytes(&FX_DSBF16, &FX_ADAMW, &sb, &err));
	/* DeepSpeed BF16_Optimizer: 2 + (2 + 4) + 4 + 8 = 20. */
	is_num(sb.weights + sb.grads + sb.master + sb.optimizer, 20, 0,
	       "deepspeed-bf16 AdamW = 20 B/param");
	rec = FX_MIXED16;
	rec.weights = 0;
	rc = mem_recipe_check(&rec, &FX_ADAMW, &err);
	ok(rc == GP_EINVAL && strstr(err.msg, "recipe weights must be in "
				     "(0, 64 bytes (got 0)"),
	   "a recipe without weight bytes: clear error");
	opt = FX_SGD;
	opt.states = 0;
	rc = mem_recipe_check(&FX_MIXED16, &opt, &err);
	ok(rc == GP_EINVAL && strstr(err.msg, "optimizer states must be in "
				     "(0, 16]"),
	   "an optimizer without states: clear error");
	/* Muon (catalog muon): one momentum buffer on the hidden
	 * matrices, 1 x 4 B in mixed-16's fp32 state dtype; AdamW's m and
	 * v on the embedding, output layer and norms, 2 x 4 = 8 B. */
	MUST(mem_state_bytes(&FX_MIXED16, &FX_MUON, &sb, &err));
	is_num(sb.optimizer, 4, 0, "mixed-16 Muon: 4 B/param on a matrix");
	is_num(sb.scalar, 8, 0, "mixed-16 Muon: AdamW's 8 B/param on the rest");
	ok(sb.dp_shard == 1 && sb.master_shard0 == 0,
	   "Muon shards over DP by its own flag, not the recipe's");
	MUST(mem_state_bytes(&FX_MIXED16, &FX_ADAMW, &sb, &err));
	is_num(sb.scalar, sb.optimizer, 0, "AdamW: the same 8 B/param everywhere");
	/* Newton-Schulz on Llama-3-8B's fc2, 4096 x 14336, 5 steps: s =
	 * 4096, l = 14336; a step X X^T 2 s^2 l = 481,036,337,152, A A 2
	 * s^3 = 137,438,953,472, B X 2 s^2 l = 481,036,337,152: 1,099,
	 * 511,627,776 a step, 5,497,558,138,880 for 5 (exact in doubles:
	 * every term an integer below 2^53). */
	is_num(mem_ns_flops(4096, 14336, 5), 5497558138880.0, 0,
	       "NS FLOPs of a 4096 x 14336 matrix, 5 steps");
	is_num(mem_ns_flops(14336, 4096, 5), 5497558138880.0, 0,
	       "NS FLOPs: a tall matrix is transposed (the smaller dim s)");
	/* 2 x 3, one step: 2 (2 * 4 * 3 + 8) = 64. */
	is_num(mem_ns_flops(2, 3, 1), 64, 0, "NS FLOPs of 2 x 3, 1 step = 64");
	opt = FX_MUON;
	opt.scalar_states = 17;
	rc = mem_recipe_check(&FX_MIXED16, &opt, &err);
	ok(rc == GP_EINVAL && strstr(err.msg, "optimizer scalar_states must "
				     "be in [0, 16]"),
	   "too many scalar states: clear error");
	opt = FX_MUON;
	opt.ns_steps = -1;
	rc = mem_recipe_check(&FX_MIXED16, &opt, &err);
	ok(rc == GP_EINVAL && strstr(err.msg, "optimizer ns_steps must be "
				     "in [0, 100] (got -1)"),
	   "negative Newton-Schulz steps: clear error");
	/* QLoRA sec. 3: 4 + (8 + 32/256)/64 = 4.126953125 bits. */
	is_num(mem_quant_bits(&nf4), 4.126953125, 1e-15,
	       "NF4 + double quant = 4.127 bits/weight");

	/* --- Korthikanti et al. 2022 per-layer activations, exact --- */
	ac = korthikanti(1, 0, GP_RECOMPUTE_NONE);
	MUST(mem_act_layer(&m, &ac, 0, &al, &err));
	/* eq. 1: sbh (34 + 5 a s / h) = sbh (34 + 5*96*2048/12288)
	 * = sbh * 114. */
	is_num(al.total, sbh * 114, 1e-12, "Korthikanti eq.1 34sbh+5as^2b");
	/* The split of sec. 4.1: attention 11sbh + 5as^2b. */
	is_num(al.attention + al.core + al.masks / 2, 11 * sbh +
	       5.0 * 96 * 2048.0 * 2048, 1e-12, "attention 11sbh + 5as^2b");
	/* MLP 19 sbh (one mask sbh). */
	is_num(al.mlp + al.masks / 2, 19 * sbh, 1e-12, "MLP 19sbh");
	ac = korthikanti(8, 0, GP_RECOMPUTE_NONE);
	MUST(mem_act_layer(&m, &ac, 0, &al, &err));
	/* eq. 2: sbh (10 + 24/8 + 5*96*2048/(12288*8)) = sbh * 23. */
	is_num(al.total, sbh * 23, 1e-12, "Korthikanti eq.2 TP=8");
	ac = korthikanti(8, 1, GP_RECOMPUTE_NONE);
	MUST(mem_act_layer(&m, &ac, 0, &al, &err));
	/* eq. 3: sbh/t (34 + 80) = sbh * 114 / 8. */
	is_num(al.total, sbh * 114 / 8, 1e-12, "Korthikanti eq.3 TP+SP");
	ac = korthikanti(8, 1, GP_RECOMPUTE_SELECTIVE);
	MUST(mem_act_layer(&m, &ac, 0, &al, &err));
	/* eq. 6 / Table 2: 34 sbh / t. */
	is_num(al.total, sbh * 34 / 8, 1e-12, "selective + TP+SP 34sbh/t");
	ac = korthikanti(8, 0, GP_RECOMPUTE_SELECTIVE);
	MUST(mem_act_layer(&m, &ac, 0, &al, &err));
	/* Table 2: sbh (10 + 24/t) = 13 sbh. */
	is_num(al.total, sbh * 13, 1e-12, "selective + TP sbh(10+24/t)");
	ac = korthikanti(1, 0, GP_RECOMPUTE_FULL);
	MUST(mem_act_layer(&m, &ac, 0, &al, &err));
	/* Table 2: full recompute keeps the layer input, 2 sbh. */
	is_num(al.total, 2 * sbh, 1e-12, "full recompute 2sbh");
	is_num(al.full, sbh * 114, 1e-12, "full: working set = one layer");

	/* --- generalisation: Llama-2-70B, GQA + SwiGLU + flash --- */
	memset(&ac, 0, sizeof ac);
	ac.seq = 4096;
	ac.micro_batch = 1;
	ac.flash = 1;
	MUST(mem_act_layer(&l70, &ac, 0, &al, &err));
	/* s = 4096, h = 8192, q = o = 8192, k = v = 8 * 128 = 1024,
	 * f = 28672, 2 bytes:
	 * norms 2h, attention h + q + k + v + o = 8192*3 + 2048 = 26624,
	 * MLP h + 3f = 8192 + 86016 = 94208; flash core 4 B * 64 heads.
	 * per token: 2*(16384 + 26624 + 94208) + 256 = 274688 B. */
	is_num(al.total, 4096.0 * 274688, 1e-12,
	       "Llama-2-70B layer, flash, GQA, SwiGLU");
	ac.flash = 0;
	MUST(mem_act_layer(&l70, &ac, 0, &al, &err));
	/* no flash, no dropout: softmax output a s^2 b * 2 bytes. */
	is_num(al.core, 64.0 * 4096 * 4096 * 2, 1e-12,
	       "unfused attention keeps 2 a s^2 b");
	ac.cp = 2;
	ac.flash = 1;
	MUST(mem_act_layer(&l70, &ac, 0, &al, &err));
	/* CP = 2 halves every per-token term. */
	is_num(al.total, 2048.0 * 274688, 1e-12, "CP=2 halves activations");

	/* --- what trains decides what backward keeps (Llama-2-7B,
	 * s = 1024, b = 1, flash, fused SwiGLU, 2-byte activations;
	 * h = 4096, f = 11008, 32 heads) --- */
	memset(&ac, 0, sizeof ac);
	ac.seq = 1024;
	ac.micro_batch = 1;
	ac.flash = 1;
	MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
	/* Full fine-tuning, every matmul keeps its input:
	 * norms 2h, attention QKV input h + q k v 3h + out h = 5h,
	 * MLP input h + gate, up, down input 3f; flash lse 4 B * 32.
	 * 2 (2h + 5h + h + 3f) + 128 = 2 (32768 + 33024) + 128
	 * = 131712 B per token.  Exact arithmetic: tolerance 1e-12. */
	is_num(al.total, 1024.0 * 131712, 1e-12,
	       "full FT layer: every matmul input kept");
	ac.frozen = 1;
	ac.lora_rank = 8;
	ac.lora_targets = GP_LORA_Q | GP_LORA_V;
	MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
	/* bf16 LoRA r=8 on q,v, no adapter dropout: the adapters read
	 * the QKV input itself (kept, h) and keep their rank-8 outputs
	 * (2 * 8); frozen MLP linears keep no input: only SiLU's input
	 * (gate) and the product's operand up, 2f; out h via flash.
	 * 2 (2h + h + 3h + h + 2f + 16) + 128
	 * = 2 (28672 + 22016 + 16) + 128 = 101536 B per token. */
	is_num(al.total, 1024.0 * 101536, 1e-12,
	       "bf16 LoRA q,v: frozen MLP keeps no linear input");
	is_num(al.lora, 1024.0 * 2 * 16, 1e-12,
	       "LoRA rank-r intermediates: 2 adapters * 8 * 2 B");
	ac.lora_dropout = 1;
	MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
	/* With adapter dropout the QKV input is no longer read by
	 * anything that keeps it (-2h B); the dropout output (2 B) and
	 * its bool mask (1 B) are kept: +3h - 2h = +h = +4096 B. */
	is_num(al.total, 1024.0 * (101536 + 4096), 1e-12,
	       "LoRA dropout: dropout output + mask replace the input");
	ac.base_saves_input = 1;
	MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
	/* QLoRA: bitsandbytes' MatMul4Bit keeps every input like full
	 * training, plus the adapter's dropout output and mask (3h B)
	 * and rank outputs (32 B): 131712 + 12288 + 32 = 144032. */
	is_num(al.total, 1024.0 * 144032, 1e-12,
	       "QLoRA: 4-bit matmuls keep inputs, + adapter tensors");
	ac.input_nograd = 1;
	MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
	/* First layer above a frozen embedding: no first-norm input,
	 * 144032 - 2h = 135840 B per token. */
	is_num(al.total, 1024.0 * 135840, 1e-12,
	       "input needing no grad: first norm input not kept");
	ac.frozen = 0;
	ac.input_nograd = 0;
	MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
	/* Full training ignores the adapter fields: 131712 again. */
	is_num(al.total, 1024.0 * 131712, 1e-12,
	       "full FT unchanged by LoRA fields");
	/* Whole model, bf16 LoRA q,v, no dropout: 32 layers of 101536 B
	 * per token, less the first layer's first norm input (8192 B),
	 * and the output layer: frozen lm_head keeps no input, so the
	 * final norm input h * 2 + fp32 logits 32000 * 4 = 136192 B. */
	tc = train_cfg();
	tc.seq = 1024;
	tc.lora_rank = 8;
	tc.lora_targets = GP_LORA_Q | GP_LORA_V;
	MUST(mem_train(&l7, &tc, 80e9, &rs, &r, &err));
	is_num(r.bytes[GP_MEM_ACTIVATIONS], 1024.0 * (32 * 101536.0 - 8192),
	       1e-12, "LoRA model activations: 32 layers - first norm");
	is_num(r.bytes[GP_MEM_LOGITS], 1024.0 * 136192, 1e-12,
	       "LoRA logits: frozen lm_head keeps no input");

	/* --- 7B full fine-tune, mixed-16 AdamW: 16 B/param --- */
	tc = train_cfg();
	rc = mem_train(&l7, &tc, 80e9, &rs, &r, &err);
	ok(rc == GP_OK, "7B full fine-tune evaluates");
	/* Llama-2-7B: 32 (4 h^2 + 3 h f + 2h) + h + 2 V h
	 * = 6,738,415,616 params * 16 = 107,814,649,856 B. */
	is_num(states(&r), 107814649856.0, 1e-12,
	       "7B model states = 16 B/param (107.8 GB)");
	ok(!r.fits, "7B full fine-tune does not fit one 80 GB card");
	/* Short by: the states alone (107.8 GB) exceed the 72 GB budget;
	 * add the saved activations, 2048 tokens x 32 layers x 131712 B
	 * (the full-FT layer above) = 8631877632, and the output layer,
	 * 2048 x (final norm input 2h + lm_head input 2h + fp32 logits
	 * 4V = 8192 + 8192 + 128000) = 295698432: allocated
	 * 116742225920 B; x 1.05 fragmentation + 0.5 GiB context + 64 MiB
	 * cuBLAS workspace (no NCCL on one GPU) = 123183316992 B;
	 * - 0.9 x 80e9 = 51183316992 B.  Exact: tolerance 1e-12. */
	is_num(r.short_by, (107814649856.0 + 2048.0 * 32 * 131712 +
	       2048.0 * (8192 + 8192 + 4 * 32000)) * 1.05 + 0.5 * GiB +
	       64 * 1048576.0 - 72e9, 1e-12,
	       "... short by 51.18 GB (states alone: 35.8)");
	ok(r.largest == GP_MEM_OPTIMIZER, "largest term is the optimizer");
	/* Verdict arithmetic: budget = 0.9 * capacity. */
	is_num(r.short_by, r.total - 72e9, 1e-12, "short_by = total - 0.9C");

	/* --- ZeRO-3 over 8 divides model states by 8 --- */
	tc.lay.dp = 8;
	tc.lay.zero = 3;
	MUST(mem_train(&l7, &tc, 80e9, &rs, &r1, &err));
	is_num(states(&r1), 107814649856.0 / 8, 1e-12,
	       "ZeRO-3 over 8: model states / 8");
	/* Megatron distributed optimizer (ZeRO-1): 6 + 12/d B/param. */
	tc.recipe = FX_MEGATRON18;
	tc.lay.zero = 1;
	MUST(mem_train(&l7, &tc, 80e9, &rs, &r1, &err));
	is_num(states(&r1), 6738415616.0 * (6 + 12.0 / 8), 1e-12,
	       "megatron-18 ZeRO-1 over 8: 6 + 12/d");
	/* DeepSpeed BF16_Optimizer, 7B on one GPU: 2 bf16 + (2 bf16 +
	 * 4 fp32) grads + 4 master + 8 Adam = 20 B/param;
	 * 6,738,415,616 * 20 = 134,768,312,320 B. */
	tc.recipe = FX_DSBF16;
	tc.lay.dp = 1;
	tc.lay.zero = 0;
	MUST(mem_train(&l7, &tc, 80e9, &rs, &r1, &err));
	is_num(states(&r1), 134768312320.0, 1e-12,
	       "deepspeed-bf16 7B = 20 B/param (134.8 GB)");
	is_num(r1.bytes[GP_MEM_GRADS], 6738415616.0 * 6, 1e-12,
	       "deepspeed-bf16 grads: bf16 .grad + fp32 buffer = 6 B");
	/* ZeRO-1 over 8: params and both grads whole, master and Adam
	 * partitioned: 2 + 6 + 12/8 = 9.5 B/param. */
	tc.lay.dp = 8;
	tc.lay.zero = 1;
	MUST(mem_train(&l7, &tc, 80e9, &rs, &r1, &err));
	is_num(states(&r1), 6738415616.0 * 9.5, 1e-12,
	       "deepspeed-bf16 ZeRO-1 over 8: 8 + 12/d");
	/* BF16_Optimizer partitions master and Adam at ZeRO 0 too. */
	tc.lay.zero = 0;
	MUST(mem_train(&l7, &tc, 80e9, &rs, &r, &err));
	is_num(states(&r), states(&r1), 1e-12,
	       "deepspeed-bf16 ZeRO-0 = ZeRO-1 (partitioned by design)");
	/* ZeRO-2: the 6 B of grads shard too: 2 + 18/8 = 4.25 B/param;
	 * ZeRO-3: everything, 20/8 = 2.5 B/param. */
	tc.lay.zero = 2;
	MUST(mem_train(&l7, &tc, 80e9, &rs, &r, &err));
	is_num(states(&r), 6738415616.0 * 4.25, 1e-12,
	       "deepspeed-bf16 ZeRO-2 over 8: 2 + 18/d");
	tc.lay.zero = 3;
	MUST(mem_train(&l7, &tc, 80e9, &rs, &r, &err));
	is_num(states(&r), 6738415616.0 * 2.5, 1e-12,
	       "deepspeed-bf16 ZeRO-3 over 8: 20/d");

	/* --- pipeline: micro-batches in flight on stage 0 --- */
	tc = train_cfg();
	tc.lay.pp = 4;
	tc.seq = 8192;
	MUST(mem_train(&l7, &tc, 80e9, &rs, &r, &err));
	/* 4 micro-batches of 8k tokens on stage 0 outweigh the last
	 * stage's one micro-batch plus fp32 logits (V/h = 7.8 < 3 extra
	 * micro-batches of ~33 h per token). */
	is_int(r.stage, 0, "most loaded stage: the first");
	/* Stage 0 with 1F1B holds p = 4 micro-batches (Narayanan 2021). */
	is_num(r.inflight, 4, 0, "1F1B: p micro-batches in flight");
	tc.seq = 2048;
	tc.lay.schedule = GP_SCHED_INTERLEAVED;
	tc.lay.vpp = 2;
	tc.logit_bytes = 1e-9; /* make stage 0 the loaded one */
	MUST(mem_train(&l7, &tc, 80e9, &rs, &r, &err));
	/* Korthikanti 4.2.3: p (1 + (p-1)/(p v)) = 4 (1 + 3/8) = 5.5. */
	is_num(r.inflight, 5.5, 1e-12, "interleaved: p + (p-1)/v in flight");

	/* --- pipeline engine buffers: DeepSpeed vs Megatron --- */
	{
		gp_model bl = bloom176();
		gp_pipe_engine pe;

		/* BLOOM-176B as trained: TP 4, PP 12, DP 8, micro-batch 2,
		 * seq 2048, full recompute, bf16 (DeepSpeed BF16_Optimizer). */
		tc = train_cfg();
		tc.recipe = FX_DSBF16;
		tc.lay.dp = 8;
		tc.lay.tp = 4;
		tc.lay.pp = 12;
		tc.lay.zero = 1;
		tc.lay.micro_batch = 2;
		tc.recompute = GP_RECOMPUTE_FULL;
		MUST(mem_train(&bl, &tc, 80e9, &rs, &r1, &err));
		/* Megatron-LM pseudo-frees each sent output: no buffers. */
		ok(r1.bytes[GP_MEM_PIPE_BUFFERS] == 0,
		   "megatron: outputs deallocated, no pipe buffers");
		tc.pipe = GP_PIPE_DEEPSPEED;
		/* Same split as Megatron's (6 layers on stage 0) so that
		 * only the engine differs; the default split follows. */
		tc.partition = GP_PART_UNIFORM;
		MUST(mem_train(&bl, &tc, 80e9, &rs, &r, &err));
		is_int(r.stage, 0, "bloom: stage 0 is the most loaded");
		is_num(r.inflight, 12, 0, "bloom stage 0: p = 12 in flight");
		/* One stage output = s b h * 2 B = 2048*2*14336*2 =
		 * 117,440,512 B, kept as its 1/t = 1/4 slice (pipe_partitioned
		 * default): 29,360,128 B per micro-batch in flight, 12 of
		 * them, plus the one partitioned grad_layer buffer: 13 *
		 * 29,360,128 = 381,681,664 B.  Pure arithmetic: 1e-12. */
		is_num(r.bytes[GP_MEM_PIPE_BUFFERS], 381681664.0, 1e-12,
		       "deepspeed: 12 partitioned outputs + grad buffer");
		/* Nothing else moves: allocated grows by exactly that. */
		is_num(r.allocated - r1.allocated, 381681664.0, 1e-9,
		       "deepspeed adds only the pipe buffers");
		/* Stage 0 at the all-reduce would hold its 6 layers + the
		 * embedding, 4.6e9 params per GPU, as a 2-byte copy (9.2 GB),
		 * less than its 12 micro-batches of saved inputs, one layer
		 * re-run and the buffers (9.66 GB): the backward moment
		 * stays the peak, and Megatron has no such copy. */
		ok(r.bytes[GP_MEM_GRAD_REDUCE] == 0 &&
		   r1.bytes[GP_MEM_GRAD_REDUCE] == 0,
		   "stage 0: the backward moment outweighs the reduce copy");

		/* --- layers per stage (BLOOM: 70 layers, 12 stages) ---
		 * Item weights: embedding e = 250880*14336 = 3,596,615,680,
		 * layer w = 12h^2 + 13h = 2,466,437,120 (tr11-176B-ml
		 * README), e/w = 1.458. */
		{
			static const struct {
				gp_partition part;
				gp_pipe_engine pipe;
				int l0, l1, l10, l11;
				const char *name;
			} sp[] = {
				/* 70 = 12*5 + 10: stages 0..9 take 6. */
				{GP_PART_UNIFORM, GP_PIPE_DEEPSPEED,
				 6, 6, 5, 5, "uniform: 6 x 10, 5, 5"},
				/* Megatron (auto): the uniform split. */
				{GP_PART_AUTO, GP_PIPE_MEGATRON,
				 6, 6, 5, 5, "auto on megatron: uniform"},
				/* 70 ones in 12 parts: B = 6+, each part
				 * < B takes 6, the last the 4 left. */
				{GP_PART_TYPE_LAYER, GP_PIPE_DEEPSPEED,
				 6, 6, 6, 4, "type:transformer: 6 x 11, 4"},
				/* 72 ones (embedding, 70 layers, tied
				 * copy): B = 6+, stage 0 = embed + 5,
				 * the last 5 + embed: the README's table
				 * "pp rank 0: [embed | 5 transformer
				 * blocks] ... pp rank 11: [5 ... | embed]". */
				{GP_PART_TYPE_EMB, GP_PIPE_DEEPSPEED,
				 5, 6, 6, 5,
				 "type:transformer|embedding: BLOOM's table"},
				/* Parameters: sum/12 = 14.99e9; B must reach
				 * e + 5w = 15.93e9 (at e + 4w = 13.46e9 the
				 * ends hold 4, the middle 6 (14.80e9 < B),
				 * 4 + 60 + 4 = 68 < 70); just above it:
				 * 5, 6 x 10, 5. */
				{GP_PART_PARAMETERS, GP_PIPE_DEEPSPEED,
				 5, 6, 6, 5, "parameters: 5, 6 x 10, 5"},
				{GP_PART_AUTO, GP_PIPE_DEEPSPEED,
				 5, 6, 6, 5, "auto on deepspeed: parameters"},
			};
			size_t i;

			for (i = 0; i < sizeof sp / sizeof sp[0]; i++) {
				int l0 = -1, l1 = -1, l10 = -1, l11 = -1;

				tc.partition = sp[i].part;
				tc.pipe = sp[i].pipe;
				MUST(mem_stage_layers(&bl, &tc, 0, &l0, &err));
				MUST(mem_stage_layers(&bl, &tc, 1, &l1, &err));
				MUST(mem_stage_layers(&bl, &tc, 10, &l10,
						      &err));
				MUST(mem_stage_layers(&bl, &tc, 11, &l11,
						      &err));
				ok(l0 == sp[i].l0 && l1 == sp[i].l1 &&
				   l10 == sp[i].l10 && l11 == sp[i].l11,
				   sp[i].name);
			}
		}
		/* DeepSpeed's default split: stages 0 and 11 hold 5 layers
		 * + the embedding, 15,928,801,280 params / t 4 =
		 * 3,982,200,320 per GPU (the engine spreads the final
		 * norm's 2h over the layers: +512 here, 1.3e-7; 1e-6).
		 * Stage 11 at the all-reduce: the states, the bf16 copy
		 * of its grads 2 * 3,982,200,320 = 7,964,400,640 B, its
		 * receive buffer s b h 2 / t = 29,360,128 and both
		 * output buffers' fp32 logits 2 * (2048*2 * 250880/4 *
		 * 4) = 2,055,208,960: 10.05 GB over the states, against
		 * 3.7 GB at its backward (one micro-batch) and 8.25 GB on
		 * stage 0 (12 x 5 x 117,440,512 saved inputs + one layer
		 * + buffers). */
		tc.partition = GP_PART_AUTO;
		tc.pipe = GP_PIPE_DEEPSPEED;
		MUST(mem_train(&bl, &tc, 80e9, &rs, &r, &err));
		ok(r.stage == 11 && r.stage_layers == 5,
		   "bloom deepspeed default: the last stage, 5 layers");
		is_num(r.params, 3982200320.0, 1e-6,
		       "bloom stage 11: 5 layers + embedding over tp 4");
		is_num(r.bytes[GP_MEM_GRAD_REDUCE], 7964400640.0, 1e-6,
		       "grad_reduce: a bf16 copy of the stage's grads");
		is_num(r.bytes[GP_MEM_PIPE_BUFFERS], 2084569088.0, 1e-12,
		       "at the reduce: receive buffer + two fp32 logits");
		ok(r.bytes[GP_MEM_ACTIVATIONS] == 0 &&
		   r.bytes[GP_MEM_RECOMPUTE] == 0 &&
		   r.bytes[GP_MEM_LOGITS] == 0,
		   "no activations coexist with the reduce copy");
		/* The copy exists only under BF16_Optimizer: the 16-B
		 * recipe's fp16 grads are reduced in place. */
		tc.recipe = FX_MIXED16;
		MUST(mem_train(&bl, &tc, 80e9, &rs, &r, &err));
		ok(r.bytes[GP_MEM_GRAD_REDUCE] == 0,
		   "mixed-16: no reduce copy");
		tc.recipe = FX_DSBF16;

		/* Without tp nothing is partitioned.  Llama-2-7B, pp 4,
		 * seq 8192, b 1: one output = 8192*4096*2 = 67,108,864 B.
		 * Stage 0 keeps 4 outputs + grad_layer = 5 * 67,108,864 =
		 * 335,544,320 B.  The last stage keeps recv buffer (1), one
		 * extra input copy per micro-batch in flight (1 there) and one
		 * stale fp32 logits tensor 8192*32000*4 = 1,048,576,000 B:
		 * 2 * 67,108,864 + 1,048,576,000 = 1,182,793,728 B. */
		tc = train_cfg();
		tc.lay.pp = 4;
		tc.seq = 8192;
		tc.pipe = GP_PIPE_DEEPSPEED;
		MUST(mem_train(&l7, &tc, 80e9, &rs, &r, &err));
		is_int(r.stage, 0, "7b pp4: stage 0 still the most loaded");
		is_num(r.bytes[GP_MEM_PIPE_BUFFERS], 335544320.0, 1e-12,
		       "deepspeed tp 1: 4 full outputs + grad buffer");
		tc.logit_bytes = 400; /* weigh the last stage down */
		MUST(mem_train(&l7, &tc, 80e9, &rs, &r, &err));
		is_int(r.stage, 3, "huge logits: the last stage");
		is_num(r.bytes[GP_MEM_PIPE_BUFFERS], 1182793728.0, 1e-12,
		       "deepspeed last stage: recv, input copy, stale logits");
		ok(mem_pipe_parse("deepspeed", &pe, &err) == GP_OK &&
		   pe == GP_PIPE_DEEPSPEED && mem_pipe_parse("gpipe", &pe,
		   &err) == GP_EINVAL && strstr(err.msg, "megatron"),
		   "pipe engine names parse; unknown ones list the choices");
	}

	/* --- a balanced split off the uniform one --- */
	{
		gp_model g = gpt175();
		gp_params gpp;
		double x;
		int l[4] = {-1, -1, -1, -1}, k, nok = 0;

		/* 8 layers of h 1024 and a 30720-token tied embedding:
		 * x = e/w = 31,457,280 / (12h^2 + 13h ~ 12.6e6) ~ 2.5.
		 * Items [x, 1 x 8, x] in 4 parts: for 2 < x < 3 the best
		 * bottleneck is x + 1 (ends: embedding + 1 layer, middle:
		 * 3 layers, 1 + 6 + 1 = 8); any smaller B leaves the ends
		 * with 0 layers and the middle with 3 (6 < 8).  So
		 * 1, 3, 3, 1 where uniform gives 2, 2, 2, 2. */
		g.layers = 8;
		g.hidden = 1024;
		g.heads = 16;
		g.kv_heads = 16;
		g.head_dim = 64;
		g.ffn_hidden = 4096;
		g.vocab = 30720;
		g.norm_params = 2 * 1024;
		g.tied_embeddings = 1;
		MUST(model_params(&g, &gpp, &err));
		x = gpp.embedding / ((gpp.attention + gpp.dense_mlp +
				      gpp.norms) / 8);
		ok(x > 2 && x < 3, "toy: embedding weighs 2..3 layers");
		tc = train_cfg();
		tc.lay.pp = 4;
		tc.pipe = GP_PIPE_DEEPSPEED;
		for (k = 0; k < 4; k++)
			nok |= mem_stage_layers(&g, &tc, k, &l[k], &err);
		ok(!nok && l[0] == 1 && l[1] == 3 && l[2] == 3 && l[3] == 1,
		   "parameters: 1, 3, 3, 1 around a heavy embedding");
		/* Evaluated, not assumed: stage 1 (3 layers, 3 micro-
		 * batches in flight = 9 layer-micro-batches) outweighs
		 * stage 0 (1 layer x 4 + its embedding) with long
		 * sequences. */
		tc.seq = 32768;
		MUST(mem_train(&g, &tc, 80e9, &rs, &r, &err));
		ok(r.stage == 1 && r.stage_layers == 3,
		   "the most loaded stage is found: stage 1");
		ok(mem_stage_layers(&g, &tc, 4, &k, &err) == GP_EINVAL &&
		   strstr(err.msg, "0..3"), "stage out of range: an error");
		ok(mem_partition_parse("type:transformer|embedding",
				       &tc.partition, &err) == GP_OK &&
		   tc.partition == GP_PART_TYPE_EMB &&
		   mem_partition_parse("balanced", &tc.partition, &err) ==
		   GP_EINVAL && strstr(err.msg, "parameters"),
		   "partition names parse; unknown ones list the choices");
	}

	/* --- QLoRA 70B base: ~36 GB --- */
	tc = train_cfg();
	tc.recipe = FX_BF16;
	tc.lora_rank = 16;
	tc.lora_targets = 127;
	tc.base = nf4;
	MUST(mem_train(&l70, &tc, 80e9, &rs, &r, &err));
	/* linears 80 * 855,638,016 = 68,451,041,280 * 4.126953125 / 8
	 * = 35,311,779,840 B; embeddings, lm_head and norms 525,606,912
	 * params * 2 B = 1,051,213,824 B; sum 36,362,993,664 B. */
	is_num(r.bytes[GP_MEM_WEIGHTS], 36362993664.0, 1e-12,
	       "70B QLoRA NF4 base = 36.36 GB");
	ok(r.bytes[GP_MEM_GRADS] == 0 && r.bytes[GP_MEM_OPTIMIZER] == 0,
	   "frozen base has no grads or optimizer states");
	/* LoRA r=8 on q,v of Llama-2-7B: 32 * 2 * 8 * (4096 + 4096) =
	 * 4,194,304 (LitGPT's printed trainable count). */
	MUST(mem_lora_targets_parse("q,v", &mask, &err));
	is_num(mem_lora_params(&l7, 8, mask), 4194304, 0,
	       "LoRA r=8 q,v on 7B = 4,194,304");
	rc = mem_lora_targets_parse("q,x", &mask, &err);
	ok(rc == GP_EINVAL && strstr(err.msg, "'x'"),
	   "unknown LoRA target named");

	/* --- inference: Llama-2-70B bf16 KV for 4096 tokens --- */
	memset(&ic, 0, sizeof ic);
	ic.seqs = 1;
	ic.ctx = 4096;
	MUST(mem_infer(&l70, &ic, 80e9, &rs, &r, &err));
	/* 2 * 80 layers * 8 kv heads * 128 * 2 B * 4096 = 1.25 GiB. */
	is_num(r.kv_per_seq, 1.25 * GiB, 1e-12, "70B KV 4096 tok = 1.25 GiB");
	ic.tp = 16;
	MUST(mem_infer(&l70, &ic, 80e9, &rs, &r, &err));
	/* tp 16 > 8 kv heads: one head per GPU, 1/8 of the cache. */
	is_num(r.kv_per_seq, 1.25 * GiB / 8, 1e-12,
	       "KV replicated when kv_heads < tp");
	ic.tp = 8;
	ic.seqs = 4;
	MUST(mem_infer(&l70, &ic, 80e9, &rs, &r, &err));
	ok(r.fits, "70B on 8x80 GB serves 4 x 4096");
	/* max_seqs = floor(free / (kv_per_seq + 1.05 x logits row)), free
	 * = usable - weights - 1.05 x workspace of the 8192-token budget,
	 * per GPU of tp 8 (reserve of one GPU: no NCCL term; weights and
	 * the KV pool fragment nothing, the workspace 5%).  usable = 0.9 x
	 * 80e9 - 0.5 GiB - 64 MiB = 71396020224; weights: linears 80 x
	 * 855638016 / 8 x 2 B = 17112760320, norms (80 x 2 + 1) x 8192 / 8
	 * x 2 = 329728, embedding + lm_head 2 x 32000 x 8192 / 8 x 2 =
	 * 131072000 -> 17244162048; workspace 8192 tokens (vLLM's chunk) x
	 * 2 B x (2h + (q + k + v + o + 3f) / 8 = 16384 + (8192 + 1024 +
	 * 1024 + 8192 + 86016) / 8 = 29440) = 482344960.
	 * free = 71396020224 - 17244162048 - 506462208 = 53645395968;
	 * / (1.25 GiB / 8 + 1.05 x 32000 x 4 B / 8 = 167788960) = 319.72
	 * -> 319 sequences. */
	is_num(r.max_seqs, 319, 0, "... and 319 sequences of 4096 at most");
	/* The fixed reserve, memory.h mem_fixed_reserve (the rule the MoE
	 * serving model places too, serve.c fixed_reserve): 0.5 GiB context
	 * 536870912 + 64 MiB cuBLAS 67108864 = 603979776 B on one GPU, with
	 * 0.5 GiB of NCCL buffers 1140850688 on 8; usable = 0.9 x 80e9 -
	 * 603979776 = 71396020224 (above).  Exact: integers below 2^53. */
	{
		gp_mem_reserve r8;

		mem_reserve_default(&r8, 8);
		is_num(mem_fixed_reserve(&rs), 603979776.0, 0,
		       "fixed reserve, one GPU: context + cuBLAS");
		is_num(mem_fixed_reserve(&r8), 1140850688.0, 0,
		       "fixed reserve, 8 GPUs: + NCCL buffers");
		is_num(r.usable, 71396020224.0, 0,
		       "usable: 0.9 x 80e9 less the fixed reserve");
	}
	/* max_seqs is floor(room / kv_per_seq): one more must not fit. */
	ic.seqs = r.max_seqs + 1;
	MUST(mem_infer(&l70, &ic, 80e9, &rs, &r1, &err));
	ok(!r1.fits, "max_seqs + 1 sequences do not fit");
	/* 7B bf16 on a 6 GB card: offload layers to the CPU. */
	memset(&ic, 0, sizeof ic);
	ic.seqs = 1;
	ic.ctx = 2048;
	ic.offload = 1;
	MUST(mem_infer(&l7, &ic, 6e9, &rs, &r, &err));
	/* Budget 0.9 x 6e9 = 5.4e9 less 0.5 GiB + 64 MiB: 4796020224 B
	 * for the weights, the KV pool and 1.05 x the workspace.  Before
	 * offload: weights 6738415616 x 2 = 13476831232, KV 2 x 32 x 4096
	 * x 2 B x 2048 = 1 GiB, workspace 2048 x 2 B x (2h + 4h + 3f =
	 * 57600) + 32000 x 4 B = 236057600 (x 1.05 = 247860480):
	 * 14798433536 B, 10002413312 too many.  A layer moves its weights
	 * 202383488 x 2 = 404766976 B (its 1/32 of the final norm
	 * included) and its 1/32 of the KV, 33554432: 438321408 B;
	 * ceil(10002413312 / 438321408) = ceil(22.82) = 23 layers (the
	 * same 23 as the infer case in t_infer.c: infer_run sizes with
	 * this function). */
	is_int(r.cpu_layers, 23, "7B on 6 GB: 23 layers on the CPU");
	ok(r.fits, "... and the rest fits");

	/* An MoE layer's fused experts (vLLM's fused_experts_impl): the
	 * down projection's output, top_k x the hidden width a token,
	 * shares its cache with the gate/up output (N = 2 x 14336 / tp
	 * wide) and adds top_k x (h - N) where the hidden is wider, up to
	 * a 16384-token chunk.  Mixtral-like (h 4096, 8 experts of 14336,
	 * top 2) at TP 8: N = 3584, 2 x (4096 - 3584) x 2 B = 2048 B a
	 * token; the workspace grows by (ws_token + 2048) a token up to
	 * 16384 tokens and by ws_token beyond, so the two 8192-token
	 * steps differ by 8192 x 2048 = 16777216 B (exact).  At TP 2, N =
	 * 14336 > h: nothing added, the steps equal. */
	{
		gp_model mx = llama2_7b();

		mx.kv_heads = 8;
		mx.moe.experts = 8;
		mx.moe.top_k = 2;
		mx.moe.ffn_hidden = 14336;
		is_num(moe_ws_bend(&mx, 8, &rs), 16777216.0, 1e-12,
		       "fused MoE at TP 8: top_k x (h - N) a token, to the chunk");
		is_num(moe_ws_bend(&mx, 2, &rs), 0.0, 1e-12,
		       "at TP 2 the gate/up output is wider: none");
	}

	/* --- framework behaviour (stack profiles) --- */
	/* LitGPT fused QKV, MHA (Llama 2 7B, full training, flash, s 1304,
	 * b 1, 2 B): the fused output stays alive through the v view, so
	 * its q and k parts come on top: 1304 * (4096 + 4096) * 2 =
	 * 21364736 B per layer.  Exact arithmetic. */
	memset(&ac, 0, sizeof ac);
	ac.seq = 1304;
	ac.micro_batch = 1;
	ac.flash = 1;
	ac.act_bytes = 2;
	MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
	{
		double a0 = al.attention, t0 = al.total;

		ac.fused_qkv_view = 1;
		MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
		is_num(al.attention - a0, 21364736.0, 1e-12,
		       "fused QKV view keeps q+k of the fused output (MHA)");
		is_num(al.total - t0, 21364736.0, 1e-12,
		       "fused QKV view adds to the layer total");
	}
	/* GQA (Llama 2 70B: q 64*128 = 8192, k = v 8*128 = 1024), s 2048:
	 * k and v expanded to every head by copy, 2 * (8192 - 1024) wider:
	 * 2048 * 14336 * 2 = 58720256 B. */
	ac.seq = 2048;
	ac.fused_qkv_view = 0;
	MUST(mem_act_layer(&l70, &ac, 0, &al, &err));
	{
		double a0 = al.attention;

		ac.fused_qkv_view = 1;
		MUST(mem_act_layer(&l70, &ac, 0, &al, &err));
		is_num(al.attention - a0, 58720256.0, 1e-12,
		       "fused QKV with GQA: expanded k and v copies");
	}
	/* LitGPT's zero padding of a q,v adapter on the fused QKV
	 * (Llama 2 7B, frozen base, r 8, s 1304, b 1, 2 B): index_copy
	 * keeps its source, the q and v adapter outputs: 1304 * (4096 +
	 * 4096) * 2 = 21364736 B per layer.  With q, k and v all adapted
	 * zero_pad scatters nothing: no change.  Exact arithmetic. */
	memset(&ac, 0, sizeof ac);
	ac.seq = 1304;
	ac.micro_batch = 1;
	ac.flash = 1;
	ac.act_bytes = 2;
	ac.frozen = 1;
	ac.lora_rank = 8;
	ac.lora_targets = GP_LORA_Q | GP_LORA_V;
	MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
	{
		double l0 = al.lora;

		ac.lora_zero_pad = 1;
		MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
		is_num(al.lora - l0, 21364736.0, 1e-12,
		       "LitGPT zero pad keeps the q,v adapter outputs");
		ac.lora_targets = GP_LORA_Q | GP_LORA_K | GP_LORA_V;
		ac.lora_zero_pad = 0;
		MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
		l0 = al.lora;
		ac.lora_zero_pad = 1;
		MUST(mem_act_layer(&l7, &ac, 0, &al, &err));
		is_num(al.lora - l0, 0.0, 0,
		       "zero pad with q, k, v all adapted keeps nothing");
	}
	/* torchtune full fine-tune of a Llama 3.1 8B shape: bf16 params,
	 * PagedAdamW8bit, optimizer_in_bwd.  Parameters: embedding and
	 * lm_head 128256 * 4096 = 525336576 each; per layer q, o 4096^2,
	 * k, v 4096 * 1024, MLP 3 * 4096 * 14336, two norms 2 * 4096 =
	 * 218112000; 32 layers + final norm 4096: 8030261248. */
	{
		gp_model l8 = l7;

		l8.kv_heads = 8;
		l8.ffn_hidden = 14336;
		l8.vocab = 128256;
		tc = train_cfg();
		tc.recipe = FX_BF16;
		tc.optim = FX_ADAM8BIT;
		tc.lay.micro_batch = 2;
		tc.recompute = GP_RECOMPUTE_FULL;
		tc.paged_optimizer = 1;
		tc.grads_in_bwd = 1;
		rc = mem_train(&l8, &tc, 24e9, &rs, &r, &err);
		ok(rc == GP_OK, "paged + in-backward config accepted");
		is_num(r.params, 8030261248.0, 1e-12, "Llama 3.1 8B params");
		ok(r.bytes[GP_MEM_OPTIMIZER] == 0,
		   "paged states leave the allocator's optimizer term");
		/* 8-bit Adam: 2 * (1 + 4/2048) B/param on managed memory. */
		is_num(r.bytes[GP_MEM_PAGED],
		       8030261248.0 * 2 * (1 + 4.0 / 2048), 1e-12,
		       "paged 8-bit Adam states = 2.00390625 B/param");
		/* One grad at a time, the largest: lm_head 525336576 * 2 B. */
		is_num(r.bytes[GP_MEM_GRADS], 1050673152.0, 1e-12,
		       "optimizer_in_bwd: only the largest grad (lm_head)");
		/* Neither max_memory_allocated nor the fit sees managed
		 * memory the driver evicts under pressure: total = allocated
		 * + context (0.5 GiB) + workspaces (64 MiB) + 5%
		 * fragmentation of allocated, the paged states beside it. */
		is_num(r.total, r.allocated * 1.05 + 0.5 * GiB +
		       64.0 * 1048576, 1e-12,
		       "paged states in neither total nor allocated");
		/* The 16.09 GB of paged states are the biggest number in
		 * the breakdown, but they cannot be why a job does not fit:
		 * the verdict names a resident term. */
		ok(r.largest != GP_MEM_PAGED,
		   "paged states are never the largest term of a verdict");
	}
	/* QLoRA with the output layer quantised too (LitGPT under
	 * BitsandbytesPrecision), Llama 2 7B, NF4-DQ 4.126953125 bits:
	 * lm_head 32000 * 4096 = 131072000 weights drop from 2 B to
	 * 0.515869140625 B: 194528000 B less. */
	tc = train_cfg();
	tc.lora_rank = 8;
	tc.lora_targets = GP_LORA_Q | GP_LORA_V;
	tc.base = nf4;
	MUST(mem_train(&l7, &tc, 40e9, &rs, &r1, &err));
	tc.quant_head = 1;
	MUST(mem_train(&l7, &tc, 40e9, &rs, &r, &err));
	is_num(r1.bytes[GP_MEM_WEIGHTS] - r.bytes[GP_MEM_WEIGHTS],
	       131072000.0 * (2 - 4.126953125 / 8), 1e-9,
	       "quantised head stored at 4.127 bits");
	/* The 4-bit head keeps its input: + s h A = 2048 * 4096 * 2. */
	is_num(r.bytes[GP_MEM_LOGITS] - r1.bytes[GP_MEM_LOGITS], 16777216.0,
	       1e-9, "quantised head keeps its input");
	/* Dequantised transient: the head (131072000 elements) is larger
	 * than any layer linear (4096 * 11008): 2 * 131072000 B. */
	is_num(r.bytes[GP_MEM_WORKSPACE], 262144000.0, 1e-12,
	       "dequantised head is the largest transient");
	/* A 16-bit base ignores quant_head: nothing to quantise. */
	tc.base.bits = 0;
	MUST(mem_train(&l7, &tc, 40e9, &rs, &r, &err));
	tc.quant_head = 0;
	MUST(mem_train(&l7, &tc, 40e9, &rs, &r1, &err));
	is_num(r.allocated, r1.allocated, 0,
	       "quant_head has no effect on a 16-bit base");

	/* --- vision-language training (Qwen2-VL 7B shape) --- */
	{
		gp_model vl = l7;
		gp_params vp;
		/* (448 / 14)^2 = 1024 patches per image, 256 tokens x 2^2. */
		double tower;

		vl.kv_heads = 4;
		vl.layers = 28;
		vl.hidden = 3584;
		vl.heads = 28;
		vl.head_dim = 128;
		vl.ffn_hidden = 18944;
		vl.norm_params = 3584;
		vl.vocab = 152064;
		vl.vision.layers = 32;
		vl.vision.hidden = 1280;
		vl.vision.heads = 16;
		vl.vision.ffn_hidden = 5120;
		vl.vision.image_size = 448;
		vl.vision.patch_size = 14;
		vl.vision.merge = 2;
		vl.vision.temporal_patch = 2;
		vl.vision.tokens_per_image = 256;
		vl.vision.projector_params = 44573184;
		MUST(model_params(&vl, &vp, &err));
		tower = vp.vision - 44573184;
		tc = train_cfg();
		tc.seq = 4096;
		tc.images = 4;
		tc.vision_frozen = 1;
		rc = mem_train(&vl, &tc, 80e9, &rs, &r, &err);
		/* Frozen tower, pixels need no grad: only the training
		 * merger keeps inputs, 4 * P * 1280 elements per image:
		 * 4 images * 4 * 1024 * 1280 * 2 B = 41943040 B. */
		is_num(r.bytes[GP_MEM_VISION], 41943040.0, 1e-12,
		       "frozen tower: only the merger's inputs are kept");
		tc.vision_frozen = 0;
		MUST(mem_train(&vl, &tc, 80e9, &rs, &r1, &err));
		/* A training tower, no recompute, flash: per ViT layer per
		 * patch 2 B * (two LayerNorm inputs 2560 + qkv input 1280 +
		 * q, k, v 3840 + projection input 1280 + fc1 input 1280 +
		 * GELU input 5120 + fc2 input 5120) + lse 4 B * 16 heads =
		 * 41024 B; * 32 layers * 4 * 1024 patches = 5377097728, plus
		 * the merger's 41943040: 5419040768 B. */
		is_num(r1.bytes[GP_MEM_VISION], 5419040768.0, 1e-12,
		       "training tower keeps every ViT layer's inputs");
		/* Frozen tower: no grads, master or Adam states for it:
		 * 2 + 4 + 8 B per tower parameter fewer (mixed-16). */
		is_num((r1.bytes[GP_MEM_GRADS] + r1.bytes[GP_MEM_MASTER] +
			r1.bytes[GP_MEM_OPTIMIZER]) -
		       (r.bytes[GP_MEM_GRADS] + r.bytes[GP_MEM_MASTER] +
			r.bytes[GP_MEM_OPTIMIZER]), tower * 14.0, 1e-12,
		       "frozen tower drops its 14 B/param of states");
		ok(r1.bytes[GP_MEM_WEIGHTS] == r.bytes[GP_MEM_WEIGHTS],
		   "frozen or not, the tower's weights are held");
		/* Full recompute: each ViT layer keeps its input only,
		 * 4 * 1024 * 1280 * 2 B * 32 layers = 335544320, + merger. */
		tc.recompute = GP_RECOMPUTE_FULL;
		MUST(mem_train(&vl, &tc, 80e9, &rs, &r1, &err));
		is_num(r1.bytes[GP_MEM_VISION], 335544320.0 + 41943040.0,
		       1e-12, "recomputed tower keeps layer inputs");
		/* LoRA: the whole base is frozen, projector included. */
		tc = train_cfg();
		tc.seq = 4096;
		tc.images = 4;
		tc.lora_rank = 8;
		tc.lora_targets = GP_LORA_Q | GP_LORA_V;
		MUST(mem_train(&vl, &tc, 80e9, &rs, &r1, &err));
		ok(r1.bytes[GP_MEM_VISION] == 0,
		   "LoRA keeps nothing in the tower");
		/* Errors. */
		tc = train_cfg();
		tc.seq = 1000;
		tc.images = 4;
		rc = mem_train(&vl, &tc, 80e9, &rs, &r1, &err);
		ok(rc == GP_EINVAL && strstr(err.msg, "do not fit in a sequence"),
		   "image tokens beyond seq rejected");
		tc.seq = 4096;
		tc.images = 1.5;
		rc = mem_train(&vl, &tc, 80e9, &rs, &r1, &err);
		ok(rc == GP_EINVAL && strstr(err.msg, "whole number"),
		   "fractional images rejected");
		tc.images = 1;
		rc = mem_train(&l7, &tc, 80e9, &rs, &r1, &err);
		ok(rc == GP_EINVAL && strstr(err.msg, "without a vision tower"),
		   "images on a text model rejected");
	}

	/* --- encoder-decoder (T5) activations --- */
	{
		gp_model t = t5_tiny();

		/* Decoder layer: 2 sequences of 8 target tokens (16 tokens)
		 * over 16 encoder tokens (32 per micro-batch), 2-byte
		 * activations, unfused, dropout on, full training. */
		memset(&ac, 0, sizeof ac);
		ac.seq = 8;
		ac.micro_batch = 2;
		ac.act_bytes = 2;
		ac.dropout = 1;
		ac.enc_len = 16;
		ok(mem_act_layer(&t, &ac, 0, &al, &err) == GP_OK,
		   "t5 decoder layer activations");
		/* Norm inputs: self, cross and MLP norms, 3 x 64 x 2 B x 16
		 * tokens = 6,144. */
		is_num(al.norms, 6144, EXACT,
		       "decoder layer: three norm inputs");
		/* Cross block: per target token its q input 128 B, q 256 B,
		 * o input 256 B (16 x 640 = 10,240); per encoder token K
		 * and V 2 x 128 x 2 B (32 x 512 = 16,384): 26,624. */
		is_num(al.cross, 26624, EXACT, "decoder layer: cross block");
		/* The encoder output the k and v linears read: 32 x 64 x 2
		 * = 4,096, kept once per stack (not in the layer's total). */
		is_num(al.enc_out, 4096, EXACT,
		       "decoder layer: encoder output");
		/* Scores: 4 heads x 16 queries x (8 self + 16 cross) keys x
		 * (2 B softmax + 1 B mask + 2 B dropout) = 7,680. */
		is_num(al.core, 7680, EXACT,
		       "decoder layer: self + cross scores");
		/* ReLU MLP with T5's inner dropout: input 128 B, ReLU output
		 * 512 B, dropout output (wo's input) 512 B per token:
		 * 16 x 1,152 = 18,432; masks: 3 blocks x 64 + the inner 256
		 * bytes per token: 16 x 448 = 7,168. */
		is_num(al.mlp, 18432, EXACT,
		       "decoder layer: ReLU MLP + dropout");
		is_num(al.masks, 7168, EXACT,
		       "decoder layer: four dropout masks");
		/* Total: norms 6,144 + self attention 16 x (128 + 768 + 256)
		 * = 18,432 + core 7,680 + MLP 18,432 + masks 7,168 + cross
		 * 26,624 = 84,480. */
		is_num(al.total, 84480, EXACT, "decoder layer total");
		/* Without dropout ReLU's output is wo's input: one tensor,
		 * 16 x (128 + 512) = 10,240. */
		ac.dropout = 0;
		MUST(mem_act_layer(&t, &ac, 0, &al, &err));
		is_num(al.mlp, 10240, EXACT, "ReLU keeps one MLP-wide tensor");
		/* LoRA on q, v (PEFT's T5 default: SelfAttention and
		 * EncDecAttention) with adapter dropout, frozen base: the
		 * cross q input and the encoder output are kept only as
		 * the adapters' dropout outputs (64 x 3 B) + rank-4 outputs
		 * (8 B), per target token and per encoder token: cross =
		 * 16 x q 256 + 32 x (K, V 512 + 200) = 26,880; no shared
		 * encoder output. */
		ac.dropout = 1;
		ac.frozen = 1;
		ac.lora_rank = 4;
		ac.lora_targets = GP_LORA_Q | GP_LORA_V;
		ac.lora_dropout = 1;
		MUST(mem_act_layer(&t, &ac, 0, &al, &err));
		is_num(al.cross, 26880, EXACT, "LoRA q,v: cross block");
		is_num(al.enc_out, 0, 0, "LoRA q,v: k/v linears keep no input");
		/* Adapters: r (in + out) for q and v, 4 x 2 x (64 + 128) =
		 * 1,536 per attention block, in 2 encoder self, 2 decoder
		 * self and 2 cross blocks: 9,216. */
		is_num(mem_lora_params(&t, 4, GP_LORA_Q | GP_LORA_V), 9216,
		       EXACT, "t5 LoRA q,v parameters: both stacks + cross");
		ac.frozen = 0;
		ac.lora_rank = 0;
		ac.lora_targets = 0;
		ac.lora_dropout = 0;
		ac.enc_len = 3;
		ok(mem_act_layer(&l7, &ac, 0, &al, &err) == GP_EINVAL &&
		   strstr(err.msg, "enc_len 3 given for a decoder-only"),
		   "enc_len on a decoder-only model rejected");

		/* The whole model, one micro-batch: 2 decoder layers
		 * (84,480) + 2 encoder layers (16 encoder tokens x 2
		 * sequences: norms 8,192 + attention 32 x 1,152 + scores
		 * 4 x 32 x 16 x 5 = 10,240 + MLP 32 x 1,152 + masks
		 * 32 x 384 = 104,448) + the encoder output 4,096 + the
		 * dropout masks of the encoder embedding and both final
		 * norms 2 x 64 x (2 x 16 + 8) = 5,120 + the decoder
		 * embedding's 16 x 64 = 1,024: 388,096. */
		tc = train_cfg();
		tc.seq = 8;
		tc.enc_seq = 16;
		tc.lay.micro_batch = 2;
		tc.flash = 0;
		tc.dropout = 1;
		ok(mem_train(&t, &tc, 80e9, &rs, &r, &err) == GP_OK,
		   "t5 training memory");
		is_num(r.bytes[GP_MEM_ACTIVATIONS], 388096, EXACT,
		       "t5: both stacks' activations");
		/* Logits over the 16 target tokens: 2 x 64 x 2 B + 100 x
		 * 4 B = 656 per token: 10,496. */
		is_num(r.bytes[GP_MEM_LOGITS], 10496, EXACT,
		       "t5: decoder logits");
		tc.lay.pp = 2;
		ok(mem_train(&t, &tc, 80e9, &rs, &r, &err) == GP_EINVAL &&
		   strstr(err.msg, "pp 2: an encoder-decoder"),
		   "t5 over pipeline stages rejected");
		tc.lay.pp = 1;
		tc.enc_seq = 16;
		ok(mem_train(&l7, &tc, 80e9, &rs, &r, &err) == GP_EINVAL &&
		   strstr(err.msg, "enc_seq 16 given for a decoder-only"),
		   "enc_seq on a decoder-only model rejected");
		memset(&ic, 0, sizeof ic);
		ic.ctx = 512;
		ic.seqs = 1;
		ok(mem_infer(&t, &ic, 80e9, &rs, &r, &err) == GP_EINVAL &&
		   strstr(err.msg, "inference of an encoder-decoder"),
		   "t5 inference memory refused, not mispriced");
	}

	/* --- offload (DeepSpeed ZeRO-Offload / ZeRO-Infinity) --- */
	{
		/* Llama-2-7B, N = 6,738,415,616, mixed-16, ZeRO-3 over 8
		 * with params and optimizer on the host.  Host per GPU: the
		 * bf16 partition 2N/8 = 1,684,603,904; fp32 grad + the
		 * 16-bit accumulation partition (4 + 2) N/8 =
		 * 5,053,811,712; fp32 master 4N/8 = 3,369,207,808; Adam
		 * 8N/8 = 6,738,415,616; sum 20N/8 = 16,846,039,040. */
		double N = 6738415616.0, big = 32000.0 * 4096;

		tc = train_cfg();
		tc.lay.dp = 8;
		tc.lay.zero = 3;
		tc.offload_optimizer = tc.offload_params = 1;
		ok(mem_train(&l7, &tc, 80e9, &rs, &r, &err) == GP_OK,
		   "ZeRO-3 offload params+optimizer");
		is_num(r.host_weights, 2 * N / 8, EXACT,
		       "host: bf16 partition");
		is_num(r.host_grads, 6 * N / 8, EXACT,
		       "host: fp32 grad + bf16 accumulation partition");
		is_num(r.host_master, 4 * N / 8, EXACT, "host: fp32 master");
		is_num(r.host_optimizer, 8 * N / 8, EXACT, "host: Adam m, v");
		is_num(r.cpu_bytes, 16846039040.0, EXACT,
		       "host: 20 B/param / 8");
		ok(r.bytes[GP_MEM_WEIGHTS] == 0 &&
		   r.bytes[GP_MEM_MASTER] == 0 &&
		   r.bytes[GP_MEM_OPTIMIZER] == 0,
		   "GPU: no partitions or states");
		/* GPU grads: the 5e8-element bf16 bucket + the largest
		 * tensor's .grad, the 32000 x 4096 embedding:
		 * (500,000,000 + 131,072,000) x 2 = 1,262,144,000. */
		is_num(r.bytes[GP_MEM_GRADS], (5e8 + big) * 2, EXACT,
		       "GPU: gradient bucket + one .grad");
		/* Gathered: the layers within half the 1e9 reuse distance
		 * of the turnaround + the layer in flight, 5e8 +
		 * 202,383,360 = 702,383,360 elements x 2 B. */
		is_num(r.bytes[GP_MEM_PARAM_GATHER], 702383360.0 * 2, EXACT,
		       "GPU: the reuse window, gathered");
		/* ZeRO-2 with the optimizer offloaded: bf16 weights whole
		 * (2N), the bucket + the .grad + DeepSpeed's
		 * temp_grad_buffer_for_gpu_offload of the largest tensor;
		 * host 16 B/param / 8 = 2N. */
		tc.lay.zero = 2;
		tc.offload_params = 0;
		ok(mem_train(&l7, &tc, 80e9, &rs, &r, &err) == GP_OK,
		   "ZeRO-2 offload optimizer");
		is_num(r.bytes[GP_MEM_WEIGHTS], 2 * N, EXACT,
		       "ZeRO-2: bf16 weights");
		is_num(r.bytes[GP_MEM_GRADS], (5e8 + 2 * big) * 2, EXACT,
		       "ZeRO-2: bucket + .grad + temp buffer");
		is_num(r.bytes[GP_MEM_PARAM_GATHER], 0, 0,
		       "ZeRO-2: no gather, no one-layer bucket");
		is_num(r.cpu_bytes, 2 * N, EXACT, "ZeRO-2: host 16N/8");
		/* LoRA r 8 on q, v (32 x 8 x 2 x 8192 = 4,194,304 adapter
		 * parameters) over a bf16 base, ZeRO-3 on one GPU, both
		 * offloaded: host base 2N + adapter 2 x 4,194,304; adapter
		 * master 4, grads 4 + 2, Adam 8 B each; GPU grads the bucket
		 * + one adapter matrix (8 x 11008) in bf16. */
		tc = train_cfg();
		tc.lay.zero = 3;
		tc.offload_optimizer = tc.offload_params = 1;
		tc.lora_rank = 8;
		tc.lora_targets = GP_LORA_Q | GP_LORA_V;
		ok(mem_train(&l7, &tc, 80e9, &rs, &r, &err) == GP_OK,
		   "LoRA ZeRO-3 offload");
		is_num(r.host_weights, 2 * N + 2 * 4194304.0, EXACT,
		       "LoRA: base and adapter partitions on the host");
		is_num(r.host_master + r.host_grads + r.host_optimizer,
		       18 * 4194304.0, EXACT,
		       "LoRA: adapter states on the host");
		is_num(r.bytes[GP_MEM_GRADS], (5e8 + 8 * 11008.0) * 2, EXACT,
		       "LoRA: the full bucket still");
		ok(r.bytes[GP_MEM_WEIGHTS] == 0 && r.bytes[GP_MEM_ADAPTER] == 0,
		   "LoRA: no partition on the GPU");
		/* Refusals: offload without ZeRO, params below stage 3, an
		 * 8-bit GPU optimizer. */
		tc = train_cfg();
		tc.offload_optimizer = 1;
		ok(mem_train(&l7, &tc, 80e9, &rs, &r, &err) == GP_EINVAL &&
		   strstr(err.msg, "offload needs a ZeRO stage"),
		   "offload at zero 0 rejected");
		tc.lay.zero = 2;
		tc.offload_params = 1;
		ok(mem_train(&l7, &tc, 80e9, &rs, &r, &err) == GP_EINVAL &&
		   strstr(err.msg, "parameters needs zero 3"),
		   "parameter offload at zero 2 rejected");
		tc.offload_params = 0;
		/* An 8-bit AdamW on the CPU (torchao's AdamW8bit beside
		 * FSDP's CPU offload, torchtune): its two 8-bit states and
		 * one fp32 absmax per 2048-element block, 2 (1 + 4/2048) B
		 * per element of the fp32 master's 4 on the host. */
		tc.optim = FX_ADAM8BIT;
		ok(mem_train(&l7, &tc, 80e9, &rs, &r, &err) == GP_OK &&
		   fabs(r.host_optimizer / r.host_master -
			2.0 * (1.0 + 4.0 / 2048.0) / 4.0) < 1e-12,
		   "offload with adam8bit: 8-bit states on the host");
	}

	/* --- invalid input: clear errors --- */
	tc = train_cfg();
	tc.lay.tp = 3;
	rc = mem_train(&l7, &tc, 80e9, &rs, &r, &err);
	ok(rc == GP_EINVAL && strstr(err.msg, "tp 3 does not divide"),
	   "tp not dividing heads rejected");
	tc = train_cfg();
	tc.seq = -1;
	rc = mem_train(&l7, &tc, 80e9, &rs, &r, &err);
	ok(rc == GP_EINVAL && strstr(err.msg, "seq"), "negative seq rejected");
	tc.seq = NAN;
	rc = mem_train(&l7, &tc, 80e9, &rs, &r, &err);
	ok(rc == GP_EINVAL, "NaN seq rejected");
	tc = train_cfg();
	tc.lay.zero = 4;
	rc = mem_train(&l7, &tc, 80e9, &rs, &r, &err);
	ok(rc == GP_EINVAL && strstr(err.msg, "zero"), "zero 4 rejected");
	tc = train_cfg();
	rc = mem_train(&l7, &tc, -80e9, &rs, &r, &err);
	ok(rc == GP_EINVAL && strstr(err.msg, "capacity"),
	   "negative capacity rejected");
	bad = l7;
	bad.hidden = -4096;
	rc = mem_train(&bad, &tc, 80e9, &rs, &r, &err);
	ok(rc == GP_EINVAL, "negative hidden rejected by model_check");

	/* The ZeRO split: Llama-2-70B on tp 8 pp 4 dp 2 (80 layers, 20 a
	 * stage), one split finished under each ZeRO stage equals
	 * mem_train for that stage, byte for byte (the same expressions in
	 * the same order); an offloaded config and a ZeRO stage past 3 are
	 * refused. */
	{
		static gp_mem_split sp;
		gp_params pp;
		gp_layout y;
		const gp_mem_result *res = NULL;
		int z, same = 1;

		tc = train_cfg();
		tc.recipe = FX_MEGATRON18;
		tc.seq = 4096;
		tc.lay.tp = 8;
		tc.lay.pp = 4;
		tc.lay.dp = 2;
		tc.lay.sp = 1;
		tc.lay.microbatches = 8;
		ok(model_params(&l70, &pp, &err) == GP_OK &&
		   mem_layout_prepared(&l70, &pp, &tc, &y, &err) == GP_OK &&
		   mem_train_split(&l70, &pp, &tc, &y, 80e9, &rs, NULL, &sp,
				   &err) == GP_OK && sp.n == 3,
		   "split: 3 distinct stages (first, middle, last) of pp 4");
		for (z = 0; z < 4; z++) {
			tc.lay.zero = y.zero = z;
			if (mem_train_zero(&l70, &pp, &tc, &y, 80e9, &rs, &sp,
					   &res, &err) != GP_OK ||
			    mem_train(&l70, &tc, 80e9, &rs, &r, &err) != GP_OK ||
			    memcmp(res->bytes, r.bytes, sizeof r.bytes) != 0 ||
			    res->total != r.total || res->stage != r.stage)
				same = 0;
		}
		ok(same, "split finished under ZeRO 0..3 == mem_train");
		/* The brief finish: the same total and fit (the same sums),
		 * the largest component alone left unset. */
		for (z = 0, same = 1; z < 4; z++) {
			tc.lay.zero = y.zero = z;
			if (mem_train_zero_fit(&l70, &pp, &tc, &y, 80e9, &rs,
					       &sp, &res, &err) != GP_OK ||
			    mem_train(&l70, &tc, 80e9, &rs, &r, &err) != GP_OK ||
			    res->total != r.total || res->fits != r.fits ||
			    res->allocated != r.allocated)
				same = 0;
		}
		ok(same, "split's brief finish under ZeRO 0..3: mem_train's "
		   "total and fit");
		tc.lay.zero = y.zero = 4;
		ok(mem_train_zero(&l70, &pp, &tc, &y, 80e9, &rs, &sp, &res,
				  &err) == GP_EINVAL && strstr(err.msg, "zero"),
		   "split: zero 4 refused");
		tc.lay.zero = y.zero = 1;
		tc.offload_optimizer = 1;
		ok(mem_train_split(&l70, &pp, &tc, &y, 80e9, &rs, NULL, &sp,
				   &err) == GP_EINVAL &&
		   strstr(err.msg, "offload") != NULL,
		   "split: an offloaded config refused");
	}
	/* DeepSpeed's ZeRO-2/3 gradient phase on the ZeRO split: a sweep
	 * prices the ZeRO stages on one split's scratch results
	 * (train.c phase_mem), so a stage 3 priced first must not leave its
	 * phase, its grad bytes or stage 3's idle tensors on the stages
	 * priced after it (memory_train.c stage_one clears them).  Llama 2
	 * 7B, deepspeed-bf16 with DeepSpeed's ZeRO engine, dp 8, pp 1: each
	 * stage's fields equal a fresh mem_train's, in the order 3, 2, 1,
	 * 0, 3; and stages 0 and 1 name no phase (the rule is stages 2 and
	 * 3's, memory_deepspeed.c mem_ds_zero_phases). */
	{
		static gp_mem_split sp;
		static const int order[] = { 3, 2, 1, 0, 3 };
		gp_params pp;
		gp_layout y;
		const gp_mem_result *res = NULL;
		int i, z, same = 1, none = 1;

		tc = train_cfg();
		tc.recipe = FX_DSBF16;
		tc.ds_zero = 1;
		tc.lay.dp = 8;
		tc.lay.zero = 3;
		ok(model_params(&l7, &pp, &err) == GP_OK &&
		   mem_layout_prepared(&l7, &pp, &tc, &y, &err) == GP_OK &&
		   mem_train_split(&l7, &pp, &tc, &y, 80e9, &rs, NULL, &sp,
				   &err) == GP_OK,
		   "split: deepspeed-bf16, DeepSpeed's ZeRO engine, dp 8");
		for (i = 0; i < 5; i++) {
			z = order[i];
			tc.lay.zero = y.zero = z;
			if (mem_train_zero(&l7, &pp, &tc, &y, 80e9, &rs, &sp,
					   &res, &err) != GP_OK ||
			    mem_train(&l7, &tc, 80e9, &rs, &r, &err) != GP_OK ||
			    res->ds_grad_phase != r.ds_grad_phase ||
			    res->ds_grad_bytes != r.ds_grad_bytes ||
			    res->ds_idle_grads != r.ds_idle_grads ||
			    res->ds_idle_bucket != r.ds_idle_bucket ||
			    res->ds_fwd_gather != r.ds_fwd_gather ||
			    res->total != r.total)
				same = 0;
			if (z < 2 && (res->ds_grad_phase != 0 ||
				      res->ds_grad_bytes != 0 ||
				      res->ds_idle_grads != 0))
				none = 0;
			if (z == 3 && res->ds_grad_phase == 0)
				none = 0;
		}
		ok(same, "split under ZeRO 3, 2, 1, 0, 3: mem_train's grad "
		   "phase, grad bytes and stage 3's idle tensors");
		ok(none, "split: stages 0 and 1 after 3 and 2 name no grad "
		   "phase; stage 3 names one");
	}
	return done();
}
