/* t_serve.c - MoE serving across many GPUs: a GPU's weights by part, the
 * KV under DP vs TP attention, the all-to-all bytes, a one-node EP group
 * that never leaves NVLink, DeepEP's published low-latency table, MTP's
 * accept length, the deployment's own arithmetic and bad input. */
#include <math.h>
#include <string.h>

#include "serve.h"
#include "tap.h"

/* Hopper as in the catalog (H800/H100 SXM): bf16 989 / fp8 1979 TFLOPS
 * dense, achievable 0.80 / 0.71, hbm 3.35 TB/s x 0.84, 132 SMs. */
static void hopper(roof_device *d)
{
	memset(d, 0, sizeof *d);
	d->peak[GP_BF16] = d->peak[GP_FP16] = 989e12;
	d->peak[GP_FP8] = 1979e12;
	d->peak[GP_FP32] = 67e12;
	d->gemm_frac[GP_BF16] = d->gemm_frac[GP_FP16] = 0.80;
	d->gemm_frac[GP_FP8] = 0.71;
	d->mem_bw = 3.35e12;
	d->hbm_frac = 0.84;
	d->launch = 4e-6;
	d->graph_launch = 1e-6;
	d->sms = 132;
}

/* DeepSeek-V3 (catalog/models/moe.lua). */
static void dsv3(gp_model *m)
{
	memset(m, 0, sizeof *m);
	m->layers = 61;
	m->hidden = 7168;
	m->heads = m->kv_heads = 128;
	m->head_dim = 128;
	m->ffn_hidden = 18432;
	m->ffn_gated = 1;
	m->vocab = 129280;
	m->norm_params = 7168;
	m->moe.experts = 256;
	m->moe.top_k = 8;
	m->moe.shared_experts = 1;
	m->moe.ffn_hidden = 2048;
	m->moe.dense_layers = 3;
	m->mla.q_lora_rank = 1536;
	m->mla.kv_lora_rank = 512;
	m->mla.qk_nope_head_dim = 128;
	m->mla.qk_rope_head_dim = 64;
	m->mla.v_head_dim = 128;
}

/* An HGX H800 node: NVLink 200 GB/s per direction at 0.80, 8 NDR NICs
 * (50 GB/s at 0.94), 0.6 / 2.7 us per hop. */
static void h800_node(gp_topo *t)
{
	memset(t, 0, sizeof *t);
	t->gpus_per_node = 8;
	t->nodes = 1;
	t->up_kind = GP_LINK_NVLINK;
	t->up.bw = 200e9;
	t->up.latency = 0.6e-6;
	t->up.achievable = 0.80;
	t->nics = 8;
	t->nic.bw = 50e9;
	t->nic.latency = 2.7e-6;
	t->nic.achievable = 0.94;
}

static void cfg(serve_cfg *c, int ep, int dp)
{
	serve_defaults(c);
	h800_node(&c->topo);
	c->base.weight_bits = 8.0;     /* fp8 checkpoint */
	c->base.compute = GP_FP8;
	c->base.input = 4096;
	c->base.output = 1536;
	c->base.capacity = 71.2e9;     /* 79.1 GiB x 0.9 */
	c->decode.tp = c->decode.ep = ep;
	c->decode.dp_attention = dp;
	c->gpus = ep;
	c->redundant = 32;
}

/* Finite and not negative. */
static int good(double x)
{
	return isfinite(x) && x >= 0;
}

static int result_good(const serve_result *r)
{
	if (!r->fits)
		return r->why[0] != 0;
	return good(r->tpot) && good(r->itl) && good(r->ttft) &&
		good(r->tokens_per_s) && r->tokens_per_s > 0 &&
		good(r->tokens_per_s_gpu) && good(r->input_tokens_per_s) &&
		good(r->pool_ratio) && good(r->cost_per_mtok) &&
		good(r->decode.step.time) && good(r->decode.mem.weights) &&
		good(r->kv_transfer) && good(r->accept);
}

/* Every hostile value in every numeric field of the configuration: the
 * kernels return GP_OK with finite, non-negative results, or GP_EINVAL
 * with a message; never a crash, NaN or inf (run under SANITIZE=1 for
 * overflow and out-of-range conversions too).  Returns the failures. */
