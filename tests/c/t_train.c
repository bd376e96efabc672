/*
 * t_train.c - the training step against hand derivations.
 *
 * The device and topology (tests/c/fixture.h) have round numbers so the
 * expected values can be worked out on paper: an A100-like part (312
 * TFLOPS bf16, 19.5 fp32, no fp8, 2.039 TB/s at 0.85) in 8-GPU nodes on
 * NVLink (300 GB/s per direction at 0.8, NVLS off) with 8 NICs of 25 GB/s
 * at 0.9 each (HDR 200 Gb/s).
 */
#include <math.h>
#include <string.h>

#include "comm.h"
#include "memory.h"
#include "memory_states.h"
#include "model.h"
#include "fixture.h"
#include "recipes.h"
#include "tap.h"
#include "train.h"

#define US 1e-6

static train_cfg cfg(int tp, int pp, int dp, double mb, double gb)
{
	train_cfg c;

	train_defaults(&c);
	c.mem.recipe = FX_MEGATRON18;
	c.mem.optim = FX_ADAMW;
	c.mem.lay.tp = tp;
	c.mem.lay.pp = pp;
	c.mem.lay.dp = dp;
	c.mem.lay.micro_batch = mb;
	c.mem.seq = 2048;
	c.global_batch = gb;
	c.capacity = 80e9;
	return c;
}

/* A gated, RMSNorm model with GQA (h 1024, 8 heads of 128, 2 KV heads,
 * SwiGLU of 2816, 4 layers) on one GPU in mixed 16-bit, no host floor:
 * the fixture of the eager and the positions tests. */
static void gqa_fixture(gp_model *m, train_cfg *c)
{
	*m = fx_gpt(4, 1024, 8, 32000);
	m->kv_heads = 2;
	m->ffn_gated = 1;
	m->ffn_hidden = 2816;
	m->norm_params = 1024;
	m->tied_embeddings = 0;
	*c = cfg(1, 1, 1, 1, 1);
	c->mem.recipe = FX_MIXED16;
	c->host_op_time = 0;
}

