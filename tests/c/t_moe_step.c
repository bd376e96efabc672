/*
 * t_moe_step.c - MoE layers interleaved with dense ones (moe.layer_step):
 * which layers are MoE, the parameters of Llama 4 Maverick from its
 * config.json, the FLOPs of a tiny step-2 model, and the MoE layers each
 * pipeline rank holds under the interleaved schedule's model chunks,
 * against hand counts.
 *
 * Exact integer counts are compared with reltol 1e-12: the engine works in
 * doubles and every count here is below 2^53, so the only slack is the
 * last-bit rounding of a sum of a dozen terms.
 */
#include "layout.h"
#include "model.h"
#include "fixture.h"
#include "tap.h"

#include <string.h>

#define EXACT 1e-12

/* meta-llama/Llama-4-Maverick-17B-128E config.json text_config:
 * num_hidden_layers 48, hidden_size 5120, num_attention_heads 40,
 * num_key_value_heads 8, head_dim 128, intermediate_size_mlp 16384 (the
 * dense layers), intermediate_size 8192 (each expert and the shared one),
 * num_local_experts 128, num_experts_per_tok 1,
 * interleave_moe_layer_step 2, vocab_size 202048, untied. */
static gp_model maverick(void)
{
	gp_model m = fx_llama(48, 5120, 40, 8, 16384, 202048);

	m.moe.experts = 128;
	m.moe.top_k = 1;
	m.moe.shared_experts = 1;
	m.moe.ffn_hidden = 8192;
	m.moe.layer_step = 2;
	return m;
}

/* A checked-looking layout of pp stages, vpp chunks each, under the
 * interleaved schedule (vpp > 1) or 1F1B, split uniformly as
 * mem_stage_split does for Megatron (layout_split, no balancing). */
static gp_layout chunked(int layers, int pp, int vpp, gp_schedule s)
{
	gp_layout y;

	memset(&y, 0, sizeof y);
	y.tp = y.dp = y.cp = y.ep = y.etp = 1;
	y.pp = pp;
	y.vpp = vpp;
	y.schedule = s;
	layout_split(&y, layers, 0, 0, 1, 0);
	return y;
}

/* Every MoE layer on exactly one rank: the ranks' counts (layout_stage_
 * moe) sum to the model's and none exceeds its rank's layers.  0 when
 * they do; else prints the split and returns 1. */
static int moe_conserved(const gp_model *m, const gp_layout *y)
{
	int k, sum = 0, over = 0;

	for (k = 0; k < y->pp; k++) {
		int nl = layout_stage_layers(y, m->layers, k);
		int e = layout_stage_moe(m, y, k, nl);

		over |= e < 0 || e > nl;
		sum += e;
	}
	if (sum == model_moe_layers(m) && !over)
		return 0;
	printf("#   L %d pp %d vpp %d ends %d n0 %d m %d dense %d step %d: "
	       "%d MoE over the ranks, want %d\n", m->layers, y->pp, y->vpp,
	       y->ends, y->n0, y->m, m->moe.dense_layers, m->moe.layer_step,
	       sum, model_moe_layers(m));
	return 1;
}

/* The MoE layers of ranks 0 .. pp-1 of y equal want[]. */
static void moe_ranks(const gp_model *m, const gp_layout *y,
		      const int *want, const char *name)
{
	int k, got[16], good = 1;

	for (k = 0; k < y->pp; k++) {
		got[k] = layout_stage_moe(m, y, k,
					  layout_stage_layers(y, m->layers, k));
		good &= got[k] == want[k];
	}
	if (!ok(good, name))
		for (k = 0; k < y->pp; k++)
			printf("#   rank %d: %d MoE, want %d\n", k, got[k],
			       want[k]);
}