static int fuzz(const gp_model *m, const roof_device *d, const serve_cfg *c0)
{
	static const double dv[] = {0, -1, 1, 0.5, 2, 1e-300, 1e308, -1e308,
	                            16777217, 2147483647.0};
	serve_cfg c;
	serve_result r;
	serve_mem mem;
	serve_step st;
	gp_error err;
	double nan = NAN, inf = INFINITY;
	int i, j, k, bad = 0, rc;

	for (i = 0; i < 18; i++) {
		for (j = 0; j < (int)(sizeof dv / sizeof dv[0]) + 2; j++) {
			double v = j < 10 ? dv[j] : (j == 10 ? nan : inf);

			c = *c0;
			switch (i) {
			case 0: c.base.input = v; break;
			case 1: c.base.output = v; break;
			case 2: c.base.capacity = v; break;
			case 3: c.itl_max = v; break;
			case 4: c.prefill_tokens = v; break;
			case 5: c.imbalance = v; break;
			case 6: c.acceptance = v; break;
			case 7: c.dispatch_bytes = v; break;
			case 8: c.combine_bytes = v; break;
			case 9: c.base.kv_bytes = v; break;
			case 10: c.topo.nic.bw = v; break;
			case 11: c.topo.up.bw = v; break;
			case 12: c.base.price = v; break;
			default:
				if (!(fabs(v) < 3e9) || v != floor(v))
					continue;
				k = (int)v;
				if (i == 13) c.decode.tp = c.decode.ep = k;
				if (i == 14) c.batch = k;
				if (i == 15) c.mtp = k, c.mtp_layers = 1;
				if (i == 16) c.redundant = k;
				if (i == 17) c.gpus = k;
			}
			rc = serve_run(m, d, &c, &r, &err);
			if (!(rc == GP_EINVAL ? err.msg[0] != 0 :
			      rc == GP_OK && result_good(&r))) {
				printf("# serve_run field %d value %g: rc %d "
				       "%s\n", i, v, rc, err.msg);
				bad++;
			}
			rc = serve_memory(m, &c, &c.decode, SERVE_DECODE, 1,
			                  &mem, &err);
			if (serve_check(m, d, &c, &err) == GP_OK &&
			    (rc != GP_OK || !good(mem.weights) ||
			     !isfinite(mem.kv_budget))) {
				printf("# serve_memory field %d value %g\n", i,
				       v);
				bad++;
			}
			if (serve_step_time(m, d, &c, &c.decode, SERVE_DECODE,
			                    v, &st, &err) == GP_OK &&
			    !(good(st.time) && good(st.a2a))) {
				printf("# serve_step_time field %d batch %g\n",
				       i, v);
				bad++;
			}
		}
	}
	return bad;
}

