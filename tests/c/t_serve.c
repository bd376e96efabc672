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
	comm_topo_init(t, GP_LINK_NVLINK);
	t->gpus_per_node = 8;
	t->nodes = 1;
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
	c->base.reserve.margin = 0.0;  /* the 0.9 above is the margin:
	                                  not held back twice */
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

/* The row of a step named `name` (NULL if absent). */
static const infer_op_row *op_row(const serve_step *s, const char *name)
{
	int i;

	for (i = 0; i < s->nops; i++)
		if (strcmp(s->ops[i].name, name) == 0)
			return &s->ops[i];
	return NULL;
}

/* Sum over the named rows (NULL-terminated) of one pass's time, or of
 * the FLOP of one layer pass (flop != 0); an absent row counts 0. */
static double rows_sum(const serve_step *s, const char *const *names,
                       int flop)
{
	double t = 0.0;

	for (; *names; names++) {
		const infer_op_row *o = op_row(s, *names);

		if (o)
			t += flop ? o->flop : o->r.time;
	}
	return t;
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

	plan(165);
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

	/* --- the routed experts in a format of their own ------------------
	 * expert_bits 4.5 (fp4 + an fp8 scale per 16): the 18 slots at
	 * 4.5 / 8 B a weight, 45,977,960,448 x 0.5625 = 25,862,602,752 B;
	 * attention and the shared expert stay at the 1-byte weights.
	 * FP4 tensor cores the Hopper fixture lacks are refused; its fp8
	 * ones are taken. */
	c2 = c;
	c2.expert_bits = 4.5;
	c2.expert_compute = GP_FP8;
	MUST(serve_memory(&m, &c2, &c2.decode, SERVE_DECODE, 1, &mem, &err));
	is_num(mem.experts, 45977960448.0 * 0.5625, 1e-12,
	       "expert_bits 4.5: routed experts at 0.5625 B a weight");
	is_num(mem.attention, 61.0 * 187105280.0, 1e-12,
	       "expert_bits leaves attention at weight_bits");
	is_num(mem.shared, 2554331136.0, 1e-12,
	       "expert_bits leaves the shared expert at weight_bits");
	ok(serve_check(&m, &d, &c2, &err) == GP_OK,
	   "fp8 expert GEMMs on Hopper are accepted");
	c2.expert_compute = GP_FP4;
	ok(serve_check(&m, &d, &c2, &err) == GP_EINVAL &&
	   strstr(err.msg, "expert_compute fp4") != NULL,
	   "fp4 expert GEMMs without FP4 tensor cores are refused");
	c2.expert_compute = GP_FP8;
	c2.expert_bits = 0.5;
	ok(serve_check(&m, &d, &c2, &err) == GP_EINVAL &&
	   strstr(err.msg, "expert_bits") != NULL,
	   "expert_bits below 1 is refused");

	/* --- TP attention over the same 16 GPUs ---------------------------
	 * MLA's down-projections (7168 x (1536 + 512 + 64) = 15,138,816 per
	 * layer) stay whole, the rest is split 16 ways: 61 x (15,138,816 +
	 * (187,105,280 - 15,138,816) / 16) = 1,579,089,920 B. */
	cfg(&c2, 16, 0);
	MUST(serve_memory(&m, &c2, &c2.decode, SERVE_DECODE, 1, &mem, &err));
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
	MUST(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &mem, &err));
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
	/* The margin (memory.h mem_kv_margin, the dense path's rule): at
	 * the same batch (same workspace) F = kv_budget at margin 0; a
	 * margin m of the 71.2e9 B holds back m x 71.2e9 B (0.1: F -
	 * 7.12e9 B); kv_free_fraction 0.9 makes the pool 0.9 F.  Sums of
	 * the same doubles: reltol 1e-12. */
	{
		serve_mem m0;
		double F;

		MUST(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &m0,
				  &err));
		F = m0.kv_budget;
		c.base.reserve.margin = 0.1;
		MUST(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &mem,
				  &err));
		is_num(mem.kv_budget, F - 7.12e9, 1e-12,
		       "margin 0.1: KV budget F - 0.1 x capacity");
		ok(mem.max_batch < m0.max_batch,
		   "margin 0.1: the KV holds fewer sequences");
		c.base.kv_free_fraction = 0.9;
		MUST(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &mem,
				  &err));
		is_num(mem.kv_budget, 0.9 * F, 1e-12,
		       "kv_free_fraction 0.9: KV budget 0.9 F");
		c.base.reserve.margin = 0.0;
		c.base.kv_free_fraction = 0.0;
	}
	/* The fixed reserve the dense path places too (memory.c
	 * mem_reserve_default): 0.5 GiB CUDA context + 64 MiB cuBLAS
	 * workspace, and on an instance of more than one GPU 0.5 GiB of NCCL
	 * buffers: 536,870,912 + 67,108,864 + 536,870,912 = 1,140,850,688 B
	 * on the EP16 instance, 603,979,776 B on one GPU.  The KV budget is
	 * the capacity less every part placed (same doubles: 1e-12). */
	MUST(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &mem, &err));
	is_num(mem.reserve, 1140850688.0, 1e-12,
	       "reserve on 16 GPUs: context + cuBLAS + NCCL");
	is_num(mem.kv_budget, c.base.capacity - mem.weights - mem.reserve -
	       mem.a2a_buffer - mem.workspace - mem.margin, 1e-12,
	       "KV budget: capacity less weights, reserve, buffers, "
	       "workspace, margin");
	{
		serve_layout one = c.decode;
		serve_mem m1;

		one.tp = one.ep = 1;
		one.dp_attention = 0;
		c.redundant = 0;
		MUST(serve_memory(&m, &c, &one, SERVE_DECODE, 0, &m1, &err));
		is_num(m1.reserve, 603979776.0, 1e-12,
		       "reserve on one GPU: no NCCL buffers");
		c.redundant = 32;
	}
	/* A reserve the base states is the one placed (mem_fixed_reserve,
	 * the dense path's sum): context 1e9 + workspace 0.25e9 + NCCL 2e9
	 * = 3.25e9 B, 2,109,149,312 B more than the default's 1,140,850,688,
	 * which the KV budget loses byte for byte at margin 0 (the weights,
	 * buffers and workspace of batch 1 do not depend on it).  Sums of
	 * ~1e10 B doubles: reltol 1e-12. */
	{
		serve_mem ms;
		gp_mem_reserve keep = c.base.reserve;

		c.base.reserve.context = 1e9;
		c.base.reserve.workspace = 0.25e9;
		c.base.reserve.comm = 2e9;
		c.comm_stated = 1;
		MUST(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &ms,
				  &err));
		is_num(ms.reserve, 3.25e9, 1e-12,
		       "a stated reserve: 1e9 + 0.25e9 + 2e9");
		is_num(ms.kv_budget, mem.kv_budget - 2109149312.0, 1e-12,
		       "... the KV budget 2,109,149,312 B smaller");
		/* A stated NCCL figure of 0 is placed as 0 on the EP16
		 * instance, not read as "none stated" (it fell back to the
		 * default's 0.5 GiB): 536,870,912 + 67,108,864 = 603,979,776
		 * B.  Exact: integers below 2^53. */
		c.base.reserve = keep;
		c.base.reserve.comm = 0.0;
		MUST(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &ms,
				  &err));
		is_num(ms.reserve, 603979776.0, 0,
		       "a stated NCCL figure of 0 is placed as 0");
		/* Unstated, NCCL's buffers are the instance's GPUs', not the
		 * base's: a base reserve defaulted for 8 GPUs (0.5 GiB of
		 * NCCL, as lgp_toserve sets it for a base tp 8) on a one-GPU
		 * instance places none: 603,979,776 B; on the EP16 instance
		 * 1,140,850,688 B.  Exact. */
		c.comm_stated = 0;
		mem_reserve_default(&c.base.reserve, 8);
		c.base.reserve.margin = 0.0;
		{
			serve_layout one = c.decode;

			one.tp = one.ep = 1;
			one.dp_attention = 0;
			c.redundant = 0;
			MUST(serve_memory(&m, &c, &one, SERVE_DECODE, 0, &ms,
					  &err));
			is_num(ms.reserve, 603979776.0, 0,
			       "unstated: a one-GPU instance has no NCCL "
			       "buffers, whatever the base's tp");
			c.redundant = 32;
		}
		c.base.reserve = keep;
	}

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
	MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_DECODE, 32, &st,
			     &err));
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
	MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_DECODE, 64, &st,
			     &err));
	c2 = c;
	c2.imbalance = 1.5;
	MUST(serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE, 64, &st2,
			     &err));
	is_num(st2.dispatch - 35e-6, 1.5 * (st.dispatch - 35e-6), 1e-9,
	       "imbalance 1.5 scales the dispatch's transfer");
	ok(st2.compute > st.compute, "and the hottest GPU's expert GEMMs");

	/* --- imbalance modelled per step (SERVE_IMBALANCE_AUTO) ------------
	 * The hottest of N GPUs gets 1 + z_N sqrt(sd^2 + 1 / lam) of the
	 * mean: sd = SERVE_EPLB_SD = sqrt(53.9^2 - 1024) / 1024 = 0.04236
	 * (the placement's spread in TensorRT-LLM blog 4 Table 1), lam the
	 * GPU's token-expert picks (Poisson chance), z_N = sqrt(N / (N-1))
	 * x Tippett's E[max] of N standard normals: 2.06967 x sqrt(32/31)
	 * = 2.10279 for 32, 2.11812 x sqrt(36/35) = 2.14817 for 36.
	 * EP32, 8 sequences a GPU, one token each: lam = 64,
	 * 1 + 2.10279 sqrt(0.04236^2 + 1/64) = 1.27753; the up GEMM's FLOP
	 * are 2 x 64 x that x 7168 x 4096 (up_n = 2 x 2048, gated).
	 * 256 sequences (lam 2048): 1 + 2.10279 x 0.047771 = 1.10045.
	 * Tolerance 1e-4 relative: z_N quoted to 5-6 digits. */
	c2 = c;
	c2.imbalance = SERVE_IMBALANCE_AUTO;
	c2.eplb = 1;
	MUST(serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE, 8, &st2,
			     &err));
	{
		const infer_op_row *o = op_row(&st2, "experts_up");

		is_num(o ? o->flop : 0, 2.0 * 64 * 1.27753 * 7168 * 4096,
		       1e-4, "8 tokens a GPU over EP32: the hottest gets "
		       "1.278x (chance and placement)");
		MUST(serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE,
				     256, &st2, &err));
		o = op_row(&st2, "experts_up");
		is_num(o ? o->flop : 0, 2.0 * 2048 * 1.10045 * 7168 * 4096,
		       1e-4, "256 tokens a GPU: 1.100x");
	}
	/* The source's own per-step figure: EP36 of 8 slots (256 + 32),
	 * 128 tokens a GPU (1024 picks, its mean received per rank):
	 * 1 + 2.14817 sqrt(0.04236^2 + 1/1024) = 1.11307; measured 1.1154
	 * (Table 1, averaged over layers, each of its own spread): within
	 * 0.005. */
	cfg(&c2, 36, 1);
	c2.topo.gpus_per_node = 4;   /* the source's GB200 trays: 9 of 4 */
	c2.decode.tbo = 0;
	c2.imbalance = SERVE_IMBALANCE_AUTO;
	c2.eplb = 1;
	MUST(serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE, 128,
			     &st2, &err));
	{
		const infer_op_row *o = op_row(&st2, "experts_up");
		double imb = o ? o->flop / (2.0 * 1024 * 7168 * 4096) : 0;

		is_num(imb, 1.11307, 1e-4, "EP36, 1024 picks a GPU: 1.1131");
		ok(fabs(imb - 1.1154) < 0.005, "within 0.005 of TensorRT-LLM's "
		   "measured per-step 1.1154");
	}
	/* SGLang's placement (eplb_src SERVE_EPLB_SGLANG) at the same load:
	 * the LMSYS blog's balancedness figure gives max / mean - 1 of
	 * 0.2500 at 32 GPUs and 0.2346 at 72; at 36, linear in ln N:
	 * 0.25 - 0.0154 ln(36/32) / ln(72/32) = 0.247763, with chance
	 * 1 + sqrt(0.247763^2 + 2.14817^2 / 1024) = 1.25670 (1e-4: z_36
	 * quoted to 6 digits). */
	c2.eplb_src = SERVE_EPLB_SGLANG;
	MUST(serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE, 128,
			     &st2, &err));
	{
		const infer_op_row *o = op_row(&st2, "experts_up");
		double imb = o ? o->flop / (2.0 * 1024 * 7168 * 4096) : 0;

		is_num(imb, 1.25670, 1e-4, "SGLang's EPLB, EP36, 1024 picks a "
		       "GPU: 1.2567");
	}
	c2.eplb_src = SERVE_EPLB_TRTLLM;

	/* --- imbalance without EPLB (eplb 0, the default: the runtimes'
	 * experts in order) ----------------------------------------------
	 * model_ep_skew_at: 1 + t sqrt(ln N / ln 32) sqrt(p^2 8 / El +
	 * 1 / lam) from the same Table 1's "No EPLB (8 per-rank slots and
	 * EP 32)" row: std 491.6 over a mean of 1024, hottest excess 1.564,
	 * so t = 1.564 / (491.6 / 1024) = 3.257803 and the placement's
	 * p^2 = (491.6 / 1024)^2 - 1 / 1024 = 0.2294941.  El is the
	 * logical experts a GPU, 256 / N.
	 * EP32 (El 8) at 128 tokens a GPU, the row's own 1024 picks: the
	 * measured 2.564 (1e-9: the same constants, no rounding).
	 * 8 tokens a GPU (64 picks): 1 + 3.257803 sqrt(0.2294941 + 1/64)
	 * = 2.612936.  EP8 (El 32), 1024 picks: 1 + 3.257803 sqrt(ln 8 /
	 * ln 32) sqrt(0.2294941 / 4 + 1 / 1024) = 1.609572 (1e-6: the
	 * digits quoted). */
	cfg(&c2, 32, 1);
	c2.decode.tbo = 0;
	c2.imbalance = SERVE_IMBALANCE_AUTO;
	ok(c2.eplb == 0, "serve_defaults: no EPLB, as the runtimes ship");
	{
		static const struct { int ep, batch; double want, tol;
				      const char *what; } row[] = {
			{ 32, 128, 2.564, 1e-9,
			  "no EPLB, EP32, 1024 picks a GPU: TensorRT-LLM's "
			  "measured 2.564" },
			{ 32, 8, 2.612936, 1e-6,
			  "no EPLB, EP32, 64 picks: 2.6129 (chance adds)" },
			{ 8, 128, 1.609572, 1e-6,
			  "no EPLB, EP8 of 32 experts a GPU: 1.6096" },
		};
		size_t ri;

		for (ri = 0; ri < sizeof row / sizeof row[0]; ri++) {
			const infer_op_row *o;

			cfg(&c2, row[ri].ep, 1);
			c2.decode.tbo = 0;
			c2.imbalance = SERVE_IMBALANCE_AUTO;
			MUST(serve_step_time(&m, &d, &c2, &c2.decode,
					     SERVE_DECODE, row[ri].batch,
					     &st2, &err));
			o = op_row(&st2, "experts_up");
			is_num(o ? o->flop / (2.0 * row[ri].batch * 8 * 7168 *
					      4096) : 0, row[ri].want,
			       row[ri].tol, row[ri].what);
		}
	}

	/* --- experts' TP inside EP (ep dividing tp, TP attention) ----------
	 * TensorRT-LLM's --tp 8 --ep 4: four groups of 64 experts, each
	 * sliced over 2 GPUs.  One sequence on TP8 (0.125 a GPU), one token:
	 * 8 picks touch n = 256 (1 - (255/256)^8) = 7.8905 experts; a group
	 * holds a hypergeometric share, mean n / 4, variance n (1/4)(3/4)
	 * (256 - n) / 255; the hottest of four is mean + 1.18862 sd
	 * (sqrt(4/3) x 1.0293754, Tippett's E[max] of 4 normals), 1.7229x
	 * the mean.  Its GPUs run 8 x 1.7229 / 4 picks through slices of
	 * width 2048 x 4 / 8: up FLOP 2 x that x 7168 x 2 x 1024.  Over two
	 * groups (--ep 2) sqrt(2/pi) = 0.7978846 sd; slices 2048 x 2 / 8.
	 * Sliced over all 8 (ep 1): 2 x 8 x 7168 x 2 x 256.  Tolerance
	 * 1e-6: the constants' digits.  The weights held are the same. */
	{
		serve_cfg c4;
		serve_layout L3;
		serve_step s1, s4;
		serve_mem m1, m4;
		double n = 256.0 * (1.0 - pow(255.0 / 256.0, 8.0)), hot;
		const infer_op_row *o1, *o4;

		cfg(&c4, 8, 0);
		c4.decode.ep = 1;
		c4.redundant = 0;
		L3 = c4.decode;
		MUST(serve_step_time(&m, &d, &c4, &L3, SERVE_DECODE, 0.125, &s1,
				     &err));
		MUST(serve_memory(&m, &c4, &L3, SERVE_DECODE, 0.125, &m1,
				  &err));
		L3.ep = 4;
		MUST(serve_step_time(&m, &d, &c4, &L3, SERVE_DECODE, 0.125, &s4,
				     &err));
		MUST(serve_memory(&m, &c4, &L3, SERVE_DECODE, 0.125, &m4,
				  &err));
		o1 = op_row(&s1, "experts_up");
		o4 = op_row(&s4, "experts_up");
		is_num(o1 ? o1->flop : 0, 2.0 * 8 * 7168 * 2 * 256, 1e-12,
		       "ep 1: every expert sliced over the 8 GPUs");
		hot = 1.0 + 1.18862 * sqrt(n / 4 * 0.75 * (256 - n) / 255) /
			(n / 4);
		ok(fabs(hot - 1.7229) < 1e-4, "the hottest of four groups: "
		   "1.7229x the mean (hand value)");
		is_num(o4 ? o4->flop : 0, 2.0 * 8 * hot / 4 * 7168 * 2 * 1024,
		       1e-6, "ep 4 inside tp 8: the hottest group's picks "
		       "through its 2-way slices");
		ok(s4.time > s1.time && s4.a2a == 0.0, "... a slower step, "
		   "no all-to-all");
		is_num(m4.experts, m1.experts, 1e-12, "the same expert "
		       "bytes per GPU");
		L3.ep = 2;
		MUST(serve_step_time(&m, &d, &c4, &L3, SERVE_DECODE, 0.125, &s4,
				     &err));
		o4 = op_row(&s4, "experts_up");
		hot = 1.0 + 0.7978846 * sqrt(n / 2 * 0.5 * (256 - n) / 255) /
			(n / 2);
		is_num(o4 ? o4->flop : 0, 2.0 * 8 * hot / 2 * 7168 * 2 * 512,
		       1e-6, "ep 2: two groups, sqrt(2/pi) sd above the mean");
		/* 32 a GPU = 256 tokens on the instance, 2048 picks: every
		 * expert nearly touched, the groups even (1.0023x). */
		L3.ep = 4;
		MUST(serve_step_time(&m, &d, &c4, &L3, SERVE_DECODE, 32, &s4,
				     &err));
		L3.ep = 1;
		MUST(serve_step_time(&m, &d, &c4, &L3, SERVE_DECODE, 32, &s1,
				     &err));
		o1 = op_row(&s1, "experts_up");
		o4 = op_row(&s4, "experts_up");
		ok(o1 && o4 && o4->flop / o1->flop > 1.0 &&
		   o4->flop / o1->flop < 1.003, "every expert touched: "
		   "the groups even");
		L3.ep = 4;
		L3.dp_attention = 1;
		ok(serve_step_time(&m, &d, &c4, &L3, SERVE_DECODE, 1, &s4,
				   &err) == GP_EINVAL && strstr(err.msg,
		   "needs TP attention"), "ep inside tp with DP attention: "
		   "refused");
		L3.dp_attention = 0;
		L3.ep = 3;
		ok(serve_step_time(&m, &d, &c4, &L3, SERVE_DECODE, 1, &s4,
				   &err) == GP_EINVAL && strstr(err.msg,
		   "ep 3"), "ep 3 does not divide tp 8: refused");
		L3.ep = 4;
		c4.redundant = 32;
		ok(serve_step_time(&m, &d, &c4, &L3, SERVE_DECODE, 1, &s4,
				   &err) == GP_EINVAL && strstr(err.msg,
		   "redundant"), "redundant slots with ep inside tp: refused");
	}

	/* --- two-batch overlap -----------------------------------------------
	 * With TBO the exposed all-to-all is what the other micro-batch's
	 * compute cannot cover, never negative, never all of it here (the
	 * stage rule itself is checked below). */
	c2 = c;
	c2.decode.tbo = 1;
	MUST(serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE, 64, &st2,
			     &err));
	ok(st2.a2a_exposed >= 0 && st2.a2a_exposed < st2.a2a,
	   "TBO hides part of the all-to-all");
	ok(st.a2a_exposed == st.a2a, "without TBO all of it is exposed");
	is_num(st2.time, st2.compute + st2.tp_comm + st2.a2a_exposed +
	       st2.sm_loss + st2.draft, 1e-12, "step = compute + TP + exposed "
	       "a2a (+ SM loss, drafts)");

	/* --- MTP: accept length and the verify tokens ----------------------
	 * 1 draft at 0.85: 1 + 0.85 = 1.85 (DeepSeek-V3 sec. 5.4.3: 1.8x
	 * tokens/s); 2 drafts: 1 + 0.85 + 0.7225 = 2.5725.  Deeper drafts
	 * at r = 0.73 of the rate before: draft 2 is kept at 0.85 x 0.73 =
	 * 0.6205 given draft 1, draft 3 at 0.85 x 0.73^2 = 0.452965 given
	 * both, so 3 drafts yield 1 + 0.85 + 0.85 x 0.6205 + 0.527425 x
	 * 0.452965 = 1 + 0.85 + 0.527425 + 0.238905065... = 2.616330065...;
	 * the first draft alone is not decayed (1.85 at any r); r = 1 is the
	 * i.i.d. formula.  Tolerance: the printed digits. */
	is_num(serve_accept_length(1, 0.85, 1.0), 1.85, 1e-12, "accept "
	       "length, 1 draft at 0.85");
	is_num(serve_accept_length(2, 0.85, 1.0), 2.5725, 1e-12, "2 drafts");
	is_num(serve_accept_length(1, 0.85, 0.73), 1.85, 1e-12, "the first "
	       "draft is not decayed");
	is_num(serve_accept_length(3, 0.85, 0.73), 2.616330065, 1e-9,
	       "3 drafts, each deeper one at 0.73 of the rate before");
	is_num(serve_accept_length(3, 1.0, 1.0), 4.0, 1e-12, "all kept: "
	       "1 + 3");
	c2 = c;
	c2.mtp = 1;
	c2.mtp_layers = 1;
	MUST(serve_step_time(&m, &d, &c2, &c2.decode, SERVE_DECODE, 64, &st2,
			     &err));
	is_num(st2.dispatch_bytes, 2.0 * st.dispatch_bytes, 1e-12,
	       "MTP 1: each sequence verifies 2 tokens");
	ok(st2.draft > 0, "and pays a draft pass");
	/* The draft extend (SGLang eagle_worker.py forward_draft_extend_
	 * after_decode, graphed at num_steps + 1 tokens a request) runs
	 * the MTP layer over the verified tokens: with one draft, 2 tokens
	 * a sequence, as the verify pass's MoE layers.  One more MoE layer
	 * in the model adds exactly one such layer to the step and leaves
	 * the drafts alone, so lay = T(L + 1) - T(L) is that layer.  The
	 * draft is that layer, the MTP projection (2 tokens a sequence)
	 * and one row of outer work a sequence -- what a step without
	 * drafts at the same batch spends on embed, final_norm, logits and
	 * sample -- so draft - lay - outer is the projection alone: above 0
	 * and below a layer.  A draft pass priced at 1 token a sequence
	 * leaves draft - lay - outer at minus the layer's growth from 1 to
	 * 2 tokens a sequence (here about -0.3 ms): the check fails. */
	{
		static const char *const outer[] = {"embed", "final_norm",
		                                     "logits", "sample", NULL};
		gp_model m2 = m;
		serve_cfg c3 = c2;
		serve_step s3;
		double lay, out = 0.0;

		m2.layers = m.layers + 1;
		MUST(serve_step_time(&m2, &d, &c2, &c2.decode, SERVE_DECODE,
				     64, &s3, &err));
		lay = s3.time - st2.time;
		c3.mtp = 0;
		MUST(serve_step_time(&m, &d, &c3, &c3.decode, SERVE_DECODE,
				     64, &s3, &err));
		for (i = 0; outer[i]; i++)
			out += op_row(&s3, outer[i]) ?
				op_row(&s3, outer[i])->total : 1e9;
		ok(lay > 0 && st2.draft - lay - out > 0 &&
		   st2.draft - lay - out < lay, "MTP 1: the draft extend "
		   "routes the 2 verified tokens a sequence");
	}

	/* --- MLA's projections as their kernels ----------------------------
	 * model_layer_ops' one qkv row is 2 T (attention weights - o) FLOP:
	 * 187,105,280 - 128 x 128 x 7168 = 69,664,768 weights per token.
	 * Prefill (MHA form) splits it into q_kv_a 7168 x (1536 + 512 + 64),
	 * q_b 1536 x 128 x 192 and kv_b 512 x 128 x 256: 15,138,816 +
	 * 37,748,736 + 16,777,216 = 69,664,768.  Decode (latent form) runs
	 * W_UK and W_UV per head instead of kv_b: 2 x 128 x 128 x 512 =
	 * 16,777,216, the same.  One 8192-token prompt (prefill_tokens =
	 * input), 32 sequences of 1 token; exact: 1e-12. */
	{
		static const char *const pre[] = {"q_kv_a", "q_b", "kv_b",
		                                   NULL};
		static const char *const dec[] = {"q_kv_a", "q_b",
		                                   "q_absorb", "v_absorb",
		                                   NULL};
		const infer_op_row *o;

		cfg(&c, 32, 1);
		c.decode.tbo = 0;
		c.base.input = 8192;
		c.prefill_tokens = 8192;
		d.attn_fwd = 0.60;
		ok(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
		                   &st, &err) == GP_OK, "an 8192-token prefill");
		is_num(rows_sum(&st, pre, 1), 2.0 * 8192 * 69664768.0, 1e-12,
		       "prefill: q_kv_a + q_b + kv_b = the layer's q/kv FLOP");
		ok(op_row(&st, "q_absorb") == NULL, "prefill up-projects the "
		   "latent (MHA form), no absorbed GEMMs");
		/* The fused attention at the catalog's fraction: 2 x 8192 x
		 * 4096.5 keys (causal mean) x 128 heads x (192 + 128) FLOP at
		 * 989 TFLOPS x 0.60; 8192 tokens is the reference length, so
		 * no shape term: exact. */
		o = op_row(&st, "attention");
		ok(o != NULL, "the attention row");
		if (o) {
			is_num(o->r.t_compute, 2.0 * 8192 * 4096.5 * 128 *
			       320 / (989e12 * 0.60), 1e-12, "prefill "
			       "attention at attn_fwd x the 16-bit peak");
			is_num(o->r.time, fmax(o->r.t_compute, o->r.t_memory) +
			       1e-6, 1e-12, "compute and the KV stream "
			       "overlap whole (+ the graph launch)");
		}
		ok(serve_step_time(&m, &d, &c, &c.decode, SERVE_DECODE, 32,
		                   &st2, &err) == GP_OK, "a decode step of 32");
		is_num(rows_sum(&st2, dec, 1), 2.0 * 32 * 69664768.0, 1e-12,
		       "decode: q_kv_a + q_b + W_UK + W_UV = the same FLOP");
		ok(op_row(&st2, "kv_b") == NULL, "decode stays in the latent "
		   "space");
		/* A 1K prompt, 16 per step (2048 head-instances): its keys
		 * loop is 512.5 deep, its 8 query tiles waste a diagonal
		 * tile each.  Relative to the 8192-token reference:
		 * K fill (512.5/640.5) / (4096.5/4224.5) = 0.825158, waves
		 * 16384 tiles / (125 x 132) = 0.992970 against 131072 /
		 * (993 x 132) = 0.999969, diagonal (8/9) / (64/65) =
		 * 0.902778: 0.739720 (rounding: 1e-6). */
		c.base.input = 1024;
		c.prefill_tokens = 16384;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
				     &st,
				     &err));
		o = op_row(&st, "attention");
		ok(o && fabs(o->r.shape_eff - 0.739720) < 1e-6,
		   "a 1K prompt's attention runs at 0.7397 of the measured "
		   "fraction");
		if (o)
			is_num(o->r.t_compute, o->flop / (989e12 * 0.60 *
			       o->r.shape_eff), 1e-12, "... its compute time");
		/* An 8-bit cache: the attention multiplies in FP8, at the
		 * FP8 peak times the 16-bit kernel's fraction times the
		 * catalog's FP8 share (attn_fp8; Hopper's 0.85: FP8 FlashMLA
		 * ~1.70x BF16 FlashMLA, not 2x).  The 8192-token prompt
		 * again: 2 x 8192 x 4096.5 x 128 x 320 FLOP / (1979e12 x
		 * 0.60 x 0.85); unmeasured (0): the 16-bit fraction of the
		 * FP8 peak, / (1979e12 x 0.60).  Exact: 1e-12. */
		c.base.input = 8192;
		c.prefill_tokens = 8192;
		c.base.kv_bytes = 1.0;
		d.attn_fp8 = 0.85;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
				     &st, &err));
		o = op_row(&st, "attention");
		ok(o && o->r.shape_eff == 1.0, "the fp8 prompt at the "
		   "reference length");
		if (o)
			is_num(o->r.t_compute, 2.0 * 8192 * 4096.5 * 128 *
			       320 / (1979e12 * 0.60 * 0.85), 1e-12, "fp8 "
			       "attention at attn_fp8 of the 16-bit kernel's "
			       "fraction of the fp8 peak");
		d.attn_fp8 = 0.0;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
				     &st, &err));
		o = op_row(&st, "attention");
		if (o)
			is_num(o->r.t_compute, 2.0 * 8192 * 4096.5 * 128 *
			       320 / (1979e12 * 0.60), 1e-12, "attn_fp8 0 "
			       "(not measured): the 16-bit fraction of the "
			       "fp8 peak");
		c.base.kv_bytes = 2.0;
		d.attn_fwd = 0.0;
	}

	/* --- a chunk of a longer prompt reads the earlier chunks' keys -------
	 * A 32768-token prompt in chunks of prefill_tokens = 8192: token i of
	 * the prompt attends to i keys (causal) whichever chunk carries it --
	 * chunk j (1..4) to 8192 (j - 1) + 4096.5 on average, the earlier
	 * chunks' keys read back from the cache -- so a step's chunk is priced
	 * at the prompt's mean, (32768 + 1) / 2 = 16384.5 keys: its attention
	 * 2 x 8192 x 16384.5 x 128 heads x (192 + 128) FLOP a layer (MLA's
	 * MHA form, as the 8192-token prompt above at 4096.5), and the four
	 * chunks' steps 2 x 32768 x 16384.5 x 128 x 320, the whole prompt's
	 * attention in one step (prefill_tokens 32768).  Every chunk priced
	 * as the prompt's first (4096.5 keys) counted a quarter of it.  With
	 * 8192 of a 40960-token prompt in the prefix cache the 32768 computed
	 * tokens see the 8192 cached keys too: 8192 + 16384.5 = 24576.5.
	 * The mixed step (serve_mixed_time, TensorRT-LLM's in-flight
	 * batching) carries the same chunk at the same KV: its chunk's latent
	 * attention rows (the step's compute beyond its decode rows) are the
	 * prefill step's.  Exact FLOP counts: 1e-12 relative; the mixed
	 * step's sum, exact but for summing order: 1e-12. */
	{
		static const char *const pre[] = {"q_kv_a", "latent_norm",
			"q_b_quant", "q_b", "kv_b_quant", "kv_b", "rope_kv",
			"attention", NULL};
		const infer_op_row *o;
		serve_step whole, mx;
		double rows = 0.0, pa = 0.0;
		int j;

		cfg(&c, 32, 1);
		c.decode.tbo = 0;
		c.base.input = 32768;
		c.prefill_tokens = 8192;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
				     &st, &err));
		o = op_row(&st, "attention");
		ok(o && fabs(o->flop / (2.0 * 8192 * 16384.5 * 128 * 320) -
		   1.0) < 1e-12, "a 32K prompt's 8K chunk: its attention at "
		   "the prompt's mean KV, 16384.5");
		c.prefill_tokens = 32768;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
				     &whole, &err));
		ok(o && op_row(&whole, "attention") &&
		   fabs(4.0 * o->flop / op_row(&whole, "attention")->flop -
		        1.0) < 1e-12, "four 8K chunks' attention = the whole "
		   "32K prompt's in one step");
		c.base.input = 40960;
		c.base.cached = 8192;
		c.prefill_tokens = 8192;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
				     &st, &err));
		o = op_row(&st, "attention");
		ok(o && fabs(o->flop / (2.0 * 8192 * 24576.5 * 128 * 320) -
		   1.0) < 1e-12, "8K cached of 40K: the chunk sees the cached "
		   "keys too, 24576.5");
		c.base.input = 32768;
		c.base.cached = 0;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
				     &st, &err));
		MUST(serve_mixed_time(&m, &d, &c, &c.decode, 32.0, 8192.0,
				      &mx, &err));
		for (j = 0; j < mx.nops; j++)
			rows += mx.ops[j].total;
		for (j = 0; pre[j]; j++)
			pa += op_row(&st, pre[j]) ?
				op_row(&st, pre[j])->total : 0.0;
		ok(pa > 0, "the prefill step's latent attention rows");
		is_num(mx.compute - rows, pa, 1e-12, "mixed: the 8K chunk's "
		       "latent attention is the prefill step's, at the "
		       "prompt's mean KV");
	}

	/* --- the activation casts of fp8 GEMMs -------------------------------
	 * DeepGEMM takes fp8 inputs with per-128 scales: the attention
	 * output (128 x 128 per token) is cast for o_proj, 2 B read + 1 B
	 * + 4/128 B written per element: 32 x 16384 x 3.03125 B.  A bf16
	 * deployment casts nothing. */
	{
		const infer_op_row *o;

		cfg(&c, 32, 1);
		c.decode.tbo = 0;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_DECODE, 32,
				     &st,
				     &err));
		o = op_row(&st, "o_quant");
		ok(o && fabs(o->bytes - 32.0 * 16384 * 3.03125) < 1e-6,
		   "fp8: o_proj's input cast, 3.03 B per element");
		c.base.compute = GP_BF16;
		c.base.weight_bits = 16.0;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_DECODE, 32,
				     &st,
				     &err));
		ok(op_row(&st, "o_quant") == NULL &&
		   op_row(&st, "shared_quant") == NULL &&
		   op_row(&st, "q_b_quant") == NULL, "bf16: no casts");
	}

	/* --- the overlap's stages ------------------------------------------
	 * Decode (SGLang's blog decode strategy): a micro-batch's dispatch
	 * D is in flight over its shared experts S and the other's
	 * attention prep P, its combine C over the other's attention core
	 * + gate Q; 58 MoE layers x 2 micro-batches x (max(Hd, D - S - P) +
	 * max(Hc, C - Q)), the parts read from the step's own rows (one
	 * pass each) and its per-micro-batch dispatch and combine.  Hd, Hc:
	 * what the kernels copy to NVLink peers with their own SMs, 7 of
	 * the 32 destinations (EP32 on 8-GPU nodes) at 200 GB/s x 0.80,
	 * imbalance 1: a micro-batch's bytes x 7/32 / 160 GB/s. */
	{
		static const char *const P[] = {"attn_norm", "q_kv_a",
			"latent_norm", "q_b_quant", "q_b", "q_absorb", "rope_kv",
			NULL};
		static const char *const Q[] = {"attention", "v_absorb",
			"o_quant", "o_proj", "mlp_norm", "moe_router",
			"moe_topk", NULL};
		static const char *const S[] = {"shared_quant", "shared_up",
			"shared_act", "shared_down", NULL};
		static const char *const X[] = {"attn_norm", "q_kv_a",
			"latent_norm", "q_b_quant", "q_b", "kv_b_quant", "kv_b",
			"rope_kv", "attention", "o_quant", "o_proj", "mlp_norm",
			"moe_router", "moe_topk", "dispatch_quant",
			"shared_quant", "shared_up", "shared_act",
			"shared_down", NULL};
		static const char *const Y[] = {"experts_permute",
			"experts_up", "experts_act", "experts_down", NULL};
		double p, q, sh, D, C, xs, ys, hd, hc, f = 132.0 / 108.0;

		cfg(&c, 32, 1);
		c.decode.tbo = 1;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_DECODE, 128,
				     &st,
				     &err));
		p = rows_sum(&st, P, 0);
		q = rows_sum(&st, Q, 0);
		sh = rows_sum(&st, S, 0);
		D = st.dispatch / 2;
		C = st.combine / 2;
		hd = st.dispatch_bytes / 2 * 7.0 / 32.0 / (200e9 * 0.80);
		hc = st.combine_bytes / 2 * 7.0 / 32.0 / (200e9 * 0.80);
		is_num(st.a2a_exposed, 58 * 2 * (fmax(hd, D - sh - p) +
		       fmax(hc, C - q)), 1e-9, "decode TBO exposes what S + P "
		       "and Q leave of dispatch and combine, and the NVLink "
		       "copies the kernels' SMs make");
		ok(hd > D - sh - p || hc > C - q, "... which here outlast "
		   "the compute beside them");
		is_num(st.sm_loss, 0.0, 1e-12, "the low-latency kernels cost "
		       "no SMs");
		/* Prefill (blog prefill strategy): compute stream A.X B.X A.Y
		 * B.Y with X = shared + attention + gate, Y = permute +
		 * routed experts, all at 132 / 108 (DeepEP's normal kernels
		 * hold 24 of the 132 SMs): max(fX, D) + max(fY, D) + max(fY,
		 * C) + max(fX, C) a layer, of which 2 f (X + Y) is compute
		 * and its 2 (f - 1) (X + Y) the SM loss. */
		c.base.input = 4096;
		c.prefill_tokens = 16384;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
				     &st,
				     &err));
		xs = rows_sum(&st, X, 0) * f;
		ys = rows_sum(&st, Y, 0) * f;
		D = st.dispatch / 2;
		C = st.combine / 2;
		is_num(st.a2a_exposed, 58 * (fmax(xs, D) + fmax(ys, D) +
		       fmax(ys, C) + fmax(xs, C) - 2 * (xs + ys)), 1e-9,
		       "prefill TBO: the four stages of a layer");
		is_num(st.sm_loss, 58 * 2 * (xs + ys) * (1 - 1 / f), 1e-9,
		       "prefill TBO: the SMs the normal kernels hold");
		/* Single-batch overlap on Hopper (single_batch_overlap.py):
		 * the combine sends on 3 of the 132 SMs beside the down GEMM
		 * (DeepGEMM signals it), slowed by 132 / 129; the shared
		 * experts run while the dispatch is in flight, except for
		 * the dispatch's NVLink copies (EP8 in one node: 7 of 8
		 * destinations at 160 GB/s), which hold the SMs.  The combine
		 * sends a block of 64 tokens of a local expert once the down
		 * GEMM signals it (DeepEP PR 483), so its last block leaves at
		 * the GEMM's end and its bytes, flag and polling follow: 256 /
		 * 8 = 32 local experts of 128 x 8 / 32 = 32 tokens each, one
		 * block apiece, 32 units, each (C - 35 us) / 32 of bytes.  Per
		 * MoE layer max(Hd, D - S) + max(0, C - f down, 35 us + (C -
		 * 35 us) / 32).  Tolerance 1e-9 relative: the same formula over
		 * the step's own rows, summed in another order (float rounding). */
		{
			static const char *const DN[] = {"experts_down",
				NULL};
			double fs = 132.0 / 129.0, dn, tl;
			serve_step st3;

			cfg(&c2, 8, 1);
			c2.redundant = 0;
			c2.decode.tbo = 0;
			c2.sbo = 1;
			c2.sbo_sms = 3;
			c2.sbo_down = 1;
			c2.sbo_shared_dispatch = 1;
			c2.sbo_block = 64;
			MUST(serve_step_time(&m, &d, &c2, &c2.decode,
					     SERVE_DECODE, 128, &st2, &err));
			sh = rows_sum(&st2, S, 0);
			dn = rows_sum(&st2, DN, 0);
			hd = st2.dispatch_bytes * 7.0 / 8.0 / 160e9;
			tl = 35e-6 + (st2.combine - 35e-6) / 32.0;
			is_num(st2.a2a_exposed, 58 * (fmax(hd, st2.dispatch -
			       sh) + fmax(0, fmax(st2.combine - fs * dn, tl))),
			       1e-9, "single-batch overlap on Hopper: shared "
			       "beside the dispatch, down GEMM beside the "
			       "combine");
			ok(hd > st2.dispatch - sh, "... the NVLink copy "
			   "outlasting the shared experts");
			ok(tl > st2.combine - fs * dn, "... and the last "
			   "block's send, flag and polling outlasting what "
			   "the down GEMM leaves of the combine");
			is_num(st2.sm_loss, 58 * dn * (fs - 1), 1e-9,
			       "... the down GEMM on 129 of 132 SMs");
			/* 0: one signal per local expert (Blackwell's) -- the
			 * same 32 units here, each expert under 64 tokens.
			 * 1e-12 relative: the same inputs to the same code
			 * path, so equal up to rounding. */
			c2.sbo_block = 0;
			MUST(serve_step_time(&m, &d, &c2, &c2.decode,
					     SERVE_DECODE, 128, &st3, &err));
			is_num(st3.a2a_exposed, st2.a2a_exposed, 1e-12,
			       "... per expert the same, experts under 64 "
			       "tokens");
			/* Blocks of 8 tokens: 32 / 8 = 4 an expert, 128
			 * units, the tail's bytes (C - 35 us) / 128; the
			 * rows and the combine are the same. */
			c2.sbo_block = 8;
			MUST(serve_step_time(&m, &d, &c2, &c2.decode,
					     SERVE_DECODE, 128, &st3, &err));
			tl = 35e-6 + (st3.combine - 35e-6) / 128.0;
			is_num(st3.a2a_exposed, 58 * (fmax(hd, st3.dispatch -
			       sh) + fmax(0, fmax(st3.combine - fs * dn, tl))),
			       1e-9, "... blocks of 8 tokens: 4 an expert");
			ok(tl > st3.combine - fs * dn, "... the tail still "
			   "binding");
			c2.sbo_block = -1;
			ok(serve_check(&m, &d, &c2, &err) == GP_EINVAL &&
			   strstr(err.msg, "sbo_block") != NULL,
			   "... a negative sbo_block is refused, named");
			c2.sbo_block = 64;
		}
		/* DeepEP's normal dispatch of a micro-batch, 8192 tokens over
		 * 4 nodes: each token to 4 (1 - 0.75^8) = 3.5995 nodes, 3 x
		 * (1 - 0.75^8) = 2.6997 of them remote: 8192 x 7168 x
		 * 1.03125 x 2.6997 = 163.5 MB at 50 GB/s x 0.94 x 0.93
		 * (DeepEP's measured wire rate) = 3.740 ms + 35 us; the
		 * NVLink side, 2.05 GPUs per node touched, 7/8 of the copies
		 * on 160 GB/s, takes 2.449 ms and does not bind. */
		is_num(D, 35e-6 + 8192.0 * 7168 * 1.03125 * 3 *
		       (1 - pow(0.75, 8)) / (50e9 * 0.94 * 0.93), 1e-9,
		       "normal dispatch at DeepEP's wire rate");
		/* A bf16 dispatch is sent as it is: no dispatch_quant row,
		 * and the gate stage X is the same rows' sum (the permute
		 * counted once, in Y), so the SM loss is still
		 * 2 (f - 1) / f x the rows of X and Y, per layer. */
		c.dispatch_bytes = 2.0;
		MUST(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
				     &st, &err));
		ok(!op_row(&st, "dispatch_quant"), "bf16 dispatch: no cast");
		xs = rows_sum(&st, X, 0) * f;
		ys = rows_sum(&st, Y, 0) * f;
		is_num(st.sm_loss, 58 * 2 * (xs + ys) * (1 - 1 / f), 1e-9,
		       "bf16 dispatch: the permute counted once");
	}

	/* --- TP prefill: the down-projection on the rank's tokens ---------
	 * TP8 attention, 16384 tokens: each rank runs q_kv_a on 2048 of
	 * them, 2 x 2048 x 2112 x 7168 FLOP. */
	{
		const infer_op_row *o;

		cfg(&c, 8, 0);
		c.decode.ep = 1;
		c.redundant = 0;
		c.prefill_tokens = 16384;
		ok(serve_step_time(&m, &d, &c, &c.decode, SERVE_PREFILL, 0,
		                   &st, &err) == GP_OK, "a TP8 prefill");
		o = op_row(&st, "q_kv_a");
		ok(o && fabs(o->flop - 2.0 * 2048 * 2112 * 7168) < 1,
		   "TP8 prefill: q_kv_a on 1/8 of the tokens");
	}

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
	/* Colocated under the same bound a user also waits for the prompt
	 * chunks of its instance (tpot + B share stall / (output - 1)): with
	 * DP attention over 144 ranks that stall, 144 times a rank's own
	 * prompts when they are rare (below), keeps even batch 1 above
	 * 50 ms -- DeepSeek's reason to disaggregate.  Whenever colocated
	 * fits, it is within the bound at a batch no larger. */
	ok(!r.coloc_fits, "colocated EP144 with DP attention: no batch "
	   "meets 50 ms");
	ok(!r.coloc_fits || (r.coloc_itl <= 0.050 &&
	   r.coloc_batch <= r.decode.step.batch),
	   "colocated: within the bound at a batch no larger when it fits");

	/* Colocated with DP attention the 32 ranks of an EP32 instance step
	 * together, so a prompt chunk on any rank stalls all of them
	 * (TensorRT-LLM tech blog 10).  Batch 32 (the most the KV budget
	 * holds is 58), output 1536 (1535 decode steps, no MTP), input 4096
	 * in 16384-token chunks: a rank runs a chunk in p = 32 / 1535 x
	 * 4096 / 16384 = 0.0052117 of its steps, and some rank in
	 * 1 - (1 - p)^32 = 0.15398 of them: the prompts cost 0.15398 /
	 * 0.0052117 = 29.54 times their balanced time -- their rank-own
	 * part; the routed experts' part ex keeps its own -- so tokens/s per
	 * GPU = 32 x 1536 / (32 x ((share - ex) x 29.54 + ex) + 1535 x
	 * (step + eager)).  The steps that carry a chunk on some rank,
	 * 0.15398 of them, run off the CUDA graph (TensorRT-LLM graphs a
	 * step only when no rank holds a context request): eager = 0.15398
	 * x (the step with stream launches - the graphed step).  Exact
	 * (1e-12): the formula's own numbers.  With TP attention every rank
	 * prefills the same batch: factor 1, and the instance's 2 x 32
	 * sequences bring a chunk in 64 / 1535 x 4096 / 16384 = 0.010423 of
	 * its steps. */
	{
		double pp = 32.0 / 1535.0 * 4096.0 / 16384.0;
		double f = (1.0 - pow(1.0 - pp, 32.0)) / pp, ex, g, ge;
		serve_cfg k;
		serve_step es;

		cfg(&c, 32, 1);
		c.decode.tbo = 0;
		c.batch = 32;
		ok(serve_run(&m, &d, &c, &r, &err) == GP_OK && r.fits,
		   "colocated EP32 with DP attention, batch 32");
		ok(fabs(f - 29.545) < 1e-3, "stall factor 29.54 (hand value)");
		/* Only the rank-own part of a prompt stalls: the routed
		 * experts' (the experts_ rows of the prefill step, as a
		 * share of its time) run every rank's tokens together. */
		ex = r.prefill_share * serve_step_routed(&r.prefill.step) /
			r.prefill.step.time;
		ok(ex > 0 && ex < r.prefill_share && fabs(ex -
		   r.prefill_experts) < 1e-15, "the routed experts' part "
		   "of a prompt: prefill_experts");
		g = 1.0 - pow(1.0 - pp, 32.0);
		ok(fabs(g - 0.15398) < 1e-5, "some rank prefills in 0.15398 "
		   "of the steps (hand value)");
		is_num(r.eager_steps, g, 1e-12, "... which run off the graph");
		k = c;
		k.base.runtime = INFER_KERNELS;
		ok(serve_step_time(&m, &d, &k, &c.decode, SERVE_DECODE, 32.0,
		                   &es, &err) == GP_OK &&
		   es.time > r.decode.step.time, "the step launched kernel "
		   "by kernel is longer than the graphed one");
		ge = g * (es.time - r.decode.step.time);
		is_num(r.eager, ge, 1e-12, "eager = share x the launches' "
		       "difference");
		is_num(r.tokens_per_s_gpu, 32.0 * 1536 /
		       (32.0 * ((r.prefill_share - ex) * f + ex) + 1535.0 *
		        (r.decode.step.time + ge)), 1e-12, "DP attention: "
		       "every rank waits for each rank's prompt chunks, "
		       "off the graph");
		/* Mixed (TensorRT-LLM's in-flight batching, serve_cfg.mixed):
		 * a chunk costs what it adds to the step of 32 decodes
		 * (serve_mixed_time at 32 with the 16384-token chunk, mx,
		 * less the decode step): dt in all, de of it the routed
		 * experts', at most dt.  A request brings 4096 / 16384
		 * chunks (per).  Its rank's own part, dt - de, is its GPU's;
		 * the routed part runs on every GPU of the instance for each
		 * of the 32 ranks' chunks, so a GPU's share of it is 32 x de
		 * x per (serve_plan.c prompt_share: as the separate prefill
		 * step's routed part, where all 32 ranks prefill at once).
		 * Exact (1e-12): the engine's own steps. */
		{
			serve_result rm;
			serve_step mx;
			double per = 4096.0 / 16384.0, dt, de;

			k = c;
			k.mixed = 1;
			ok(serve_run(&m, &d, &k, &rm, &err) == GP_OK &&
			   rm.fits && serve_mixed_time(&m, &d, &k,
			   &rm.decode.lay, 32.0, k.prefill_tokens, &mx,
			   &err) == GP_OK, "mixed: EP32 with DP attention, "
			   "the step with a chunk");
			dt = mx.time - rm.decode.step.time;
			de = fmin(dt, serve_step_routed(&mx) -
			          serve_step_routed(&rm.decode.step));
			ok(dt > 0 && de > 0 && de < dt, "the chunk adds to "
			   "the step, its routed experts part of it");
			is_num(rm.prefill_experts, 32.0 * de * per, 1e-12,
			       "mixed, DP attention: a GPU's routed part is "
			       "the 32 ranks' chunks'");
			/* The chunk's latent attention runs in prefill form
			 * beside the decodes' absorbed one (serve_step.c
			 * layer_ops' mixed branch): its q_kv_a, latent_norm,
			 * q_b_quant, q_b, kv_b_quant, kv_b, rope_kv and
			 * attention, priced as the prefill step prices one
			 * chunk of 16384 tokens at the mean causal context
			 * (q + 1) / 2, and carried in the step's compute
			 * beside its rows (the rows are the decodes').  Exact
			 * but for summing order: 1e-12. */
			{
				static const char *pre[] = { "q_kv_a",
					"latent_norm", "q_b_quant", "q_b",
					"kv_b_quant", "kv_b", "rope_kv",
					"attention" };
				double rows = 0.0, pa = 0.0;
				int j;
				size_t z;

				for (j = 0; j < mx.nops; j++)
					rows += mx.ops[j].total;
				for (j = 0; j < rm.prefill.step.nops; j++)
					for (z = 0; z < sizeof pre / sizeof *pre;
					     z++)
						if (strcmp(rm.prefill.step.ops[j]
							   .name, pre[z]) == 0)
							pa += rm.prefill.step
								.ops[j].total;
				ok(pa > 0, "the prefill step's latent "
				   "attention rows");
				is_num(mx.compute - rows, pa, 1e-12, "mixed: "
				       "the chunk's latent attention is the "
				       "prefill step's for one chunk");
			}
			is_num(rm.prefill_share, (dt - de) * per +
			       32.0 * de * per, 1e-12, "mixed: the rank's "
			       "own part and the routed part");
		}
		c.decode.dp_attention = 0;
		c.batch = 2;   /* TP attention keeps every latent on every GPU */
		ok(serve_run(&m, &d, &c, &r, &err) == GP_OK && r.fits,
		   "the same with TP attention, batch 2");
		k = c;
		k.base.runtime = INFER_KERNELS;
		ok(serve_step_time(&m, &d, &k, &c.decode, SERVE_DECODE, 2.0,
		                   &es, &err) == GP_OK, "TP: the eager step");
		g = 64.0 / 1535.0 * 4096.0 / 16384.0;
		is_num(r.eager_steps, g, 1e-12, "TP attention: the "
		       "instance's chunks, 0.010423 of its steps");
		ge = g * (es.time - r.decode.step.time);
		is_num(r.tokens_per_s_gpu, 2.0 * 1536 /
		       (2.0 * r.prefill_share + 1535.0 *
		        (r.decode.step.time + ge)), 1e-12,
		       "TP attention: the prompts at their own time");
		/* Without CUDA graphs every step launches its kernels one
		 * by one already: nothing to add. */
		c.base.runtime = INFER_KERNELS;
		ok(serve_run(&m, &d, &c, &r, &err) == GP_OK && r.fits &&
		   r.eager == 0.0, "runtime kernels: no eager extra");
		c.base.runtime = INFER_GRAPHS;
	}

	/* The shared stall rule (serve_prefill_stall, which gp.rl's rollout
	 * engine with DP attention uses too): p = 0.1 over 8 ranks,
	 * (1 - 0.9^8) / 0.1 = (1 - 0.43046721) / 0.1 = 5.6953279; rare
	 * chunks (p -> 0) cost N; p >= 1 or one rank: 1.  Exact (1e-12). */
	is_num(serve_prefill_stall(0.1, 8.0), 5.6953279, 1e-12,
	       "stall at p 0.1 over 8 ranks: 5.695 (hand value)");
	is_num(serve_prefill_stall(1e-9, 8.0), 8.0, 1e-6,
	       "rare chunks: the stall tends to N");
	ok(serve_prefill_stall(1.0, 8.0) == 1.0 &&
	   serve_prefill_stall(0.3, 1.0) == 1.0 &&
	   serve_prefill_stall(0.0, 8.0) == 1.0,
	   "every step prefilling, one rank, or no prompts: no stall");

	/* The shared prompt-step rule (infer_prompt_share, behind gp.infer's
	 * eager steps, the chunk steps here and the rollout's DP stall):
	 * 4 prompts of 1000 tokens over 100 steps with 200 tokens of room
	 * a step: 4 x 1000 / (100 x 200) = 0.2 of the steps; 40 prompts
	 * would need 2.0, capped at every step; no room or no step: every
	 * step.  Exact arithmetic (1e-12). */
	is_num(infer_prompt_share(4.0, 1000.0, 100.0, 200.0), 0.2, 1e-12,
	       "prompt share: 4 x 1000 / (100 x 200) = 0.2 (hand value)");
	ok(infer_prompt_share(40.0, 1000.0, 100.0, 200.0) == 1.0 &&
	   infer_prompt_share(4.0, 1000.0, 100.0, 0.0) == 1.0 &&
	   infer_prompt_share(4.0, 1000.0, 0.0, 200.0) == 1.0,
	   "prompt share: capped at every step; no room or step: every step");

	/* A step's own prefill of the prompts that wait at it
	 * (infer_prefill_wait): prefills of 1, 2 and 4 prompts at 10, 14
	 * and 20 ms (a chunk holds 4: 5 ms a prompt beyond).
	 *  - fin 0.1: a prefill in 1 - e^-0.1 = 0.0951626 of the steps, of
	 *    0.1 / 0.0951626 = 1.050833 prompts, 10 + 4 x 0.050833 =
	 *    10.20333 ms: 0.0951626 x 10.20333 = 0.97097549 ms a step, near
	 *    the lone prompt's 0.1 x 10 = 1 ms, where the chunk's share
	 *    would charge 0.1 x 5 = 0.5;
	 *  - fin 8, past the chunk: the chunk's share, 8 x 20 / 4 = 40 ms;
	 *  - no prompt: nothing.
	 * The hand value to 8 digits: 1e-8 relative. */
	{
		const double pk[3] = { 1.0, 2.0, 4.0 };
		const double pt[3] = { 0.010, 0.014, 0.020 };

		is_num(infer_prefill_wait(0.1, pk, pt, 3), 0.97097549e-3,
		       1e-8,
		       "prefill wait: fin 0.1 waits as a lone prompt's "
		       "(0.971 ms, hand value)");
		ok(infer_prefill_wait(0.1, pk, pt, 3) > 0.1 * 0.020 / 4.0,
		   "prefill wait: dearer than the chunk's share at fin 0.1");
		is_num(infer_prefill_wait(8.0, pk, pt, 3), 0.040, 1e-12,
		       "prefill wait: past a chunk, 8 x 20 / 4 = 40 ms");
		ok(infer_prefill_wait(0.0, pk, pt, 3) == 0.0,
		   "prefill wait: no prompt, no prefill");
	}

	/* The search: the fewest GPUs for 100k output tokens/s within 50 ms
	 * deliver at least that, within the bound, in whole instances. */
	cfg(&c, 16, 1);
	{
		serve_cfg out;

		ok(serve_target(&m, &d, &c, 1e5, 0.050, 0, 0, 0, &out, &r, &err)
		   == GP_OK && r.fits && r.tokens_per_s >= 1e5 &&
		   r.itl <= 0.050, "target 100k tok/s at ITL <= 50 ms met");
		ok(out.gpus % out.decode.tp == 0 || out.disagg,
		   "in whole instances");
		/* A bad target is refused in the words gp.infer's search
		 * uses (infer_target_check, one place for both). */
		{
			gp_error e1;

			infer_target_check(-1.0, 0.050, &e1);
			ok(serve_target(&m, &d, &c, -1.0, 0.050, 0, 0, 0, &out, &r,
			                &err) == GP_EINVAL &&
			   strcmp(err.msg, e1.msg) == 0 &&
			   strstr(err.msg, "target tokens/s must be in (0, "),
			   "a negative target: infer_target_check's words");
		}
	}

	/* --- bad input -------------------------------------------------------- */
	cfg(&c, 48, 1);
	c.redundant = 0;
	ok(serve_check(&m, &d, &c, &err) == GP_EINVAL &&
	   strstr(err.msg, "does not divide the 256 expert slots"),
	   "EP48 needs redundant slots (256 % 48 != 0)");
	ok(strstr(err.msg, "give redundant_experts 32, or that plus a "
	          "multiple of 48") != NULL,
	   "EP48 with 0: the error names the fewest that fit, 32");
	/* SERVE_REDUNDANT_AUTO: the runtimes' 0 (SGLang's
	 * --ep-num-redundant-experts, vLLM's num_redundant_experts,
	 * TensorRT-LLM without a load balancer) where ep divides the 256
	 * experts; else ceil(256 / ep) x ep - 256, the fewest that SGLang
	 * starts with ((experts + redundant) % ep == 0).  By hand: EP16 and
	 * EP32 divide 256: 0; EP48: ceil(5.33) = 6, 288 - 256 = 32; EP72:
	 * 4 x 72 - 256 = 32; EP144: 2 x 144 - 256 = 32; EP96: 3 x 96 - 256
	 * = 32; EP24: 11 x 24 - 256 = 8.  Integers, exact. */
	{
		static const int eps[] = { 16, 32, 48, 72, 144, 96, 24 };
		static const int slots_want[] = { 0, 0, 32, 32, 32, 32, 8 };
		int k, good = 1;

		for (k = 0; k < 7; k++) {
			serve_layout L = { 0 };

			cfg(&c, eps[k], 1);
			c.redundant = SERVE_REDUNDANT_AUTO;
			L.tp = L.ep = eps[k];
			if (serve_redundant(&m, &c, &L) != slots_want[k]) {
				printf("#   ep %d: got %d, want %d\n", eps[k],
				     serve_redundant(&m, &c, &L), slots_want[k]);
				good = 0;
			}
		}
		ok(good, "auto redundant slots: 0 where ep divides the experts, "
		   "else the fewest for whole slots per GPU");
	}
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

	/* --- the runtime's running requests while it speculates ---------- */
	/* serve.h spec_running (SGLang's max_running_requests, 48 unless
	 * set, divided by dp_size a DP attention rank): 50 over an EP16
	 * instance.  TP attention: the group is the instance, which holds 50,
	 * a GPU's share 50 / 16 = 3.125.  DP attention: each of the 16 ranks
	 * floor(50 / 16) = 3, a GPU's own.  Exact (the values are exact in
	 * binary). */
	{
		serve_mem ms;
		serve_result rs;

		cfg(&c, 16, 0);
		c.mtp = c.mtp_layers = 1;
		c.spec_running = 50;
		MUST(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &ms,
		                  &err));
		is_num(ms.batch_cap, 3.125, 0, "spec_running 50, TP attention "
		       "over 16: 50 / 16 a GPU");
		cfg(&c, 16, 1);
		c.mtp = c.mtp_layers = 1;
		c.spec_running = 50;
		MUST(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &ms,
		                  &err));
		is_num(ms.batch_cap, 3.0, 0, "DP attention over 16 ranks: "
		       "floor(50 / 16) a rank");
		/* without drafts the cap is not the runtime's: max_batch's
		 * over the group alone (2048 / 1 with DP attention) */
		c.mtp = 0;
		MUST(serve_memory(&m, &c, &c.decode, SERVE_DECODE, 1, &ms,
		                  &err));
		is_num(ms.batch_cap, c.base.max_batch, 0, "mtp 0: no "
		       "speculative cap");
		/* fewer requests than DP ranks: none a rank, said (on a
		 * card whose memory holds the MTP module: 141 GB x 0.9) */
		cfg(&c, 16, 1);
		c.base.capacity = 126.9e9;
		c.mtp = c.mtp_layers = 1;
		c.spec_running = 10;
		MUST(serve_run(&m, &d, &c, &rs, &err));
		ok(!rs.fits && strstr(rs.why, "fewer than the 16 DP attention "
		   "ranks"), "spec_running 10 over 16 DP ranks: no fit, said");
		cfg(&c, 16, 1);
		c.spec_running = -1;
		ok(serve_check(&m, &d, &c, &err) == GP_EINVAL &&
		   strstr(err.msg, "spec_running"), "spec_running < 0: refused, "
		   "named");
	}

	/* --- a concurrency past the KV queues (serve_cfg.queue) ---------- */
	/* cfg(32, 1): EP32 with DP attention, colocated.  Its KV-bound batch
	 * a GPU, K (the run with no batch: what the KV holds, under
	 * max_batch 2048); a concurrency's share of 2K a GPU runs K, the
	 * other K wait (infer_queue_batch): the same step and tokens/s as
	 * the run at K, exactly (the same batch priced, 0 tolerance).  The
	 * same 2K as a batch asked (queue 0) is refused by the KV, as
	 * before. */
	{
		serve_result rk, rq;
		double K;

		cfg(&c, 32, 1);
		c.batch = 0;
		MUST(serve_run(&m, &d, &c, &rk, &err));
		K = rk.decode.step.batch;
		ok(rk.fits && K >= 1, "EP32 DP attention: a KV-bound batch");
		c.batch = 2.0 * K;
		c.queue = 1;
		MUST(serve_run(&m, &d, &c, &rq, &err));
		ok(rq.fits && rq.decode.step.batch == K, "a concurrency of 2K "
		   "a GPU runs K (the rest queued)");
		is_num(rq.tokens_per_s, rk.tokens_per_s, 0, "... at the KV-"
		       "bound batch's tokens/s");
		c.queue = 0;
		MUST(serve_run(&m, &d, &c, &rq, &err));
		ok(!rq.fits && strstr(rq.why, "KV budget holds"), "a batch of "
		   "2K asked: refused by the KV");
		is_num(infer_queue_batch(3.0, 2.0), 2.0, 0,
		       "infer_queue_batch: 3 wanted, 2 held: 2");
		is_num(infer_queue_batch(0.125, 2.0), 0.125, 0, "... 1/8 of a "
		       "sequence wanted: all of it");
	}

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