int main(void)
{
	roof_device d;
	gp_topo t = fx_selene();
	gp_model m;
	train_cfg c;
	train_result r, r2;
	gp_error e;
	double tok, want, s, l, h, V, S;
	int i, rc;

	plan(79);
	fx_a100(&d);

	/* --- one GPU: the step is its compute and its optimizer ------------ */
	m = fx_gpt(24, 2048, 16, 51200);
	c = cfg(1, 1, 1, 1, 4);
	rc = train_step(&m, &d, &t, &c, &r, &e);
	ok(rc == GP_OK, "1-GPU step");
	for (i = TRAIN_TP, s = 0; i <= TRAIN_BUBBLE; i++)
		s += r.part[i];
	ok(s == 0, "1 GPU: no communication and no bubble");
	is_num(r.step, r.part[TRAIN_COMPUTE] + r.part[TRAIN_OPTIMIZER], 1e-12,
	       "1 GPU: step = compute + optimizer");
	/* 4 micro-batches of one sequence: tokens = 4 x 2048. */
	is_num(r.tokens_per_step, 8192, 0, "tokens per step = gb x seq");
	is_num(r.microbatches, 4, 0, "gb 4 / (dp 1 x mb 1) = 4 micro-batches");

	/* --- model FLOPs per token = 6N + the attention term --------------- */
	/* Forward per token: 2 x (12 l h^2 + V h) matmul FLOP (logits with
	 * the tied matrix) + 4 l s h attention (QK^T and PV over the whole
	 * sequence, Megatron's convention); model FLOPs are 3x the forward:
	 * 6 (12 l h^2 + V h) + 12 l s h.  l = 24, h = 2048, V = 51200,
	 * s = 2048. */
	l = 24, h = 2048, V = 51200, s = 2048;
	want = 6 * (12 * l * h * h + V * h) + 12 * l * s * h;
	is_num(r.model_flops / r.tokens_per_step, want, 1e-12,
	       "model FLOPs per token = 6N + 12 l s h");
	/* causal_flops halves the attention term: 6N + 6 l s h. */
	c.causal_flops = 1;
	MUST(train_step(&m, &d, &t, &c, &r2, &e));
	is_num(r2.model_flops / r2.tokens_per_step,
	       6 * (12 * l * h * h + V * h) + 6 * l * s * h, 1e-12,
	       "causal: 6N + 6 l s h");
	c.causal_flops = 0;
	/* embed_flops counts the untied input embedding too (nanoGPT's 6N
	 * over every parameter): + 6 V h a token.  The fixture's tied matrix
	 * is the logits' already, so it adds nothing there. */
	c.embed_flops = 1;
	MUST(train_step(&m, &d, &t, &c, &r2, &e));
	is_num(r2.model_flops / r2.tokens_per_step, want, 1e-12,
	       "embed_flops, tied: the matrix counted once (as the logits)");
	m.tied_embeddings = 0;
	MUST(train_step(&m, &d, &t, &c, &r2, &e));
	is_num(r2.model_flops / r2.tokens_per_step, want + 6.0 * V * h, 1e-12,
	       "embed_flops, untied: 6N + 12 l s h with the embedding's V h in N");
	/* HFU's count reads the same convention (no recompute here). */
	is_num(r2.hw_flops, r2.model_flops, 1e-12,
	       "embed_flops: hardware FLOPs = model FLOPs without recompute");
	c.embed_flops = 0;
	m.tied_embeddings = 1;

	/* --- MoE: the router's h x E gate in or out of the count ---------- */
	/* The same GPT with every layer MoE, E = 8 experts of 4h, top 2: a
	 * token's forward matmuls 2 (l (4h^2 + h E + 2 x 8h^2) + V h), so
	 * model FLOPs 6 (l (4 h^2 + 8 h + 16 h^2) + V h) + 12 l s h;
	 * no_router_flops takes the 6 l h E out, Megatron-LM's
	 * num_floating_point_operations ("(moe_ffn_hidden_size *
	 * num_experts_routed_to + shared_expert_ffn_hidden_size) *
	 * gated_linear_multiplier", no router term). */
	m.moe.experts = 8;
	m.moe.top_k = 2;
	m.moe.ffn_hidden = 4 * h;
	c = cfg(1, 1, 1, 1, 4);
	MUST(train_step(&m, &d, &t, &c, &r2, &e));
	want = 6 * (l * (4 * h * h + 8 * h + 2 * 8 * h * h) + V * h) +
		12 * l * s * h;
	is_num(r2.model_flops / r2.tokens_per_step, want, 1e-12,
	       "MoE: 6 (l (4h^2 + h E + top_k 8h^2) + V h) + 12 l s h");
	c.no_router_flops = 1;
	MUST(train_step(&m, &d, &t, &c, &r2, &e));
	is_num(r2.model_flops / r2.tokens_per_step, want - 6 * l * h * 8.0,
	       1e-12, "no_router_flops: less 6 l h E");
	memset(&m.moe, 0, sizeof m.moe);
	MUST(train_step(&m, &d, &t, &c, &r2, &e));
	is_num(r2.model_flops / r2.tokens_per_step,
	       6 * (12 * l * h * h + V * h) + 12 * l * s * h, 1e-12,
	       "no_router_flops: a dense model's count unchanged");
	c = cfg(1, 1, 1, 1, 4);

	/* --- Narayanan et al. 2021 eq. 3 ---------------------------------- */
	/* With full recompute the hardware FLOPs per step are
	 * 96 B s l h^2 (1 + s / 6h + V / 16 l h) (the layers 4x forward,
	 * the logits 3x).  A 4-layer GPT, B = 4 sequences of 2048. */
	m = fx_gpt(4, 4096, 32, 51200);
	c = cfg(1, 1, 1, 1, 4);
	c.mem.recompute = GP_RECOMPUTE_FULL;
	MUST(train_step(&m, &d, &t, &c, &r, &e));
	l = 4, h = 4096;
	want = 96 * 4 * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
	is_num(r.hw_flops, want, 1e-12, "hw FLOPs = Narayanan eq. 3");
	/* HFU / MFU = (3 fwd + layer fwd) / 3 fwd. */
	ok(r.hfu > r.mfu, "recompute: HFU above MFU");

	/* --- the pipeline bubble ------------------------------------------- */
	/* 8 stages of 4 layers, 32 micro-batches, tiny vocabulary so the
	 * embedding and logits barely unbalance the ends: the bubble is
	 * (p - 1) stage times, i.e. (p - 1) / m of the ideal 1F1B step
	 * (Narayanan et al. 2021 sec. 2.2.1).  0.5%: the ends' extra ops. */
	m = fx_gpt(32, 4096, 32, 64);
	c = cfg(1, 8, 1, 1, 32);
	MUST(train_step(&m, &d, &t, &c, &r, &e));
	is_num(r.part[TRAIN_BUBBLE], 7 * r.stage_time, 0.005,
	       "1F1B bubble = (p - 1) stage times");
	is_num(r.part[TRAIN_BUBBLE] / (32 * r.stage_time), 7.0 / 32, 0.005,
	       "1F1B bubble fraction (p - 1) / m");
	/* Interleaved, v = 2: (p - 1) / (v m). */
	c.mem.lay.vpp = 2;
	c.mem.lay.schedule = GP_SCHED_INTERLEAVED;
	MUST(train_step(&m, &d, &t, &c, &r2, &e));
	is_num(r2.part[TRAIN_BUBBLE] / (32 * r2.stage_time), 7.0 / (2 * 32),
	       0.005, "interleaved bubble (p - 1) / (v m)");
	ok(r2.part[TRAIN_PP] > r.part[TRAIN_PP],
	   "interleaving sends v times per micro-batch");

	/* --- a DP group across 8 nodes costs what its NIC share gives ----- */
	/* TP 8 x DP 8 on 8 nodes, ZeRO 0, no overlap: the DP group has one
	 * rank per node and 8 groups share each node's 8 NICs: one 25 GB/s
	 * NIC at 0.9 = 22.5 GB/s each.  It all-reduces the fp32 main grads of
	 * its TP shard, S = 4 B x params / 8 (layers, and the embedding /
	 * tied output on the single stage), as a ring over 8 nodes: (8.4 us
	 * + 14 network steps of (2.7 + 11.3) us) x 1.4 (NCCL's multi-node
	 * Simple ring factor) + 2 x 7/8 x S / 22.5 GB/s (comm.c constants;
	 * the same collective as tests/c/t_layout.c). */
	m = fx_gpt(8, 4096, 32, 51200);
	c = cfg(8, 1, 8, 1, 8);
	MUST(train_step(&m, &d, &t, &c, &r, &e));
	S = 4.0 * (8 * 12.0 * 4096 * 4096 + 8 * 4.0 * 4096 + 2 * 4096 +
		   51200.0 * 4096) / 8;
	want = (8.4 + 14 * 14.0) * 1.4 * US + 1.75 * S / 22.5e9;
	is_num(r.part[TRAIN_DP], want, 1e-6, "DP all-reduce on one NIC");
	is_int(r.groups[GP_GRP_DP].per_node, 1, "DP: one rank per node");
	is_int(r.groups[GP_GRP_DP].sharing, 8, "DP: 8 groups share the NICs");
	/* Overlapped with the last backward, only the last bucket (40M of
	 * the shard's ~60M parameters) and the slowdown remain. */
	c.overlap_grad_reduce = 1;
	MUST(train_step(&m, &d, &t, &c, &r2, &e));
	ok(r2.part[TRAIN_DP] < r.part[TRAIN_DP] && r2.hidden[TRAIN_DP] > 0,
	   "overlap hides part of the reduction");
	/* TP comm: two all-reduces of T x h x 2 B per layer per pass. */
	ok(r.part[TRAIN_TP] > 0 && r.groups[GP_GRP_TP].per_node == 8,
	   "TP 8 stays in the node");

	/* --- warnings and errors ------------------------------------------ */
	m = fx_gpt(8, 4096, 32, 51200);
	c = cfg(1, 1, 1, 1, 2);
	c.mem.lay.zero = 1;
	MUST(train_step(&m, &d, &t, &c, &r, &e));
	ok(r.warn & TRAIN_WARN_ZERO_DP1, "ZeRO-1 at DP 1 shards nothing: warned");
	c = cfg(8, 1, 8, 1, 8);
	t.gpus_per_node = 4;
	t.nodes = 16;
	MUST(train_step(&m, &d, &t, &c, &r, &e));
	ok(r.warn & TRAIN_WARN_TP_NODES, "TP 8 over 4-GPU nodes: warned");
	t = fx_selene();
	c = cfg(1, 1, 1, 1, 4);
	c.compute = GP_FP8;
	rc = train_step(&m, &d, &t, &c, &r, &e);
	ok(rc == GP_EINVAL && strstr(e.msg, "fp8 training needs fp8 tensor "
				     "cores"), "fp8 without fp8 tensor cores");
	c = cfg(1, 1, 4, 1, 6);
	rc = train_step(&m, &d, &t, &c, &r, &e);
	ok(rc == GP_EINVAL && strstr(e.msg, "not a multiple"),
	   "global batch not a multiple of dp x micro-batch");
	c = cfg(3, 1, 1, 1, 4);
	ok(train_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "tp 3 does not divide"), "tp must divide the heads");
	c = cfg(1, 1, 16, 1, 16);
	t.nics = 0;
	ok(train_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "no NICs"), "two nodes without NICs");
	t = fx_selene();
	c = cfg(1, 1, 1, 1, 4);
	c.mem.seq = NAN;
	ok(train_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL,
	   "NaN sequence length refused");
	/* moe_router_ops: 0 (the MOE_ROUTER_OPS the dispatchers count) or a
	 * whole count from there to 1000; below it the extra launches
	 * would be negative (train_layer.c router_extra_ops). */
	c = cfg(1, 1, 1, 1, 4);
	c.router_ops = 5;
	ok(train_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "moe_router_ops") != NULL,
	   "moe_router_ops under the 11 counted refused");
	c.router_ops = 31.5;
	ok(train_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "moe_router_ops") != NULL,
	   "a fractional moe_router_ops refused");
	c.router_ops = NAN;
	ok(train_step(&m, &d, &t, &c, &r, &e) == GP_EINVAL &&
	   strstr(e.msg, "moe_router_ops") != NULL,
	   "a NaN moe_router_ops refused");

	/* --- memory rides along ------------------------------------------- */
	m = fx_gpt(24, 2048, 16, 51200);
	c = cfg(1, 1, 1, 1, 4);
	MUST(train_step(&m, &d, &t, &c, &r, &e));
	{
		gp_mem_result mr;
		gp_train_cfg mc = c.mem;

		mc.lay.microbatches = 4;
		MUST(mem_train(&m, &mc, c.capacity, &c.reserve, &mr, &e));
		is_num(r.mem.total, mr.total, 1e-12,
		       "memory = mem_train of the same layout");
		ok(r.fits == mr.fits, "fits follows the memory model");
	}
	/* MFU against the dense bf16 peak. */
	is_num(r.mfu, r.model_flops / r.step / 312e12, 1e-12,
	       "MFU = model FLOP/s / dense peak");
	tok = r.tokens_per_step / r.step;
	is_num(r.tokens_per_s, tok, 1e-12, "tokens/s = tokens per step / step");

	/* --- the forward pass alone (RL's log-probabilities) --------------- */
	/* Megatron's forward_only: no backward, recompute, reduction or
	 * optimizer; model FLOPs 1x the forward, 2N + 4 l s h per token.
	 * A tiny vocabulary keeps the two stages nearly equal. */
	m = fx_gpt(24, 2048, 16, 64);
	c = cfg(1, 2, 4, 1, 32);
	c.mem.recompute = GP_RECOMPUTE_FULL;
	MUST(train_step(&m, &d, &t, &c, &r, &e));
	c.forward_only = 1;
	rc = train_step(&m, &d, &t, &c, &r2, &e);
	ok(rc == GP_OK && r2.part[TRAIN_RECOMPUTE] == 0 &&
	   r2.part[TRAIN_DP] == 0 && r2.part[TRAIN_OPTIMIZER] == 0 &&
	   r2.part[TRAIN_ZERO] == 0, "forward only: no recompute, DP "
	   "reduction or optimizer step");
	l = 24, h = 2048, s = 2048;
	is_num(r2.model_flops / r2.tokens_per_step,
	       2 * (12 * l * h * h + 64 * h) + 4 * l * s * h, 1e-12,
	       "forward only: 2N + 4 l s h per token");
	/* The backward's GEMMs are two of the forward's each, attention
	 * 2.5x: a forward is under a third of fwd + bwd. */
	ok(r2.part[TRAIN_COMPUTE] < r.part[TRAIN_COMPUTE] / 2.9,
	   "forward compute under a third of the training step's");
	/* The pipeline's fill and drain stay: (p - 1) forward stage times
	 * beside m of them (2%: the ends' embedding and logits). */
	is_num(r2.part[TRAIN_BUBBLE], r2.stage_time, 0.02,
	       "forward only: bubble = (p - 1) stage times");

	/* --- the vision tower ------------------------------------------------ */
	/* A ViT-L/14 at 336 px (CLIP, LLaVA-1.5: 24 layers of 1024, 16
	 * heads, GELU 4096, no merge) makes (336 / 14)^2 = 576 tokens per
	 * image, each one patch. */
	m = fx_gpt(24, 2048, 16, 51200);
	m.vision.layers = 24;
	m.vision.hidden = 1024;
	m.vision.heads = 16;
	m.vision.ffn_hidden = 4096;
	m.vision.image_size = 336;
	m.vision.patch_size = 14;
	m.vision.merge = 1;
	m.vision.projector_params = 1024.0 * 2048 + 2048 + 2048.0 * 2048 +
		2048;
	is_num(model_vision_tokens(&m), 576, 0, "ViT-L/14 at 336 px: 576 tokens");
	c = cfg(1, 1, 1, 1, 4);
	c.mem.images = 2;
	c.mem.vision_frozen = 1;
	rc = train_step(&m, &d, &t, &c, &r, &e);
	ok(rc == GP_OK, "2 images per sequence, frozen tower");
	is_num(r.vision_patches, 2 * 576, 0, "1152 patches per micro-batch");
	/* Model FLOPs: the text model's per token, plus per image the
	 * tower's forward once (frozen) and the projector's twice (forward
	 * and weight gradient): tower = 24 x 576 x (2 (4 h^2 + 2 h f) +
	 * 4 x 576 h) + 2 x 3 x 14^2 x h x 576, projector 2 x params x 576. */
	{
		double hv = 1024, fv = 4096, P = 576, pj, tw, fpt;

		tw = 24 * P * (2 * (4 * hv * hv + 2 * hv * fv) + 4 * P * hv) +
			2 * 3 * 14.0 * 14 * hv * P;
		pj = 2 * m.vision.projector_params * P;
		fpt = model_fwd_flops_per_token(&m, 2048);
		is_num(r.model_flops, r.tokens_per_step * 3 * fpt +
		       4 * 2 * (tw + 2 * pj), 1e-12,
		       "frozen tower: forward once, projector twice");
		c.mem.vision_frozen = 0;
		MUST(train_step(&m, &d, &t, &c, &r2, &e));
		is_num(r2.model_flops, r2.tokens_per_step * 3 * fpt +
		       4 * 2 * 3 * (tw + pj), 1e-12,
		       "trained tower: 3x tower and projector");
	}
	/* A trained tower runs backward too: at least twice the frozen
	 * one's time (both GEMMs backward, attention 2.5x). */
	ok(r2.vision_time > 2.5 * r.vision_time && r.vision_time > 0,
	   "trained tower takes over 2.5x the frozen one");
	ok(r2.step > r.step, "and makes the step longer");

	/* --- eager PyTorch modules (Hugging Face's Llama layer) ------------ */
	/* A gated, RMSNorm model with GQA: h 1024, 8 heads of 128, 2 KV
	 * heads, SwiGLU of 2816; one sequence of T = 2048 on one GPU, no
	 * host floor.  Every eager kernel is memory-bound on the fixture:
	 * bytes / (2.039e12 x 0.85 = 1.73315e12 B/s) + 3.9 us of pipeline
	 * fill (roofline.c) + 1 us graph launch = bytes / B + K. */
	{
		const double B = 2.039e12 * 0.85, K = 4.9 * US;
		double T = 2048, E = 2048.0 * 1024, Ef = 2048.0 * 2816;
		double eq = 2048.0 * 8 * 128, ek = 2048.0 * 2 * 128;
		double lv = 2048.0 * 32000, sum_e = 0, sum_f = 0, fe = 0;
		train_result rf, re;
		gp_state_bytes sb;
		int j;

		gqa_fixture(&m, &c);
		MUST(train_step(&m, &d, &t, &c, &rf, &e));
		c.eager = 1;
		c.eager_optim = 1;
		rc = train_step(&m, &d, &t, &c, &re, &e);
		ok(rc == GP_OK, "eager step");
		/* LlamaRMSNorm forward: to(fp32) 2+4, pow 4+4, mean 4,
		 * * rsqrt 4+4, to(bf16) 4+2, weight * 2+2 = 36 B per element
		 * in 6 kernels, + eps and rsqrt over the 2048 rows' fp32 (4+4
		 * B each): (36 E + 16 T) / B + 8 K.  Backward (train.c's
		 * rms_bwd): 84 B per element in 12 kernels and one row
		 * kernel: (84 E + 8 T) / B + 13 K. */
		for (j = 0; j < re.nops; j++)
			if (strcmp(re.ops[j].name, "attn_norm") == 0)
				break;
		is_num(re.ops[j].fwd, (36 * E + 16 * T) / B + 8 * K, 1e-9,
		       "eager RMSNorm forward: 36 B/element, 8 kernels");
		is_num(re.ops[j].bwd, (84 * E + 8 * T) / B + 13 * K, 1e-9,
		       "eager RMSNorm backward: 84 B/element, 13 kernels");
		/* Rotary on q (8 heads) and k (2): q * cos 4, -x2 2 (half),
		 * cat 4, * sin 4, + 6 = 20 B per element in 5 kernels each;
		 * backward 30 B in 9 each. */
		for (j = 0; j < re.nops; j++)
			if (strcmp(re.ops[j].name, "rope_kv") == 0)
				break;
		is_num(re.ops[j].fwd, 20 * (eq + ek) / B + 10 * K, 1e-9,
		       "eager rotary: 20 B per q/k element, 5 kernels each");
		is_num(re.ops[j].bwd, 30 * (eq + ek) / B + 18 * K, 1e-9,
		       "eager rotary backward: 30 B, 9 kernels each");
		/* silu(gate) 2+2 and * up 2+2+2 per ffn element; backward
		 * three products of 6 B. */
		for (j = 0; j < re.nops; j++)
			if (strcmp(re.ops[j].name, "mlp_act") == 0)
				break;
		is_num(re.ops[j].fwd, 10 * Ef / B + 2 * K, 1e-9,
		       "eager SwiGLU: silu and mul, 10 B per ffn element");
		is_num(re.ops[j].bwd, 18 * Ef / B + 3 * K, 1e-9,
		       "eager SwiGLU backward: 18 B, 3 kernels");
		/* The SDPA output's transpose copy (2 + 2 B per q element,
		 * T x 8 x 128 = E), its gradient's back, and three input-
		 * gradient sums (q/k/v two, gate/up one) of 6 B per T x h. */
		for (j = 0; j < re.nops; j++)
			if (strcmp(re.ops[j].name, "eager_copies") == 0)
				break;
		is_num(re.ops[j].bwd, 4 * E / B + K + 3 * (6 * E / B + K),
		       1e-9, "eager copies: the transpose and the dgrad sums");
		/* The ends, isolated: compute less the 4 layers' ops.  The
		 * loss's eager passes (logits.float() 6, log_softmax 8;
		 * backward nll 4, log_softmax 12, the cast back 6 B per
		 * logit) against the fused 10 and 6: 20 lv / B + 3 K more;
		 * the final RMSNorm eager against fused 4 and 6 B:
		 * (32 E + 16 T) / B + 7 K and (78 E + 8 T) / B + 12 K. */
		for (j = 0; j < re.nops; j++)
			sum_e += re.ops[j].fwd + re.ops[j].bwd;
		for (j = 0; j < rf.nops; j++)
			sum_f += rf.ops[j].fwd + rf.ops[j].bwd;
		is_num(re.part[TRAIN_COMPUTE] - rf.part[TRAIN_COMPUTE] -
		       4 * (sum_e - sum_f), 20 * lv / B + 3 * K +
		       (32 * E + 16 * T) / B + 7 * K + (78 * E + 8 * T) / B +
		       12 * K, 1e-6, "eager loss and final norm");
		/* torch.optim's foreach AdamW + clip_grad_norm_ on mixed-16
		 * (fp32 master p, grads of its dtype, m and v 4 B each):
		 * 4 p + 3 m + 11 v + 6 g = 96 B per parameter against the
		 * fused 2 (4 + 8) + 3 x 2 + 2 = 32: 3x the bytes, one kernel
		 * each way. */
		MUST(mem_state_bytes(&FX_MIXED16, &FX_ADAMW, &sb, &e));
		is_num(2 * (sb.master + sb.optimizer) + 3 * sb.grads +
		       sb.weights, 32, 0, "fused AdamW: 32 B per parameter");
		is_num((re.part[TRAIN_OPTIMIZER] - K) /
		       (rf.part[TRAIN_OPTIMIZER] - K), 3, 1e-9,
		       "foreach AdamW: 96 / 32 of the fused step");
		/* The host floor: each forward kernel launched from Python
		 * costs host_op_time; at 1 ms the layer's forward is its
		 * kernel count in ms: 39 eager (RMSNorm 8 x 2, q/k/v 3,
		 * rotary 10, attention and its copy 2, o_proj 1, gate and
		 * up 2, SwiGLU 2, down 1, residual adds 2), 11 fused (the op
		 * list's 9 and the two adds).  The backward has none. */
		c.host_op_time = 1e-3;
		MUST(train_step(&m, &d, &t, &c, &re, &e));
		for (j = 0, fe = 0; j < re.nops; j++)
			fe += re.ops[j].fwd;
		is_num(fe, 39e-3, 1e-12, "eager: forward >= 39 host launches");
		c.eager = 0;
		MUST(train_step(&m, &d, &t, &c, &rf, &e));
		for (j = 0, fe = 0; j < rf.nops; j++)
			fe += rf.ops[j].fwd;
		is_num(fe, 11e-3, 1e-12, "fused: forward >= 11 host launches");
	}

	/* --- Liger-Kernel in the eager modules (kernels liger) ------------ */
	/* The eager fixture above (h 1024, 8 heads and 2 KV heads of 128,
	 * SwiGLU of 2816, T = 2048, 16-bit, no host floor; a kernel costs
	 * bytes / B + K), with Liger's Triton RMSNorm, RoPE and SwiGLU
	 * (train_layer.c liger_elem, from Liger-Kernel's ops/ sources): one
	 * kernel each way, the rest of the layer eager.  Tolerances: the
	 * sums are exact but for double rounding (1e-9 s on ~1e-4 s). */
	{
		const double B = 2.039e12 * 0.85, K = 4.9 * US;
		double T = 2048, E = 2048.0 * 1024, Ef = 2048.0 * 2816;
		double eqk = 2048.0 * 10 * 128, sum_g = 0, sum_e = 0, fe = 0;
		train_result rg, re;
		int j;

		gqa_fixture(&m, &c);
		c.eager = 1;
		c.eager_optim = 1;
		MUST(train_step(&m, &d, &t, &c, &re, &e));
		c.liger = 1;
		rc = train_step(&m, &d, &t, &c, &rg, &e);
		ok(rc == GP_OK, "liger step");
		/* _rms_norm_forward_kernel: read X, write Y (2 + 2 B an
		 * element) and the row's fp32 rstd (4 B): (4 E + 4 T) / B +
		 * K; backward read dY and X, write dX (6 B) and read rstd:
		 * (6 E + 4 T) / B + K. */
		for (j = 0; j < rg.nops; j++)
			if (strcmp(rg.ops[j].name, "attn_norm") == 0)
				break;
		is_num(rg.ops[j].fwd, (4 * E + 4 * T) / B + K, 1e-9,
		       "liger RMSNorm forward: 4 B/element + rstd, 1 kernel");
		is_num(rg.ops[j].bwd, (6 * E + 4 * T) / B + K, 1e-9,
		       "liger RMSNorm backward: 6 B/element + rstd, 1 kernel");
		/* _triton_rope: q and k rotated in place in one launch, read
		 * and write 2 + 2 B a q/k element (T x 10 x 128 = eqk), cos
		 * and sin of each token's row, 2 x 128 x 2 B: (4 eqk + 512
		 * T) / B + K, the backward the same. */
		for (j = 0; j < rg.nops; j++)
			if (strcmp(rg.ops[j].name, "rope_kv") == 0)
				break;
		is_num(rg.ops[j].fwd, (4 * eqk + 512 * T) / B + K, 1e-9,
		       "liger rope: in place on q and k, one kernel");
		is_num(rg.ops[j].bwd, (4 * eqk + 512 * T) / B + K, 1e-9,
		       "liger rope backward: the same kernel on dq and dk");
		/* _swiglu_forward_kernel reads a and b, writes c: 6 B an ffn
		 * element; the backward reads dc, a, b and writes da, db over
		 * a and b: 10 B. */
		for (j = 0; j < rg.nops; j++)
			if (strcmp(rg.ops[j].name, "mlp_act") == 0)
				break;
		is_num(rg.ops[j].fwd, 6 * Ef / B + K, 1e-9,
		       "liger SwiGLU: 6 B per ffn element, 1 kernel");
		is_num(rg.ops[j].bwd, 10 * Ef / B + K, 1e-9,
		       "liger SwiGLU backward: 10 B, 1 kernel");
		/* The rest stays eager: the SDPA output's copy and the dgrad
		 * sums as the eager step's (above). */
		for (j = 0; j < rg.nops; j++)
			if (strcmp(rg.ops[j].name, "eager_copies") == 0)
				break;
		is_num(rg.ops[j].bwd, 4 * E / B + K + 3 * (6 * E / B + K),
		       1e-9, "liger: the eager copies and dgrad sums stay");
		/* The ends, isolated: the loss stays eager (no
		 * fused_linear_ce), the final norm is Liger's, priced as the
		 * fused 4 and 6 B: the eager norm's (32 E + 16 T) / B + 7 K
		 * and (78 E + 8 T) / B + 12 K less. */
		for (j = 0; j < rg.nops; j++)
			sum_g += rg.ops[j].fwd + rg.ops[j].bwd;
		for (j = 0; j < re.nops; j++)
			sum_e += re.ops[j].fwd + re.ops[j].bwd;
		is_num(re.part[TRAIN_COMPUTE] - rg.part[TRAIN_COMPUTE] -
		       4 * (sum_e - sum_g), (32 * E + 16 * T) / B + 7 * K +
		       (78 * E + 8 * T) / B + 12 * K, 1e-6,
		       "liger: the final norm Liger's, the loss eager");
		/* Host launches: the eager layer's 39 forward, less the two
		 * RMSNorms' 8 each, the rotary's 10 and SwiGLU's 2, plus one
		 * each for Liger's: 39 - 28 + 4 = 15. */
		c.host_op_time = 1e-3;
		MUST(train_step(&m, &d, &t, &c, &rg, &e));
		for (j = 0; j < rg.nops; j++)
			fe += rg.ops[j].fwd;
		is_num(fe, 15e-3, 1e-12, "liger: forward >= 15 host launches");
	}

	/* --- positions: a learned table in place of rope ------------------ */
	/* The fixture above, fused (h 1024, 8 heads of 128 and 2 KV heads,
	 * T = 2048, 16-bit activations; every memory-bound kernel costs
	 * bytes / B + K as above).  Rope reads and writes q and k, 2 x 2 B
	 * per element of T x (8 + 2) x 128 = eqk forward, 1.5 x that back
	 * (train_layer.c's fused elementwise rule).  A learned table has
	 * no per-layer op (no rope, and training writes no cache): the 4
	 * layers lose 4 x (10 eqk / B + 2 K); the input gains the table's
	 * gather (read and write T x h = E) and the add (read two, write
	 * one), 5 x 2 B x E, and backward its scatter-add into the fp32
	 * main grad, (2 + 8) B x E: 20 E / B + 2 K. */
	{
		const double B = 2.039e12 * 0.85, K = 4.9 * US;
		double E = 2048.0 * 1024, eqk = 2048.0 * 10 * 128;
		double rf_ = 0, rb_ = 0;
		train_result rr, rl;
		int j, left = 0;

		gqa_fixture(&m, &c);
		MUST(train_step(&m, &d, &t, &c, &rr, &e));
		for (j = 0; j < rr.nops; j++)
			if (strcmp(rr.ops[j].name, "rope_kv") == 0) {
				rf_ = rr.ops[j].fwd;
				rb_ = rr.ops[j].bwd;
			}
		is_num(rf_, 4 * eqk / B + K, 1e-9,
		       "fused rope: q and k read and written");
		is_num(rb_, 6 * eqk / B + K, 1e-9,
		       "fused rope backward: 1.5x its bytes");
		m.positions = GP_POS_LEARNED;
		MUST(train_step(&m, &d, &t, &c, &rl, &e));
		for (j = 0; j < rl.nops; j++)
			left += strcmp(rl.ops[j].name, "rope_kv") == 0 ||
				strcmp(rl.ops[j].name, "kv_write") == 0;
		ok(left == 0, "learned positions: no rope_kv, no kv_write");
		is_num(rr.part[TRAIN_COMPUTE] - rl.part[TRAIN_COMPUTE],
		       4 * (10 * eqk / B + 2 * K) - (20 * E / B + 2 * K),
		       1e-6, "learned: 4 layers' rope out, the table's add in");
	}

	/* --- ZeRO-3 / FSDP: the ends of a micro-batch are exposed ---------- */
	/* 4 layers of h 4096 (12 h^2 + 4 h parameters each, and a quarter
	 * of the final LayerNorm's 2 h, as train.c spreads it) over 8 GPUs of
	 * one node, both overlaps on: each layer's gather f (16-bit, the
	 * whole layer after it) hides under a layer's forward but the
	 * first, whose gather precedes the forward; in backward each
	 * layer's gather and reduce-scatter (fp32 here: 4 B per gradient)
	 * hide but the first layer's reduce-scatter, which follows the
	 * last backward.  What hides costs the overlap slowdown 0.189
	 * (train.c).  The embedding (51200 x 4096, tied: the output layer
	 * too) is sharded with them: FSDP's root gathers it once a
	 * micro-batch before the first layer, fe, and reduce-scatters its
	 * gradient after the last backward, rse -- both exposed
	 * (train_stage.c ends_block).  Per micro-batch: zero = f (1 + 0.189
	 * x 3) + fe, dp = 0.189 (4 f + 3 rs) + rs + rse. */
	{
		gp_comm_result cr;
		double P = 12.0 * 4096 * 4096 + 4.5 * 4096, f, rsc, fe, rse;
		double E = 51200.0 * 4096;

		m = fx_gpt(4, 4096, 32, 51200);
		c = cfg(1, 1, 8, 1, 16);
		c.mem.lay.zero = 3;
		c.fsdp = 1;
		c.overlap_param_gather = 1;
		c.overlap_grad_reduce = 1;
		c.mem.reduce_bytes = 4;
		rc = train_step(&m, &d, &t, &c, &r, &e);
		MUST(comm_group_cost(&t, GP_ALL_GATHER, P * 2,
				     &r.groups[GP_GRP_DPCP],
				     &cr, &e));
		f = cr.time;
		MUST(comm_group_cost(&t, GP_REDUCE_SCATTER, P * 4,
				     &r.groups[GP_GRP_DPCP], &cr, &e));
		rsc = cr.time;
		MUST(comm_group_cost(&t, GP_ALL_GATHER, E * 2,
				     &r.groups[GP_GRP_DPCP], &cr, &e));
		fe = cr.time;
		MUST(comm_group_cost(&t, GP_REDUCE_SCATTER, E * 4,
				     &r.groups[GP_GRP_DPCP], &cr, &e));
		rse = cr.time;
		ok(rc == GP_OK && r.microbatches == 2, "FSDP 8: 2 micro-batches");
		is_num(r.part[TRAIN_ZERO], 2 * (f * (1 + 0.189 * 3) + fe), 1e-9,
		       "FSDP: the first layer's and the embedding's gathers "
		       "are exposed");
		is_num(r.part[TRAIN_DP],
		       2 * (0.189 * (4 * f + 3 * rsc) + rsc + rse), 1e-9,
		       "FSDP: the last reduce-scatters (fp32) are exposed");
	}
	return done();
}