int main(void)
{
	gp_model m;
	roof_device d;
	serve_cfg c, c2;
	serve_mem mem;
	serve_step st, st2;
	serve_result r;
	gp_error err;
	double attn, down, want, t_disp, t_comb, ll[6][2], x;
	int i, ep;

	plan(44);
	dsv3(&m);
	hopper(&d);

	/* --- a GPU's weights: EP 16, DP attention, 32 redundant slots ----
	 * Routed experts: (256 + 32) / 16 = 18 slots per GPU, each
	 * 3 x 7168 x 2048 = 44,040,192 fp8 weights (1 B), in 58 MoE
	 * layers: 58 x 18 x 44,040,192 = 45,977,960,448 B.  The shared
	 * expert whole: 58 x 44,040,192 = 2,554,331,136 B.  Attention
	 * whole on each GPU: MLA q (7168 x 1536 + 1536 x 128 x 192), kv
	 * down 7168 x 576, kv up 512 x 128 x 256, o 128 x 128 x 7168 =
	 * 187,105,280 per layer x 61 = 11,413,422,080 B.  Exact arithmetic:
	 * 1e-12. */
	cfg(&c, 16, 1);
	ok(serve_check(&m, &d, &c, &err) == GP_OK, "EP16 DP-attention config "
	   "is accepted");
	ok(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &mem, &err) ==
	   GP_OK, "memory of the EP16 decode GPU");
	is_num(mem.expert_slots, 18, 1e-12, "18 expert slots per GPU");
	is_num(mem.experts, 45977960448.0, 1e-12,
	       "routed experts: 58 x 18 x 3 x 7168 x 2048 x 1 B");
	is_num(mem.shared, 2554331136.0, 1e-12, "shared expert whole");
	attn = 61.0 * 187105280.0;
	is_num(mem.attention, attn, 1e-12, "attention whole under DP "
	       "attention: 61 x 187,105,280 B");
	/* Dense layers whole: 3 x 3 x 7168 x 18432 = 1,189,085,184 B. */
	is_num(mem.dense, 1189085184.0, 1e-12, "dense MLP layers replicated");

	/* --- TP attention over the same 16 GPUs ---------------------------
	 * MLA's down-projections (7168 x (1536 + 512 + 64) = 15,138,816 per
	 * layer) stay whole, the rest is split 16 ways: 61 x (15,138,816 +
	 * (187,105,280 - 15,138,816) / 16) = 1,579,089,920 B. */
	cfg(&c2, 16, 0);
	serve_memory(&m, &c2, &c2.decode, SERVE_DECODE, 1, &mem, &err);
	down = 7168.0 * (1536 + 512 + 64);
	want = 61.0 * (down + (187105280.0 - down) / 16.0);
	is_num(mem.attention, want, 1e-12, "TP16 attention: down-"
	       "projections replicated, the rest / 16");
	/* The MLA latent is shared by the heads, so each TP rank keeps all
	 * of the group's: per GPU per sequence of the batch 16 x 61 x 576 x
	 * 2 B x (4096 + 1536) tokens; under DP attention 1 x that. */
	want = 61.0 * 576 * 2.0 * (4096 + 1536);
	is_num(mem.kv_per_seq, 16.0 * want, 1e-12, "TP16: KV per sequence "
	       "of a GPU's batch is 16 latents");
	serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &mem, &err);
	is_num(mem.kv_per_seq, want, 1e-12, "DP attention: one latent per "
	       "sequence");
	/* DeepEP low-latency buffer at 128 tokens: dispatch message 16 +
	 * max(14336, 7168 + 224) = 14352 B, combine 224 + 14336 = 14560 B;
	 * send max(128 x 14352, 288 x 128 x 14560), receive 288 x 128 x
	 * 14560; twice each: 4 x 536,739,840 = 2,146,959,360 B. */
	is_num(mem.a2a_buffer, 4.0 * 288 * 128 * 14560.0, 1e-12,
	       "DeepEP low-latency buffer (config.hpp layout)");
	ok(mem.max_batch > 0 && mem.used <= c.base.capacity,
	   "a batch fits the H800 at EP16");

	/* --- all-to-all bytes per MoE layer --------------------------------
	 * 32 sequences per GPU, 1 token each, top-8, hidden 7168:
	 * dispatch 32 x 8 x 7168 x (1 + 4/128) = 1,892,352 B, combine the
	 * same at 2 B = 3,670,016 B. */
	ok(serve_step_time(&m, &d, &c, &c.decode, SERVE_DECODE, 32, &st,
	                   &err) == GP_OK, "decode step at batch 32");
	is_num(st.dispatch_bytes, 32 * 8 * 7168 * (1 + 4.0 / 128), 1e-12,
	       "dispatch bytes = tokens x top_k x hidden x fp8+scale");
	is_num(st.combine_bytes, 32 * 8 * 7168 * 2.0, 1e-12,
	       "combine bytes = tokens x top_k x hidden x 2");
	/* EP16 on 8-GPU nodes: 8 of 16 destinations are remote. */
	is_num(st.remote_bytes, st.dispatch_bytes * 8.0 / 16.0, 1e-12,
	       "half of an EP16 dispatch leaves the node");

	/* --- one node never leaves NVLink ---------------------------------
	 * EP8 on an 8-GPU node: remote 0, and the low-latency dispatch is
	 * 35 us + (7/8 of the bytes) / (200 GB/s x 0.80), whatever the
	 * NICs: with none at all it prices the same. */
	c.redundant = 0;
	c.decode.tp = c.decode.ep = 8;
	c.gpus = 8;
	c.decode.tbo = 0;
	serve_step_time(&m, &d, &c, &c.decode, SERVE_DECODE, 32, &st, &err);
	is_num(st.remote_bytes, 0.0, 1e-12, "EP8 in one node: no bytes "
	       "leave it");
	want = 35e-6 + st.dispatch_bytes * 7.0 / 8.0 / (200e9 * 0.80);
	is_num(st.dispatch, want, 1e-9, "EP8 dispatch on NVLink alone");
	c2 = c;
	c2.topo.nics = 0;
	ok(serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE, 32, &st2,
	                   &err) == GP_OK && st2.dispatch == st.dispatch &&
	   st2.combine == st.combine, "EP8: the same without any NIC");

	/* --- DeepEP's published low-latency kernels (docs/legacy.md) -----
	 * H800 + CX7 400 Gb/s, 128 tokens per GPU, hidden 7168, top-8, fp8
	 * dispatch and bf16 combine, in us: EP 8/16/32/64/128/256 dispatch
	 * 77 118 155 173 192 194, combine 114 195 273 314 369 360.  The
	 * constant 35 us comes from the EP8 pair; the other rows check the
	 * bytes / link part: within 5% (dispatch) and 12% (combine: the
	 * EP128 row is 11% above the model, its EP256 neighbour 6%). */
	{
		static const double pub[6][2] = {
			{77, 114}, {118, 195}, {155, 273}, {173, 314},
			{192, 369}, {194, 360}};
		int good = 1;

		for (i = 0, ep = 8; i < 6; i++, ep *= 2) {
			cfg(&c, ep, 1);
			c.redundant = 0;
			c.decode.tbo = 0;
			if (serve_step_time(&m, &d, &c, &c.decode,
			                    SERVE_DECODE, 128, &st, &err)) {
				good = 0;
				break;
			}
			ll[i][0] = st.dispatch * 1e6;
			ll[i][1] = st.combine * 1e6;
			if (fabs(ll[i][0] - pub[i][0]) > 0.05 * pub[i][0] ||
			    fabs(ll[i][1] - pub[i][1]) > 0.12 * pub[i][1]) {
				printf("# EP%d: %.0f / %.0f us vs %.0f / %.0f\n",
				       ep, ll[i][0], ll[i][1], pub[i][0],
				       pub[i][1]);
				good = 0;
			}
		}
		ok(good, "DeepEP low-latency table EP8..EP256 reproduced");
		t_disp = ll[5][0];
		t_comb = ll[5][1];
		/* EP256: 248/256 of 7.57 MB at 47 GB/s + 35 us = 191 us. */
		is_num(t_disp, 35 + 128 * 8 * 7392 * 248.0 / 256 / 47e3, 1e-6,
		       "EP256 dispatch = 35 us + remote bytes / NIC");
		ok(t_comb > t_disp, "combine (bf16) takes longer than the fp8 "
		   "dispatch");
	}

	/* --- imbalance: the hottest GPU sets the pace ----------------------
	 * 1.5x the mean tokens: 1.5x the bandwidth part of the all-to-all. */
	cfg(&c, 32, 1);
	c.decode.tbo = 0;
	serve_step_time(&m, &d, &c, &c.decode, SERVE_DECODE, 64, &st, &err);
	c2 = c;
	c2.imbalance = 1.5;
	serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE, 64, &st2, &err);
	is_num(st2.dispatch - 35e-6, 1.5 * (st.dispatch - 35e-6), 1e-9,
	       "imbalance 1.5 scales the dispatch's transfer");
	ok(st2.compute > st.compute, "and the hottest GPU's expert GEMMs");

	/* --- two-batch overlap: max(2 compute, 2 comm) per MoE layer ------
	 * With TBO the exposed all-to-all is what the other micro-batch's
	 * compute cannot cover, never negative, never all of it here. */
	c2 = c;
	c2.decode.tbo = 1;
	serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE, 64, &st2, &err);
	ok(st2.a2a_exposed >= 0 && st2.a2a_exposed < st2.a2a,
	   "TBO hides part of the all-to-all");
	ok(st.a2a_exposed == st.a2a, "without TBO all of it is exposed");
	is_num(st2.time, st2.compute + st2.tp_comm + st2.a2a_exposed +
	       st2.sm_loss + st2.draft, 1e-12, "step = compute + TP + exposed "
	       "a2a (+ SM loss, drafts)");

	/* --- MTP: accept length and the verify tokens ----------------------
	 * 1 draft at 0.85: 1 + 0.85 = 1.85 (DeepSeek-V3 sec. 5.4.3: 1.8x
	 * tokens/s); 2 drafts: 1 + 0.85 + 0.7225 = 2.5725. */
	is_num(serve_accept_length(1, 0.85), 1.85, 1e-12, "accept length, "
	       "1 draft at 0.85");
	is_num(serve_accept_length(2, 0.85), 2.5725, 1e-12, "2 drafts");
	c2 = c;
	c2.mtp = 1;
	c2.mtp_layers = 1;
	serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE, 64, &st2, &err);
	is_num(st2.dispatch_bytes, 2.0 * st.dispatch_bytes, 1e-12,
	       "MTP 1: each sequence verifies 2 tokens");
	ok(st2.draft > 0, "and pays a draft pass");

	/* --- the deployment -------------------------------------------------
	 * Disaggregated: 32 prefill GPUs (EP32) and 144 decode (EP144, as
	 * DeepSeek's day 6), ITL bound 50 ms.  The system's tokens/s is the
	 * smaller pool's: min(D x decode rate / output, P x prefill rate /
	 * input) x output. */
	cfg(&c, 144, 1);
	c.decode.tbo = 1;
	c.disagg = 1;
	c.prefill.tp = c.prefill.ep = 32;
	c.prefill.dp_attention = c.prefill.tbo = 1;
	c.gpus = 176;
	c.prefill_gpus = 32;
	c.itl_max = 0.050;
	ok(serve_run(&m, &d, &c, &r, &err) == GP_OK && r.fits,
	   "EP32 prefill + EP144 decode fits and meets 50 ms");
	x = fmin(144 * r.decode.tokens_per_s_gpu / 1536,
	         32 * r.prefill.tokens_per_s_gpu / 4096) * 1536;
	is_num(r.tokens_per_s, x, 1e-12, "tokens/s = the slower pool's");
	ok(r.itl <= 0.050 && r.itl == r.tpot, "disaggregated ITL = decode "
	   "step / accept, within the bound");
	is_num(r.pool_ratio, r.decode.tokens_per_s_gpu * 4096 /
	       (r.prefill.tokens_per_s_gpu * 1536), 1e-12, "balanced pool "
	       "ratio = decode rate x in / (prefill rate x out)");
	ok(r.ttft > r.prefill.step.time && r.kv_transfer > 0,
	   "TTFT includes the KV transfer");
	/* Colocated under the same bound a user also waits for its GPU's
	 * prefills (tpot + B share / (output - 1)), so the batch is no
	 * larger. */
	ok(r.coloc_fits && r.coloc_itl <= 0.050 &&
	   r.coloc_batch <= r.decode.step.batch,
	   "colocated: within the bound at a batch no larger");

	/* The search: the fewest GPUs for 100k output tokens/s within 50 ms
	 * deliver at least that, within the bound, in whole instances. */
	cfg(&c, 16, 1);
	{
		serve_cfg out;

		ok(serve_target(&m, &d, &c, 1e5, 0.050, 0, 0, &out, &r, &err)
		   == GP_OK && r.fits && r.tokens_per_s >= 1e5 &&
		   r.itl <= 0.050, "target 100k tok/s at ITL <= 50 ms met");
		ok(out.gpus % out.decode.tp == 0 || out.disagg,
		   "in whole instances");
	}

	/* --- bad input -------------------------------------------------------- */
	cfg(&c, 48, 1);
	c.redundant = 0;
	ok(serve_check(&m, &d, &c, &err) == GP_EINVAL &&
	   strstr(err.msg, "does not divide the 256 expert slots"),
	   "EP48 needs redundant slots (256 % 48 != 0)");
	cfg(&c, 16, 1);
	c.decode.ep = 4;
	ok(serve_check(&m, &d, &c, &err) == GP_EINVAL && strstr(err.msg, "ep 4"),
	   "ep must be 1 or the instance");
	cfg(&c, 16, 1);
	c.mtp = 1;
	ok(serve_check(&m, &d, &c, &err) == GP_EINVAL &&
	   strstr(err.msg, "no MTP module"), "MTP needs the model's module");
	cfg(&c, 16, 1);
	c.topo.nics = 0;
	ok(serve_check(&m, &d, &c, &err) == GP_EINVAL && strstr(err.msg, "NICs"),
	   "EP16 across nodes without NICs is refused");

	/* --- hostile input ------------------------------------------------ */
	cfg(&c, 16, 1);
	c.disagg = 1;
	c.prefill.tp = c.prefill.ep = 16;
	c.prefill.dp_attention = c.prefill.tbo = 1;
	c.gpus = 32;
	c.base.price = 2.0;
	is_int(fuzz(&m, &d, &c), 0, "hostile values: results finite or "
	       "refused with a message");
	return done();
}
