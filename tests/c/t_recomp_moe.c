/* t_recomp_moe.c - recompute_modules "moe" (Megatron-Core's MoELayer under
 * tensor_parallel.checkpoint): the MoE block keeps its input only, the
 * rest is rebuilt in the backward; parser and FLOP count, hand-derived. */
#include "fixture.h"

/* Sums of a handful of integer terms in doubles: only the last bit. */
#define EXACT 1e-12

/* Mixtral-like MoE layer: h 4096, 32 heads of 128, 8 KV heads, 8 gated
 * experts of 14336, top 2, no shared expert. */
static gp_model mixtral(void)
{
	gp_model m = fx_llama(32, 4096, 32, 8, 14336, 32000);

	m.moe.experts = 8;
	m.moe.top_k = 2;
	m.moe.ffn_hidden = 14336;
	return m;
}

int main(void)
{
	gp_error err;
	gp_model m = mixtral();
	gp_act_cfg c;
	gp_act_layer none, moe, moe_ln, moe_act, dense0, dense1;
	unsigned mask = 0;
	const double tok = 4096.0;
	/* The MoE block's saved bytes a token with no module (bf16, A = 2;
	 * memory_act.c act_mlp): the router's input h x 2 = 8192, its fp32
	 * logits 4 x 8 = 32, and per routed copy (top_k 2, capacity 1) the
	 * dispatched input h x 2 = 8192, its output for the router weight
	 * at the combine h x 2 = 8192 (probs at the combine here), the
	 * SwiGLU's gate and up outputs and the down-projection's input
	 * 3 x 14336 x 2 = 86016: 8224 + 2 x 102400 = 213024 B. */
	const double block = 213024.0;
	/* Its input, the pre-MLP norm's output: h x 2 = 8192 B a token. */
	const double input = 8192.0;

	plan(12);

	/* --- the parser --- */
	MUST(mem_recompute_modules_parse("moe,layernorm", &mask, &err));
	is_int(mask, GP_RECMOD_MOE | GP_RECMOD_LAYERNORM | GP_RECMOD_LISTED,
	       "\"moe,layernorm\" parses to its two bits and the listed bit");
	ok(mem_recompute_modules_parse("moes", &mask, &err) != GP_OK &&
	   strstr(err.msg, "unknown recompute module 'moes'") &&
	   strstr(err.msg, "core_attn, moe, mlpwi, mlp_act)"),
	   "an unknown module is refused, the message listing moe");
	/* moe is not core_attn: a list naming moe alone keeps the core
	 * attention's tensors (Megatron-Core's replaced default). */
	ok(!mem_core_attn_recomputed(GP_RECOMPUTE_SELECTIVE,
				     GP_RECMOD_MOE | GP_RECMOD_LISTED),
	   "[moe] does not recompute the core attention");

	/* --- memory: what the MoE layer keeps --- */
	c = fx_act_listed(0);
	MUST(mem_act_layer(&m, &c, 1, &none, &err));
	is_num(none.mlp, tok * block, EXACT,
	       "no module: the MoE block keeps 213024 B a token");
	c = fx_act_listed(GP_RECMOD_MOE);
	MUST(mem_act_layer(&m, &c, 1, &moe, &err));
	is_num(moe.mlp, tok * input, EXACT,
	       "moe: the block keeps its input, h x 2 B a token");
	is_num(moe.rebuilt, tok * (block - input), EXACT,
	       "moe: the rest, 204832 B a token, rebuilt in the backward");
	is_num(none.total - moe.total, tok * (block - input), EXACT,
	       "moe: the layer's total falls by what the block drops");
	/* With layernorm the block's input is the norm's discarded output:
	 * nothing of the block stays; rebuilt: the whole block and the
	 * attention norm's output (the QKV input, h x 2 = 8192 B). */
	c = fx_act_listed(GP_RECMOD_MOE | GP_RECMOD_LAYERNORM);
	MUST(mem_act_layer(&m, &c, 1, &moe_ln, &err));
	is_num(moe_ln.mlp, 0.0, EXACT, "moe, layernorm: the block keeps nothing");
	is_num(moe_ln.rebuilt, tok * (block + 8192.0), EXACT,
	       "moe, layernorm: the block and the QKV input rebuilt");
	/* moe_act inside moe: the activation is part of the block, the same
	 * saved and rebuilt bytes as moe alone. */
	c = fx_act_listed(GP_RECMOD_MOE | GP_RECMOD_MOE_ACT);
	MUST(mem_act_layer(&m, &c, 1, &moe_act, &err));
	ok(moe_act.total == moe.total && moe_act.rebuilt == moe.rebuilt,
	   "moe, moe_act: as moe alone");
	/* A dense layer has no MoE block: moe changes nothing there. */
	c = fx_act_listed(0);
	MUST(mem_act_layer(&m, &c, 0, &dense0, &err));
	c = fx_act_listed(GP_RECMOD_MOE);
	MUST(mem_act_layer(&m, &c, 0, &dense1, &err));
	ok(dense0.total == dense1.total && dense1.rebuilt == 0.0,
	   "moe on a dense layer: nothing dropped");

	/* --- the re-run's weights (train.c: 2 FLOPs each a token) --- */
	/* router 4096 x 8 = 32768; 2 routed experts of 3 x 4096 x 14336 =
	 * 176160768 each: 352354304 in all. */
	is_num(model_moe_matmul_weights(&m), 352354304.0, EXACT,
	       "one MoE block's matmul weights a token: router and top_k experts");
	return done();
}
