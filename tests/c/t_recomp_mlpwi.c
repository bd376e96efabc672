/* t_recomp_mlpwi.c - recompute_modules "mlpwi" (MaxText's
 * save_dot_except_mlpwi and save_dot_except_mlp remat policies): a dense
 * MLP keeps its input only, its gate and up outputs and the down
 * projection's input are rebuilt in the backward; parser and saved bytes,
 * hand-derived. */
#include "fixture.h"

/* Sums of a handful of integer terms in doubles: only the last bit. */
#define EXACT 1e-12

/* Llama 2 70B's layer (MaxText configs/models/llama2-70b.yml): h 8192,
 * 64 heads of 128, 8 KV heads, a gated MLP of 28672. */
static gp_model llama2_70b(void)
{
	return fx_llama(80, 8192, 64, 8, 28672, 32000);
}

int main(void)
{
	gp_error err;
	gp_model m = llama2_70b();
	gp_act_cfg c;
	gp_act_layer none, wi, wi_ln, ln;
	unsigned mask = 0;
	const double tok = 4096.0;
	/* The MLP's own saved bytes a token with no module (bf16, A = 2;
	 * memory_act.c mlp_saved): a fused SwiGLU keeps gate and up (2f)
	 * and the down projection its input (1f): 3 x 28672 x 2 = 172032 B.
	 * Its input, the pre-MLP norm's output: h x 2 = 16384 B. */
	const double own = 172032.0, input = 16384.0;

	plan(10);

	/* --- the parser --- */
	MUST(mem_recompute_modules_parse("layernorm,core_attn,mlpwi", &mask,
					 &err));
	is_int(mask, GP_RECMOD_LAYERNORM | GP_RECMOD_CORE_ATTN |
	       GP_RECMOD_MLPWI | GP_RECMOD_LISTED,
	       "\"layernorm,core_attn,mlpwi\" parses to its three bits and "
	       "the listed bit");
	ok(mem_recompute_modules_parse("mlpwo", &mask, &err) != GP_OK &&
	   strstr(err.msg, "unknown recompute module 'mlpwo'") &&
	   strstr(err.msg, "moe, mlpwi, mlp_act)"),
	   "an unknown module is refused, the message listing mlpwi");
	/* mlpwi is not core_attn: a list naming mlpwi alone keeps the
	 * attention's tensors (a stated list replaces the default). */
	ok(!mem_core_attn_recomputed(GP_RECOMPUTE_SELECTIVE,
				     GP_RECMOD_MLPWI | GP_RECMOD_LISTED),
	   "[mlpwi] does not recompute the core attention");

	/* --- memory: what the dense layer keeps --- */
	c = fx_act_listed(0);
	MUST(mem_act_layer(&m, &c, 0, &none, &err));
	is_num(none.mlp, tok * (input + own), EXACT,
	       "no module: the MLP keeps 16384 + 172032 B a token");
	c = fx_act_listed(GP_RECMOD_MLPWI);
	MUST(mem_act_layer(&m, &c, 0, &wi, &err));
	is_num(wi.mlp, tok * input, EXACT,
	       "mlpwi: the MLP keeps its input, h x 2 B a token");
	is_num(wi.rebuilt, tok * own, EXACT,
	       "mlpwi: gate, up and the down input rebuilt, 172032 B a token");
	is_num(none.total - wi.total, tok * own, EXACT,
	       "mlpwi: the layer's total falls by what the MLP drops");
	/* With layernorm the MLP's input is the norm's discarded output:
	 * nothing of the MLP stays; rebuilt: the MLP's tensors and both
	 * norms' outputs (the MLP's and the QKV input, h x 2 B each). */
	c = fx_act_listed(GP_RECMOD_MLPWI | GP_RECMOD_LAYERNORM);
	MUST(mem_act_layer(&m, &c, 0, &wi_ln, &err));
	is_num(wi_ln.mlp, 0.0, EXACT, "mlpwi, layernorm: the MLP keeps nothing");
	is_num(wi_ln.rebuilt, tok * (own + 2.0 * input), EXACT,
	       "mlpwi, layernorm: the MLP's tensors and both norms' outputs "
	       "rebuilt");
	/* layernorm and mlpwi drop disjoint tensors: their savings add. */
	c = fx_act_listed(GP_RECMOD_LAYERNORM);
	MUST(mem_act_layer(&m, &c, 0, &ln, &err));
	is_num(none.total - wi_ln.total, (none.total - ln.total) +
	       (none.total - wi.total), EXACT,
	       "layernorm and mlpwi: the two savings add");
	return done();
}