int main(void)
{
	gp_model m, t;
	gp_params p;
	double mm;

	plan(36);

	/* Which layers: transformers' Llama4TextModel takes
	 * range(step - 1, layers, step) -- with step 2 of 48 layers
	 * 1, 3, ..., 47: 24 MoE. */
	m = maverick();
	ok(model_check(&m, NULL) == GP_OK, "maverick checks");
	ok(model_moe_layers(&m) == 24, "maverick: 24 of 48 layers MoE");
	ok(model_moe_in(&m, 0, 1) == 0, "layer 0 dense");
	ok(model_moe_in(&m, 1, 1) == 1, "layer 1 MoE");
	ok(model_moe_in(&m, 47, 1) == 1, "layer 47 (the last) MoE");
	/* A pipeline stage of 24 layers holds 12 of each kind; of 7 layers
	 * from layer 3 (3..9): 3, 5, 7, 9 -> 4 MoE, 3 dense. */
	ok(model_moe_in(&m, 0, 24) == 12 && model_moe_in(&m, 24, 24) == 12,
	   "two 24-layer stages: 12 MoE each");
	ok(layout_dense_in(&m, 3, 7) == 3, "layers 3..9: 3 dense");
	/* With 3 dense layers first and step 2 over 10 layers: MoE where
	 * i >= 3 and (i + 1) % 2 == 0 -> 3, 5, 7, 9. */
	t = maverick();
	t.layers = 10;
	t.moe.dense_layers = 3;
	ok(model_moe_layers(&t) == 4, "dense 3 + step 2 of 10: 3, 5, 7, 9");
	ok(layout_dense_in(&t, 0, 4) == 3, "layers 0..3: 0, 1, 2 dense");
	/* step 0 (a zeroed struct) and 1: every layer */
	t.moe.dense_layers = 0;
	t.moe.layer_step = 0;
	ok(model_moe_layers(&t) == 10, "step 0 (unset): every layer");
	t.moe.layer_step = 1;
	ok(model_moe_layers(&t) == 10, "step 1: every layer");

	/* Interleaved model chunks (Megatron-Core get_transformer_layer_
	 * offset: chunk c of rank s starts at c x layers / vpp + s x
	 * layers / (pp vpp)).  Maverick at pp 4, vpp 12: one layer a
	 * chunk, rank s holding layers s, s + 4, ..., s + 44 -- all odd
	 * (MoE) on ranks 1 and 3, all even (dense) on 0 and 2. */
	{
		static const int alt[4] = { 0, 12, 0, 12 };
		static const int six[4] = { 6, 6, 6, 6 };
		static const int ds[4] = { 3, 3, 3, 4 };
		static const int ds1[4] = { 1, 4, 4, 4 };
		static const int ends[5] = { 4, 5, 5, 5, 5 };
		static const int uneven[4] = { 1, 4, 6, 2 };
		static const int guide[8] = { 6, 6, 8, 8, 8, 8, 8, 6 };
		gp_layout y;

		y = chunked(48, 4, 12, GP_SCHED_INTERLEAVED);
		moe_ranks(&m, &y, alt, "maverick pp 4 vpp 12: ranks 1, 3 all "
			  "MoE, ranks 0, 2 none");
		/* vpp 6: chunks of 2, [8c + 2s, 8c + 2s + 2), one odd
		 * layer each: 6 MoE on every rank */
		y = chunked(48, 4, 6, GP_SCHED_INTERLEAVED);
		moe_ranks(&m, &y, six, "maverick pp 4 vpp 6: 6 MoE a rank");
		/* vpp given but 1F1B: one chunk a stage, 12 contiguous
		 * layers, 6 odd */
		y = chunked(48, 4, 12, GP_SCHED_1F1B);
		moe_ranks(&m, &y, six, "vpp under 1F1B: contiguous stages");
		/* DeepSeek-style: 16 layers, the first 3 dense, every later
		 * one MoE (step 1).  pp 4, vpp 4: rank s holds s, s + 4, s + 8,
		 * s + 12; layers 0, 1, 2 (dense) one on each of ranks 0..2:
		 * 3, 3, 3, 4 MoE.  Contiguous (vpp 1): rank 0 holds 0..3,
		 * 1 MoE, the others 4. */
		t = maverick();
		t.layers = 16;
		t.moe.layer_step = 1;
		t.moe.dense_layers = 3;
		y = chunked(16, 4, 4, GP_SCHED_INTERLEAVED);
		moe_ranks(&t, &y, ds, "dense first 3, pp 4 vpp 4: 3, 3, 3, 4");
		y = chunked(16, 4, 1, GP_SCHED_1F1B);
		moe_ranks(&t, &y, ds1, "dense first 3, pp 4: 1, 4, 4, 4");
		/* Uneven ends (num_layers_in_first/last_pipeline_stage 2
		 * each, mem_stage_split: n0 2, m 6): a chunk holds the
		 * first rank's 2 / 2 = 1, a middle rank's 6 / 2 = 3, the
		 * last's 1; 8 layers a round: rank 0 holds 0 and 8, rank 1
		 * 1..3 and 9..11, rank 2 4..6 and 12..14, rank 3 7 and 15.
		 * With 0..2 dense: 1, 4, 6, 2 MoE (contiguous would put 0,
		 * 1 on rank 0: 0 MoE). */
		y = chunked(16, 4, 2, GP_SCHED_INTERLEAVED);
		y.balanced = 1;
		y.n0 = 2;
		y.m = 6;
		moe_ranks(&t, &y, uneven, "first 2 and last 2 layers, vpp 2: "
			  "1, 4, 6, 2");
		/* split_ends (the embedding and the loss a slot each,
		 * mem_stage_split: n0 = 50 / 5 - 1 = 9, m 10): Maverick at
		 * pp 5, vpp 2, chunks of 5 slots.  Round 0: rank 0 the
		 * embedding and 0..3, rank 1 4..8, rank 2 9..13, rank 3
		 * 14..18, rank 4 19..23; round 1: 24..28, 29..33, 34..38,
		 * 39..43, and rank 4 44..47 and the loss.  Odd layers: rank
		 * 0 {1, 3} + {25, 27} = 4, rank 1 {5, 7} + {29, 31, 33} =
		 * 5, rank 2 {9, 11, 13} + {35, 37} = 5, rank 3 {15, 17} +
		 * {39, 41, 43} = 5, rank 4 {19, 21, 23} + {45, 47} = 5. */
		y = chunked(48, 5, 2, GP_SCHED_INTERLEAVED);
		y.ends = 2;
		y.balanced = 1;
		y.n0 = 9;
		y.m = 10;
		moe_ranks(&m, &y, ends, "split_ends pp 5 vpp 2: 4, 5, 5, 5, 5");
		/* Ranks' totals vpp does not divide, as a pipeline layout
		 * gives them: Megatron-LM's GB200 DeepSeek-V3 guide's "Et|
		 * (tt|)*30L" at pp 8, vpp 4 (61 layers, the first 3 dense;
		 * first_stage_layers 7, last 6: n0 7, m 8).  Chunk 0 holds
		 * the embedding and layer 0 (rank 0), chunk 1 layers 1, 2
		 * (rank 1), the others 2 layers each, the last (rank 7's
		 * fourth) none: rank 0 holds 1 dense and 6 MoE, rank 1 2
		 * dense and 6 MoE, ranks 2..6 8 MoE, rank 7 6.  (Contiguous
		 * stages would put all 3 dense layers on rank 0.) */
		t.layers = 61;
		y = chunked(61, 8, 4, GP_SCHED_INTERLEAVED);
		y.balanced = 1;
		y.n0 = 7;
		y.m = 8;
		moe_ranks(&t, &y, guide, "DeepSeek-V3 Et|(tt|)*30L: 6, 6, 8, "
			  "..., 8, 6");
	}

	/* Conservation over every split the engine makes under the
	 * interleaved schedule (mem_stage_split): uniform, split_ends
	 * (L + 2 slots, n0 = slots / pp - 1, m = slots / pp, a rank's slots
	 * divided by vpp as split_ends_check demands) and uneven ends
	 * (first f, last l, the middle stages' rest / mid each), for 2..64
	 * layers, pp 2..24 (past the 16 ranks above), vpp with pp vpp <=
	 * layers, dense_layers 0..3 and layer_step 1..3.  Each MoE layer
	 * lies in one chunk of one rank, so the ranks' counts sum to
	 * model_moe_layers exactly. */
	{
		int L, pp, v, dl, st, f, l, bad = 0;
		long n = 0;

		for (L = 2; L <= 64; L++)
		for (pp = 2; pp <= 24 && pp <= L; pp++)
		for (v = 2; v * pp <= L; v++)
		for (dl = 0; dl <= 3; dl++)
		for (st = 1; st <= 3; st++) {
			gp_layout y = chunked(L, pp, v, GP_SCHED_INTERLEAVED);
			gp_model q = maverick();

			q.layers = L;
			q.moe.layer_step = st;
			q.moe.dense_layers = dl;
			bad += bad < 5 && moe_conserved(&q, &y);
			n++;
			if ((L + 2) % pp == 0 && (L + 2) / pp % v == 0) {
				gp_layout z = y;

				z.ends = 2;
				z.balanced = 1;
				z.m = (L + 2) / pp;
				z.n0 = z.m - 1;
				bad += bad < 5 && moe_conserved(&q, &z);
				n++;
			}
			for (f = 0; f <= 8; f++)
			for (l = 0; l <= 8; l++) {
				int mid = pp - (f > 0) - (l > 0);
				int rest = L - f - l;
				gp_layout z = y;

				if ((!f && !l) || rest < 0 || mid < 1 ||
				    rest % mid != 0 || rest / mid < 1)
					continue;
				z.balanced = 1;
				z.m = rest / mid;
				z.n0 = f > 0 ? f : z.m;
				bad += bad < 5 && moe_conserved(&q, &z);
				n++;
			}
		}
		ok(bad == 0 && n > 100000, "every split: each MoE layer on "
		   "one rank");
		printf("# %ld splits\n", n);
	}

	/* Maverick's parameters, by hand:
	 * attention a layer: q 5120*5120 = 26,214,400; k, v 2*5120*1024 =
	 *   10,485,760; o 26,214,400 -> 62,914,560; x 48 = 3,019,898,880
	 * norms 2*5120 a layer x 48 + final 5120 = 496,640
	 * one expert (SwiGLU) 3*5120*8192 = 125,829,120; an MoE layer's
	 *   128 routed + 1 shared = 16,231,956,480; x 24 = 389,566,955,520
	 * routers 5120*128 = 655,360 x 24 = 15,728,640
	 * dense MLP 3*5120*16384 = 251,658,240 x 24 = 6,039,797,760
	 * embedding and head 2*202048*5120 = 2,068,971,520
	 * total = 400,711,848,960 (Meta: "400B total")
	 * active = total - 24*127*125,829,120 = 400,711,848,960
	 *   - 383,527,157,760 = 17,184,691,200 (Meta: "17B active"). */
	ok(model_params(&m, &p, NULL) == GP_OK, "maverick counts");
	is_num(p.attention, 3019898880.0, EXACT, "attention 48 layers");
	is_num(p.experts, 389566955520.0, EXACT, "experts of the 24 MoE layers");
	is_num(p.router, 15728640.0, EXACT, "routers of the 24 MoE layers");
	is_num(p.dense_mlp, 6039797760.0, EXACT, "dense MLP of the 24 others");
	is_num(p.total, 400711848960.0, EXACT, "maverick total");
	is_num(p.active, 17184691200.0, EXACT, "maverick active");
	/* Published to 3 and 2 significant figures: 400B +-0.5B is 0.125%,
	 * 400.71 is 0.18% over, so 0.2%; 17B +-0.5B, 17.18 is 1.1% over. */
	is_num(p.total, 400e9, 0.002, "vs Meta's 400B");
	is_num(p.active, 17e9, 0.03, "vs Meta's 17B active");

	/* Tiny step-2 model: 4 layers, h 64, 4 heads of 16 (MHA), dense
	 * SwiGLU 256, 4 experts of 128, top-1, V 1000; MoE layers 1 and 3.
	 * Matmul weights a token passes:
	 *   attention 4 layers * 4*64*64            =  65,536
	 *   dense MLP 2 layers * 3*64*256           =  98,304
	 *   MoE 2 layers * (router 64*4 + 3*64*128) =  49,664
	 *   logits 1000*64                          =  64,000
	 *                                             277,504
	 * Forward FLOP a token at context c: 2 * 277,504 + 4 layers *
	 * (QK^T 2*c*4*16 + PV 2*c*4*16) = 555,008 + 1024 c. */
	t = fx_llama(4, 64, 4, 4, 256, 1000);
	t.moe.experts = 4;
	t.moe.top_k = 1;
	t.moe.ffn_hidden = 128;
	t.moe.layer_step = 2;
	ok(model_params(&t, &p, NULL) == GP_OK, "tiny step-2 counts");
	is_num(p.matmul_active, 277504.0, EXACT, "tiny: matmul weights a token");
	is_num(model_fwd_flops_per_token(&t, 0.0), 555008.0, EXACT,
	       "tiny: forward FLOP at context 0");
	is_num(model_fwd_flops_per_token(&t, 100.0), 555008.0 + 102400.0,
	       EXACT, "tiny: forward FLOP at context 100");
	/* Every layer MoE (step 1): 65,536 + 4*24,832 + 64,000 = 228,864. */
	t.moe.layer_step = 1;
	mm = model_params(&t, &p, NULL) == GP_OK ? p.matmul_active : -1;
	is_num(mm, 228864.0, EXACT, "tiny step 1: every layer MoE");

	/* Bad steps: beyond the layers; and one that leaves no MoE layer
	 * after the dense ones (3 layers, 2 dense, step 2: only layer 1
	 * would be, and it is dense). */
	t.moe.layer_step = 5;
	fx_model_fails(t, "moe.layer_step must be in 1..layers (4), got 5",
		   "step past the layers refused");
	t.layers = 3;
	t.moe.dense_layers = 2;
	t.moe.layer_step = 2;
	fx_model_fails(t, "leave no MoE layer", "no MoE layer left refused");
	return done();
}
