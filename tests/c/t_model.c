/*
 * t_model.c - parameter counts, FLOPs and KV bytes against hand-derived
 * numbers for published architectures.
 *
 * Exact integer counts are compared with reltol 1e-12: the engine works in
 * doubles and every count here is below 2^53, so the only slack is the
 * last-bit rounding of a sum of a dozen terms.
 */
#include "model.h"
#include "fixture.h"
#include "tap.h"

#include <math.h>
#include <string.h>

#define EXACT 1e-12

/* Megatron GPT (Narayanan et al. 2021 section 5.1): biases on every
 * linear, LayerNorm, 4h MLP, learned positions, tied embeddings. */
static gp_model gpt(int layers, int hidden, int heads, int vocab, int seq)
{
	gp_model m;

	memset(&m, 0, sizeof m);
	m.layers = layers;
	m.hidden = hidden;
	m.heads = heads;
	m.kv_heads = heads;
	m.head_dim = hidden / heads;
	m.ffn_hidden = 4 * hidden;
	m.vocab = vocab;
	m.tied_embeddings = 1;
	m.linear_bias = 1;
	m.norm_params = 2 * hidden;
	m.pos_embeddings = seq;
	m.positions = GP_POS_LEARNED;
	return m;
}

static gp_model deepseek_v3(void)
{
	gp_model m = fx_llama(61, 7168, 128, 128, 18432, 129280);

	m.moe.experts = 256;
	m.moe.top_k = 8;
	m.moe.shared_experts = 1;
	m.moe.ffn_hidden = 2048;
	m.moe.dense_layers = 3;
	m.mla.q_lora_rank = 1536;
	m.mla.kv_lora_rank = 512;
	m.mla.qk_nope_head_dim = 128;
	m.mla.qk_rope_head_dim = 64;
	m.mla.v_head_dim = 128;
	return m;
}

/* T5 (Raffel et al. 2020; Hugging Face T5Config): d_model, d_kv, d_ff,
 * num_heads, num_layers = num_decoder_layers, 32 buckets, T5LayerNorm
 * (a gain only: hidden parameters per norm). */
static gp_model t5(int layers, int hidden, int heads, int d_kv, int ffn,
		   int gated, int tied)
{
	gp_model m;

	memset(&m, 0, sizeof m);
	m.layers = layers;
	m.encoder_layers = layers;
	m.hidden = hidden;
	m.heads = heads;
	m.kv_heads = heads;
	m.head_dim = d_kv;
	m.ffn_hidden = ffn;
	m.ffn_gated = gated;
	m.ffn_relu = !gated;
	m.vocab = 32128;
	m.tied_embeddings = tied;
	m.norm_params = hidden;
	m.rel_buckets = 32;
	return m;
}

/* "name,name,..." of an op list. */
static const char *op_names(const gp_op *ops, int n, char *buf, size_t len)
{
	size_t k = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && k + 1 < len; i++)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? "," : "",
				      ops[i].name);
	return buf;
}

static double total(const gp_model *m)
{
	gp_params p;

	if (model_params(m, &p, NULL) != GP_OK)
		return NAN;
	return p.total;
}

int main(void)
{
	gp_model m;
	gp_params p;
	gp_error e;
	double h, l, s, V, f;

	plan(123);

	/* Llama-2-7B: h 4096, l 32, 32 heads (MHA), ffn 11008, V 32000.
	 * layer = 4h^2 (q,k,v,o) + 3*h*11008 (SwiGLU) + 2h (RMSNorms)
	 *       = 67,108,864 + 135,266,304 + 8,192 = 202,383,360
	 * total = 32 * layer + 2 * V h (untied) + h (final norm)
	 *       = 6,476,267,520 + 262,144,000 + 4,096 = 6,738,415,616,
	 * the count Meta and HF publish for the checkpoint. */
	m = fx_llama(32, 4096, 32, 32, 11008, 32000);
	is_num(total(&m), 6738415616.0, EXACT, "llama2-7b params");

	/* Llama-3-8B: GQA 8 kv heads, ffn 14336, V 128256.
	 * attn = 2*4096^2 + 2*4096*1024 = 41,943,040; mlp = 176,160,768;
	 * layer = 41,943,040 + 176,160,768 + 8,192 = 218,112,000
	 * total = 32 * 218,112,000 + 2 * 525,336,576 + 4,096
	 *       = 8,030,261,248 (published). */
	m = fx_llama(32, 4096, 32, 8, 14336, 128256);
	is_num(total(&m), 8030261248.0, EXACT, "llama3-8b params");

	/* Llama-2-70B: h 8192, l 80, 64 heads, 8 kv, ffn 28672, V 32000.
	 * attn = 2*8192^2 + 2*8192*1024 = 150,994,944;
	 * mlp = 3*8192*28672 = 704,643,072; norms 2h = 16,384;
	 * layer = 150,994,944 + 704,643,072 + 16,384 = 855,654,400
	 * total = 80 * 855,654,400 + 2 * 262,144,000 + 8,192
	 *       = 68,976,648,192 (published 68.98B). */
	m = fx_llama(80, 8192, 64, 8, 28672, 32000);
	is_num(total(&m), 68976648192.0, EXACT, "llama2-70b params");

	/* Llama-2-70B KV cache in bf16: 2 (K,V) * 80 layers * 8 kv heads *
	 * 128 dims * 2 bytes = 327,680 B/token; 4096 tokens = 1,342,177,280 B
	 * = 1.25 GiB exactly. */
	is_num(model_kv_bytes_per_token(&m, 2.0), 327680.0, EXACT,
	       "llama2-70b kv bytes/token bf16");
	is_num(model_kv_bytes(&m, 4096.0, 2.0), 1.25 * 1073741824.0, EXACT,
	       "llama2-70b kv 4096 tokens = 1.25 GiB");

	/* Mixtral 8x7B: Llama-3-8B-shaped attention at V 32000, 8 experts of
	 * 3*4096*14336 = 176,160,768, top-2, router 4096*8 = 32,768.
	 * layer = 41,943,040 + 8*176,160,768 + 32,768 + 8,192
	 *       = 1,451,270,144
	 * total = 32 * 1,451,270,144 + 262,144,000 + 4,096 = 46,702,792,704
	 * active: 6 idle experts per layer fewer:
	 *   46,702,792,704 - 32*6*176,160,768 = 12,879,925,248 (12.88B). */
	m = fx_llama(32, 4096, 32, 8, 14336, 32000);
	m.moe.experts = 8;
	m.moe.top_k = 2;
	m.moe.ffn_hidden = 14336;
	ok(model_params(&m, &p, NULL) == GP_OK, "mixtral counts");
	is_num(p.total, 46702792704.0, EXACT, "mixtral total");
	is_num(p.active, 12879925248.0, EXACT, "mixtral active");
	is_num(p.router, 32.0 * 32768.0, EXACT, "mixtral router 32*h*E");

	/* DeepSeek-V3 (MLA + MoE, 3 dense layers, 1 shared + 256 routed
	 * experts of 2048, top-8; arXiv 2412.19437 section 4.2):
	 * MLA per layer: q_a 7168*1536 = 11,010,048; q_b 1536*128*192 =
	 *   37,748,736; kv_a 7168*(512+64) = 4,128,768; kv_b 512*128*256 =
	 *   16,777,216; o 128*128*7168 = 117,440,512  -> 187,105,280
	 * norms per layer 2*7168 + 1536 + 512 = 16,384
	 * dense layer: + 3*7168*18432 = 396,361,728 -> 583,483,392 (x3)
	 * MoE layer: + 257*44,040,192 + router 7168*256 = 1,835,008
	 *   -> 11,507,286,016 (x58)
	 * total = 1,750,450,176 + 667,422,588,928 + 2*926,679,040 + 7,168
	 *       = 671,026,404,352 (published 671B, MTP module excluded)
	 * active: MoE layer with 9 of 257 experts = 585,318,400 (x58)
	 *   = 33,948,467,200 + 1,750,450,176 + 1,853,358,080 + 7,168
	 *   = 37,552,282,624 (published "37B", 2 significant figures). */
	m = deepseek_v3();
	ok(model_params(&m, &p, NULL) == GP_OK, "deepseek-v3 counts");
	is_num(p.total, 671026404352.0, EXACT, "deepseek-v3 total");
	is_num(p.active, 37552282624.0, EXACT, "deepseek-v3 active");
	/* Published rounded "671B" and "37B": within 1% and 1.5% (37 has two
	 * significant figures, +-0.5B = 1.35%; 37.55 is the full count). */
	is_num(p.total, 671e9, 0.01, "deepseek-v3 vs published 671B");
	is_num(p.active, 37e9, 0.016, "deepseek-v3 vs published 37B");
	/* MLA KV cache: 61 layers * (512 + 64) * 2 bytes = 70,272 B/token. */
	is_num(model_kv_bytes_per_token(&m, 2.0), 70272.0, EXACT,
	       "deepseek-v3 MLA kv bytes/token");

	/* GPT-3 175B (Brown et al. 2020 Table 2.1): l 96, h 12288, 96 heads,
	 * V 50257, s 2048.  Narayanan et al. 2021 eq. (2):
	 *   P = 12 l h^2 + 13 l h + (V + s) h, plus the final LayerNorm 2h:
	 *   = 173,946,175,488 + 15,335,424 + 642,723,840 + 24,576
	 *   = 174,604,259,328. */
	h = 12288; l = 96; V = 50257; s = 2048;
	m = gpt(96, 12288, 96, 50257, 2048);
	is_num(total(&m), 12 * l * h * h + 13 * l * h + (V + s) * h + 2 * h,
	       EXACT, "gpt3 = Megatron eq. (2) + final norm");
	is_num(total(&m), 174604259328.0, EXACT, "gpt3 params");
	/* "175B" has three significant figures: +-0.5e9, 0.29% of it;
	 * 174.60e9 is 0.23% below. */
	is_num(total(&m), 175e9, 0.5e9 / 175e9, "gpt3 vs published 175B");

	/* Megatron 1T (Narayanan et al. 2021 Table 1): l 128, h 25600,
	 * V 51200, s 2048: 1,006,632,960,000 + 42,598,400 + 1,363,148,800
	 * + 51,200 = 1,008,038,758,400; the table prints 1008.0B. */
	m = gpt(128, 25600, 160, 51200, 2048);
	/* Printed to 0.1B: +-0.05e9, 5.0e-5 of it; 1008.04e9 is 3.8e-5
	 * above. */
	is_num(total(&m), 1008.0e9, 0.05e9 / 1008.0e9,
	       "megatron 1T vs Table 1");

	/* Forward FLOPs vs Megatron: per token 24 l h^2 + 4 s l h + 2 V h
	 * (Narayanan et al. 2021 section 5.1: forward = 1/3 of
	 * 72 B s l h^2 (1 + s/6h + V/12lh)); biases and norms are not
	 * counted there or here. */
	m = gpt(96, 12288, 96, 50257, 2048);
	f = model_fwd_flops_per_token(&m, s);
	is_num(f, 72 * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)) / 3,
	       1e-12, "gpt3 fwd flops/token = Megatron 72/3");
	/* With full recompute the layers run forward twice but the logits
	 * once: 4 * (24 l h^2 + 4 s l h) + 3 * 2 V h
	 *   = 96 l h^2 (1 + s/6h + V/16lh)  (Narayanan eq. 3). */
	is_num(4 * f - 2 * V * h,
	       96 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)),
	       1e-12, "gpt3 training flops with recompute = 96 formula");
	/* ctx 0: only the weights, 2 * (12 l h^2 + V h). */
	is_num(model_fwd_flops_per_token(&m, 0.0),
	       2 * (12 * l * h * h + V * h), 1e-12, "flops at ctx 0");

	/* MLA attention FLOPs over ctx: per layer 2 c a (128+64) +
	 * 2 c a 128 = 640 c a; a = 128, 61 layers: 40,960 * 61 * c.
	 * The difference between ctx 1000 and ctx 0 is that term. */
	m = deepseek_v3();
	is_num(model_fwd_flops_per_token(&m, 1000.0) -
	       model_fwd_flops_per_token(&m, 0.0), 640.0 * 128 * 61 * 1000,
	       1e-9, "deepseek-v3 MLA score+value flops");
	/* Matmul weights at ctx 0: 2 * (active - embedding lookup - norms)
	 * = 2 * (37,552,282,624 - 926,679,040 - 61*16,384 - 7,168)
	 * = 2 * 36,624,596,992 (routers and logits included). */
	is_num(model_fwd_flops_per_token(&m, 0.0), 2.0 * 36624596992.0,
	       EXACT, "deepseek-v3 fwd flops at ctx 0");

	/* Sliding window (Mistral-7B-like, window 4096): 32 layers,
	 * 8 kv heads, head_dim 128, bf16: 4,096 B per layer per token.
	 * All layers sliding at ctx 8192: 32 * 4096 * 4096 = 0.5 GiB. */
	m = fx_llama(32, 4096, 32, 8, 14336, 32000);
	m.sliding_window = 4096;
	m.sliding_layers = 32;
	is_num(model_kv_bytes(&m, 8192, 2.0), 536870912.0, EXACT,
	       "kv all layers sliding capped at window");
	/* Half the layers sliding: 16*4096*8192 + 16*4096*4096. */
	m.sliding_layers = 16;
	is_num(model_kv_bytes(&m, 8192, 2.0), 805306368.0, EXACT,
	       "kv half the layers sliding");
	/* Below the window nothing is capped: 32 * 4096 * 1000. */
	is_num(model_kv_bytes(&m, 1000, 2.0), 131072000.0, EXACT,
	       "kv below the window");

	/* Qwen2-VL-7B: LLM h 3584, l 28, 28 heads, 4 kv, ffn 18944,
	 * V 152064, untied, qkv bias:
	 *  layer = 2*3584^2 + 2*3584*512 + 4,608 (bias) + 3*3584*18944
	 *        + 7,168 = 233,057,792; x28 = 6,525,618,176
	 *  + 2 * 544,997,376 + 3,584 = 7,615,616,512 (Qwen2-7B's count).
	 * ViT: 32 layers, h 1280, 16 heads, ffn 5120, biases, LayerNorm:
	 *  layer = 4h^2 + 4h + 2*h*5120 + 5120 + h + 4h = 19,677,440
	 *  x32 = 629,678,080; patch conv 3*2*14*14*1280 = 1,505,280;
	 *  merger LayerNorm 2,560; merger MLP 5120*5120 + 5120 +
	 *  5120*3584 + 3584 = 44,573,184 -> tower 675,759,104
	 * total 8,291,375,616 (published 8.29B). */
	m = fx_llama(28, 3584, 28, 4, 18944, 152064);
	m.qkv_bias = 1;
	m.vision.layers = 32;
	m.vision.hidden = 1280;
	m.vision.heads = 16;
	m.vision.ffn_hidden = 5120;
	m.vision.image_size = 448;
	m.vision.patch_size = 14;
	m.vision.merge = 2;
	m.vision.temporal_patch = 2;
	m.vision.projector_params = 44573184;
	ok(model_params(&m, &p, NULL) == GP_OK, "qwen2-vl-7b counts");
	is_num(p.vision, 675759104.0, EXACT, "qwen2-vl-7b vision tower");
	is_num(p.total, 8291375616.0, EXACT, "qwen2-vl-7b total");
	/* 448/14 = 32 patches a side, 2x2 merge -> 16^2 = 256 tokens. */
	is_num(model_vision_tokens(&m), 256.0, EXACT, "qwen2-vl tokens/img");

	/* LLaVA-1.5 CLIP ViT-L/14-336 tower: 24 layers, h 1024, ffn 4096,
	 * 336/14 = 24 -> 576 patches, projector 20,979,712.
	 * per layer per patch: 2*(4h^2 + 2hf) = 25,165,824 matmul FLOP
	 *   + 4 * 576 * 1024 = 2,359,296 (scores + PV) = 27,525,120
	 * x 576 patches x 24 layers = 380,507,258,880
	 * + patch conv 2*3*14*14*1024*576 = 693,633,024
	 * + projector 2*20,979,712*576 = 24,168,628,224
	 * = 405,369,520,128 FLOP per image. */
	m = fx_llama(32, 4096, 32, 32, 11008, 32000);
	is_num(model_vision_flops_per_image(&m), 0.0, EXACT,
	       "no vision tower: 0 FLOP per image");
	m.vision.layers = 24;
	m.vision.hidden = 1024;
	m.vision.heads = 16;
	m.vision.ffn_hidden = 4096;
	m.vision.image_size = 336;
	m.vision.patch_size = 14;
	m.vision.projector_params = 20979712;
	is_num(model_vision_flops_per_image(&m), 405369520128.0, EXACT,
	       "llava clip tower FLOP per image");
	/* tokens_per_image unset: (336/14)^2 = 576. */
	is_num(model_vision_tokens(&m), 576.0, EXACT, "llava tokens derived");

	/* Matmul weights of Llama-2-7B: 32 * (4h^2 + 3*h*11008)
	 * = 32 * 202,375,168 = 6,476,005,376, + logits 131,072,000
	 * = 6,607,077,376 (no norms, no input lookup). */
	m = fx_llama(32, 4096, 32, 32, 11008, 32000);
	ok(model_params(&m, &p, NULL) == GP_OK, "llama2-7b counts again");
	is_num(p.matmul_active, 6607077376.0, EXACT,
	       "llama2-7b matmul weights");

	/* DeepSeek-V3's largest layer is an MoE layer: 11,507,286,016. */
	m = deepseek_v3();
	MUST(model_params(&m, &p, NULL));
	is_num(p.per_layer_max, 11507286016.0, EXACT, "deepseek largest layer");
	/* A shared expert twice the routed width adds one more expert's
	 * worth per MoE layer: 58 * 3*7168*2048 = 2,554,331,136. */
	m.moe.shared_ffn_hidden = 4096;
	is_num(total(&m) - 671026404352.0, 2554331136.0, EXACT,
	       "shared_ffn_hidden widens the shared expert");

	/* Bad inputs: each names its field. */
	m = fx_llama(32, 4096, 32, 6, 11008, 32000);
	fx_model_fails(m, "kv_heads (6) must divide heads (32)", "kv_heads 6/32");
	m = fx_llama(-1, 4096, 32, 32, 11008, 32000);
	fx_model_fails(m, "layers must be positive", "negative layers");
	m = fx_llama(32, 4096, 32, 32, 11008, 32000);
	m.moe.experts = 8;
	m.moe.top_k = 9;
	m.moe.ffn_hidden = 1;
	fx_model_fails(m, "moe.top_k", "top_k > experts");
	m = fx_llama(32, 4096, 32, 32, 11008, 32000);
	m.norm_params = 5;
	fx_model_fails(m, "norm_params", "norm_params neither h nor 2h");
	m = deepseek_v3();
	m.mla.v_head_dim = 0;
	fx_model_fails(m, "mla.v_head_dim", "MLA without v_head_dim");
	m = fx_llama(32, 4096, 32, 32, 11008, 32000);
	m.vision.params = NAN;
	fx_model_fails(m, "vision.params", "NaN vision params");
	ok(model_params(&m, &p, &e) == GP_EINVAL, "model_params refuses too");

	/* --- encoder-decoder (T5) --- */
	{
		gp_op ops[GP_MAX_LAYER_OPS];
		gp_op_cfg oc;
		char names[400];
		double wsum;
		int n, i;

		/* T5-3B (v1.0): shared 32128 x 1024 = 32,899,072; encoder
		 * layer: q,k,v,o 4 x 1024 x 4096 = 16,777,216 + wi, wo
		 * 2 x 1024 x 16384 = 33,554,432 + 2 norms 2048 =
		 * 50,333,696; decoder layer: two attention blocks
		 * 33,554,432 + MLP 33,554,432 + 3 norms 3072 = 67,111,936;
		 * 2 x 32 buckets x 32 heads + 2 final norms = 4096:
		 * 32,899,072 + 24 x 50,333,696 + 24 x 67,111,936 + 4096 =
		 * 2,851,598,336 (KerasNLP's t5_3b preset). */
		m = t5(24, 1024, 32, 128, 16384, 0, 1);
		MUST(model_params(&m, &p, NULL));
		is_num(p.total, 2851598336.0, EXACT, "t5-3b total");
		/* Encoder: 24 x 50,333,696 + final norm 1024 + its bias
		 * table 1024 = 1,208,010,752. */
		is_num(p.encoder, 1208010752.0, EXACT, "t5-3b encoder stack");
		is_num(p.per_layer_max, 67111936.0, EXACT,
		       "t5-3b largest layer: a decoder layer");
		/* T5 v1.1 XL (T0 3B): 2 x 32128 x 2048 + 24 x (4 x 2048^2
		 * + 3 x 2048 x 5120 + 4096) + 24 x (8 x 2048^2 + 3 x 2048
		 * x 5120 + 6144) + 2048 + 4096 = 2,849,757,184; XXL (d 4096,
		 * d_kv 64, 64 heads, d_ff 10240) 11,135,332,352 (KerasHub
		 * t5_1.1_xl / t5_1.1_xxl presets). */
		m = t5(24, 2048, 32, 64, 5120, 1, 0);
		is_num(total(&m), 2849757184.0, EXACT, "t5 v1.1 xl total");
		m = t5(24, 4096, 64, 64, 10240, 1, 0);
		is_num(total(&m), 11135332352.0, EXACT, "t5 v1.1 xxl total");

		/* Forward FLOP of one encoder + one decoder token at ctx
		 * 512: 2 x matmul weights (24 x (16,777,216 + 33,554,432)
		 * encoder + 24 x (2 x 16,777,216 + 33,554,432) decoder +
		 * 32,899,072 logits = 2,851,471,360) + 72 attention cores
		 * (encoder self, decoder self, cross) of 4 x 512 x 32 x 128
		 * = 8,388,608: 5,702,942,720 + 603,979,776. */
		m = t5(24, 1024, 32, 128, 16384, 0, 1);
		is_num(model_fwd_flops_per_token(&m, 512), 6306922496.0, EXACT,
		       "t5-3b forward FLOP per token pair at 512");
		/* Cross K/V: 2 x 24 layers x 32 heads x 128 x 2 B = 393,216
		 * per encoder token; decoder-only models have none. */
		is_num(model_cross_kv_bytes(&m, 100, 2), 39321600.0, EXACT,
		       "t5-3b cross K/V of 100 encoder tokens in bf16");
		m = fx_llama(32, 4096, 32, 32, 11008, 32000);
		is_num(model_cross_kv_bytes(&m, 100, 2), 0, 0,
		       "decoder-only: no cross K/V");

		/* The operator lists.  Encoder layer of 2 sequences of 64
		 * tokens, unfused; its GEMMs read the layer's matmul
		 * weights, 16,777,216 + 33,554,432 = 50,331,648. */
		m = t5(24, 1024, 32, 128, 16384, 0, 1);
		memset(&oc, 0, sizeof oc);
		oc.seqs = 2;
		oc.q = 64;
		oc.kv_len = 64;
		oc.tp = 1;
		oc.encoder = 1;
		n = model_layer_ops(&m, &oc, ops);
		ok(strcmp(op_names(ops, n, names, sizeof names),
			  "attn_norm,qkv,pos_bias,attention,o_proj,mlp_norm,"
			  "mlp_up,mlp_act,mlp_down") == 0,
		   "t5 encoder layer ops");
		for (wsum = 0, i = 0; i < n; i++)
			wsum += ops[i].weights;
		is_num(wsum, 50331648.0, EXACT,
		       "encoder GEMMs read its weights");
		/* Decoder layer, 4 target tokens per sequence over 64
		 * encoder tokens: + kv_write and the cross block; GEMM
		 * weights 2 x 16,777,216 + 33,554,432 = 67,108,864. */
		oc.encoder = 0;
		oc.q = 4;
		oc.kv_len = 2;
		oc.enc_len = 64;
		n = model_layer_ops(&m, &oc, ops);
		ok(strcmp(op_names(ops, n, names, sizeof names),
			  "attn_norm,qkv,kv_write,pos_bias,attention,o_proj,"
			  "cross_norm,cross_q,cross_kv,cross_attention,cross_o,"
			  "mlp_norm,mlp_up,mlp_act,mlp_down") == 0,
		   "t5 decoder layer ops");
		for (wsum = 0, i = 0; i < n; i++)
			wsum += ops[i].weights;
		is_num(wsum, 67108864.0, EXACT,
		       "decoder GEMMs read its weights");
		/* cross_kv: 2 x 128 encoder tokens x 8192 (K and V) x 1024
		 * = 2,147,483,648 FLOP; cross_attention: 2 x 8 queries x 64
		 * keys x 32 heads x (128 + 128) = 8,388,608 FLOP. */
		is_num(ops[8].flop, 2147483648.0, EXACT, "cross_kv FLOP");
		is_num(ops[9].flop, 8388608.0, EXACT, "cross_attention FLOP");
		/* Decoding with the cross K/V cached: no cross_kv. */
		oc.cross_cached = 1;
		is_int(model_layer_ops(&m, &oc, ops), 14,
		       "cached cross K/V: 14 ops");
		oc.enc_len = 0;
		is_int(model_layer_ops(&m, &oc, ops), 0,
		       "a decoder layer without enc_len: no list");
		/* Decoder-only lists are the same whatever the encoder-decoder
		 * fields of the config hold. */
		m = fx_llama(32, 4096, 32, 8, 14336, 128256);
		oc.encoder = 1;
		oc.enc_len = 99;
		n = model_layer_ops(&m, &oc, ops);
		ok(strcmp(op_names(ops, n, names, sizeof names),
			  "attn_norm,qkv,rope_kv,attention,o_proj,mlp_norm,"
			  "mlp_up,mlp_act,mlp_down") == 0,
		   "decoder-only list unchanged");
		/* No rotary embedding (a learned table, ALiBi): q and k go
		 * to attention as the projection wrote them, the cache
		 * write is all that is left of rope_kv.  GPT-3 175B at one
		 * sequence of 8 tokens, MHA 96 x 128: kv_write reads K and
		 * V, 8 x 2 x 96 x 128 = 196,608 elements, no FLOPs. */
		m = gpt(96, 12288, 96, 50257, 2048);
		memset(&oc, 0, sizeof oc);
		oc.seqs = 1;
		oc.q = 8;
		oc.kv_len = 8;
		oc.tp = 1;
		oc.flash = 1;
		n = model_layer_ops(&m, &oc, ops);
		ok(strcmp(op_names(ops, n, names, sizeof names),
			  "attn_norm,qkv,kv_write,attention,o_proj,mlp_norm,"
			  "mlp_up,mlp_act,mlp_down") == 0,
		   "learned positions: no rope_kv, the cache write only");
		is_num(ops[2].flop, 0.0, EXACT, "kv_write: no FLOPs");
		is_num(ops[2].act, 196608.0, EXACT,
		       "kv_write reads K and V: 8 x 2 x 96 x 128");
		m.pos_embeddings = 0;
		m.positions = GP_POS_ALIBI;
		n = model_layer_ops(&m, &oc, ops);
		ok(n == 9 && strcmp(ops[2].name, "kv_write") == 0,
		   "alibi: no rope_kv either");
		m.positions = GP_POS_ROPE;
		m.pos_embeddings = 2048;
		fx_model_fails(m, "pos_embeddings = 2048 is a learned position "
			   "table: positions must be learned",
			   "a position table with rope refused");
		m.pos_embeddings = 0;
		m.positions = 4;
		fx_model_fails(m, "positions must be 0 (rope), 1 (learned), 2 "
			   "(alibi) or 3 (none), got 4",
			   "an unknown position kind refused");
		m = deepseek_v3();
		m.positions = GP_POS_LEARNED;
		fx_model_fails(m, "mla ropes its qk_rope_head_dim key: positions "
			   "must be rope", "MLA without rope refused");

		m = t5(24, 1024, 32, 128, 16384, 0, 1);
		m.moe.experts = 8;
		m.moe.top_k = 2;
		m.moe.ffn_hidden = 1024;
		fx_model_fails(m, "encoder-decoder model (encoder_layers 24) with "
			   "experts", "encoder-decoder with experts refused");
		m = fx_llama(32, 4096, 32, 32, 11008, 32000);
		m.rel_buckets = 32;
		fx_model_fails(m, "rel_buckets (32) applies to encoder-decoder",
			   "rel_buckets on a decoder-only model");
		m = t5(24, 2048, 32, 64, 5120, 1, 0);
		m.ffn_relu = 1;
		fx_model_fails(m, "ffn_act 'relu' applies to a plain MLP",
			   "ReLU on a gated MLP");
		m.ffn_relu = 0;
		/* gelu_new is a GeLU written as tensor ops: the flag
		 * without ffn_gelu contradicts itself */
		m.ffn_gelu = 0;
		m.ffn_gelu_new = 1;
		fx_model_fails(m, "ffn_gelu_new is a GeLU",
			   "gelu_new without ffn_gelu refused");
		m.ffn_gelu_new = 0;
		m.encoder_layers = -1;
		fx_model_fails(m, "encoder_layers", "negative encoder_layers");
	}

	/* A hybrid Mamba stack: Nemotron 3 Nano. */
	m = fx_nemotron_nano();
	is_int(model_check(&m, &e), GP_OK, "nemotron nano passes the check");
	is_int(model_mamba_layers(&m), 23, "23 Mamba layers");
	is_int(model_attn_layers(&m), 6, "6 attention layers");
	is_int(model_moe_layers(&m), 23, "23 MoE layers");
	is_int(model_moe_in(&m, 0, 6), 2, "MoE layers among the first 6 "
	       "(MEMEM*): 2");
	/* One Mamba layer (mamba_mixer.py), d_inner = 64 x 64 = 4096:
	 *   in_proj  2688 x (2 x 4096 + 2 x 8 x 128 + 64) = 2688 x 10304
	 *            = 27,697,152
	 *   conv1d   conv_dim 4096 + 2 x 8 x 128 = 6144: 6144 x 4 weights
	 *            + 6144 biases = 30,720
	 *   A_log, D, dt_bias 3 x 64 = 192; gated norm 4096
	 *   out_proj 4096 x 2688 = 11,010,048
	 * = 38,742,208 (the pre-norm is in the norms). */
	is_num(model_mamba_params(&m), 38742208.0, EXACT,
	       "one Mamba-2 layer's parameters");
	/* Whole model: embeddings 2 x 131072 x 2688 = 704,643,072
	 * (untied); attention 6 x (2688 x 4096 x 2 + 2 x 2688 x 256) =
	 * 6 x 23,396,352 = 140,378,112; experts 23 x (128 x 2 x 2688 x
	 * 1856 + 2 x 2688 x 3712) = 23 x 1,297,121,280 = 29,833,789,440;
	 * routers 23 x 2688 x 128 = 7,913,472; norms (52 + 1) x 2688 =
	 * 142,464; Mamba 23 x 38,742,208 = 891,070,784.  Total
	 * 31,577,937,344 (NVIDIA: "31.6B total"). */
	ok(model_params(&m, &p, &e) == GP_OK, "nemotron nano params");
	is_num(p.mamba, 891070784.0, EXACT, "23 Mamba layers");
	is_num(p.attention, 140378112.0, EXACT, "6 attention layers");
	is_num(p.norms, 142464.0, EXACT, "one norm a layer + the final");
	is_num(p.total, 31577937344.0, EXACT, "nemotron nano total");
	/* SSD scan per token at chunk Q 128, N 128, P 64, 8 groups, 64
	 * heads: 8 x 2 x 128 x 128 = 262,144 (C B^T) + 64 x (2 x 128 x 64
	 * + 4 x 128 x 64 + 2 x 128 x 64 / 128) = 64 x 49,280 = 3,153,920;
	 * 3,416,064.  A 64-token sequence is one chunk of 64: 8 x 2 x 64 x
	 * 128 + 64 x (2 x 64 x 64 + 4 x 128 x 64 + 2 x 128 x 64 / 64) =
	 * 131,072 + 2,637,824 = 2,768,896. */
	is_num(model_mamba_scan_flops(&m, 4096), 3416064.0, EXACT,
	       "SSD scan FLOP per token at chunk 128");
	is_num(model_mamba_scan_flops(&m, 64), 2768896.0, EXACT,
	       "SSD scan of a sequence shorter than a chunk");
	ok(model_mamba_scan_flops(&m, 0) == -1.0, "scan over 0 tokens -> -1");
	/* Forward FLOP per token at ctx 4096: 2 x matmul weights (6 x
	 * 23,396,352 attention + 23 x (2688 x 128 router + 6 x 9,977,856
	 * experts + 19,955,712 shared) + 23 x 2688 x (10304 + 4096) in/out
	 * projections + 131072 x 2688 logits = 3,226,804,224) + 23 scans
	 * x 3,416,064 + 6 attention layers x 2 x 2 x 4096 x 32 x 128 =
	 * 6,934,831,104. */
	is_num(model_fwd_flops_per_token(&m, 4096), 6934831104.0, EXACT,
	       "nemotron nano forward FLOP per token");
	/* KV: the 6 attention layers only, 2 x 6 x 2 x 128 x 2 B = 6144;
	 * the Mamba state 23 x 2 B x (64 x 64 x 128 + 3 x 6144) =
	 * 24,965,120 a sequence. */
	is_num(model_kv_bytes_per_token(&m, 2), 6144.0, EXACT,
	       "KV bytes: the attention layers only");
	is_num(model_mamba_state_bytes(&m, 2), 24965120.0, EXACT,
	       "Mamba state bytes per sequence");
	/* Saved for the backward a token a Mamba layer, bf16: 2 x (2 x
	 * 2688 norm input and output + 10304 zxbcdt + 3 x 4096 out_x, norm
	 * input, out_proj input) + 4 B x 8 groups' rstd = 2 x 27,968 + 32
	 * = 55,968 bytes. */
	is_num(model_mamba_act_bytes(&m, 2), 55968.0, EXACT,
	       "Mamba activation bytes per token per layer");
	{
		/* The op list of Nano's layers on one GPU of TP 2, one
		 * 4096-token sequence: each block tagged with its layer
		 * kind (M, *, - none here, E). */
		gp_op ops[GP_MAX_LAYER_OPS];
		gp_op_cfg oc;
		char names[512];
		int n, i, nm = 0, na = 0, ne = 0;

		memset(&oc, 0, sizeof oc);
		oc.seqs = 1;
		oc.q = 4096;
		oc.kv_len = 2048.5;
		oc.tp = 2;
		oc.ep = 1;
		oc.flash = 1;
		n = model_layer_ops(&m, &oc, ops);
		ok(strcmp(op_names(ops, n, names, sizeof names),
			  "attn_norm,qkv,rope_kv,attention,o_proj,mlp_norm,"
			  "moe_router,moe_up,moe_act,moe_down,mamba_norm,"
			  "in_proj,conv1d,ssd_scan,gate_norm,out_proj") == 0,
		   "nemotron nano layer ops: attention, MoE and Mamba");
		for (i = 0; i < n; i++) {
			nm += model_op_in(ops[i].scope, 'M', 1);
			na += model_op_in(ops[i].scope, '*', 1);
			ne += model_op_in(ops[i].scope, 'E', 1);
		}
		/* M: mamba_norm to out_proj; *: attn_norm to o_proj; E:
		 * mlp_norm and the four MoE ops. */
		ok(nm == 6 && na == 5 && ne == 5,
		   "each op belongs to its layer kind");
		/* in_proj: 10304 / 2 = 5152 wide over 2688; out_proj over
		 * d_inner / 2 = 2048. */
		is_num(ops[11].n, 5152.0, EXACT, "in_proj split over TP");
		is_num(ops[15].k, 2048.0, EXACT, "out_proj split over TP");
		/* conv1d: 4096 tokens x conv_dim / 2 = (4096 + 2 x 8 x 128)
		 * / 2 = 3072 channels = 12,582,912 outputs at 2 x 4 + 5 =
		 * 13 FLOP. */
		is_num(ops[12].flop, 13.0 * 12582912.0, EXACT,
		       "conv1d FLOP");
		/* ssd_scan: 4096 x 3,416,064 / 2 FLOP; elements a token at
		 * H 32, P 64, G 4, N 128, Q 128: 3 x 2048 + 4 x 4 x 128
		 * + 4 x 4 x 128 + 13 x 32 + 6 x 2048 x 128 / 128 = 22,944,
		 * x 4096 = 93,978,624. */
		is_num(ops[13].flop, 4096.0 * 3416064.0 / 2.0, EXACT,
		       "SSD scan FLOP on one TP rank");
		is_num(ops[13].act, 93978624.0, EXACT,
		       "SSD scan traffic on one TP rank");
		/* gate_norm reads y and z, writes its output: 3 x 4096 x
		 * 2048. */
		is_num(ops[14].act, 3.0 * 4096.0 * 2048.0, EXACT,
		       "gated norm traffic");
		/* A model without a pattern keeps its two kinds. */
		ok(model_op_in(GP_SCOPE_ALL, '-', 0) &&
		   model_op_in(GP_SCOPE_DENSE, '-', 0) &&
		   !model_op_in(GP_SCOPE_MOE, '-', 0) &&
		   model_op_in(GP_SCOPE_MOE, 'E', 0) &&
		   !model_op_in(GP_SCOPE_ALL, 'M', 1),
		   "dense and MoE layers of a plain model");
	}
	ok(model_check_priced(&m, &e) == GP_EINVAL &&
	   strstr(e.msg, "hybrid_pattern") != NULL,
	   "the step pricers refuse a hybrid stack, naming hybrid_pattern");
	m.pattern[3] = 'X';
	fx_model_fails(m, "unknown layer 'X' at letter 4",
		       "an unknown pattern letter refused");
	m = fx_nemotron_nano();
	m.layers = 50;
	fx_model_fails(m, "hybrid_pattern has 52 letters but layers is 50",
		       "pattern length != layers refused");
	m = fx_nemotron_nano();
	m.mamba.groups = 5;
	fx_model_fails(m, "mamba.groups (5) must divide mamba.heads (64)",
		       "groups not dividing heads refused");
	m = fx_nemotron_nano();
	memset(&m.mamba, 0, sizeof m.mamba);
	fx_model_fails(m, "Mamba layers (M) but the model has no mamba",
		       "M without a mamba table refused");
	m = fx_nemotron_nano();
	memset(&m.moe, 0, sizeof m.moe);
	fx_model_fails(m, "MoE layers (E) but the model has no moe",
		       "E without a moe table refused");
	/* A mamba table beside a pattern of no M: every Mamba layer
	 * made attention, the table unused (as moe without E). */
	m = fx_nemotron_nano();
	for (char *q = m.pattern; *q; q++)
		if (*q == 'M')
			*q = '*';
	fx_model_fails(m, "no Mamba layer (M) but the model has a mamba",
		       "a mamba table without M refused");

	m = fx_llama(32, 4096, 32, 32, 11008, 32000);
	is_int(model_check(&m, &e), GP_OK, "a good model passes the check");
	ok(model_fwd_flops_per_token(&m, NAN) == -1.0, "NaN ctx -> -1");
	ok(model_fwd_flops_per_token(&m, -1.0) == -1.0, "negative ctx -> -1");
	ok(model_kv_bytes_per_token(&m, 0.0) == -1.0, "0 bytes/elem -> -1");
	/* Nemotron-4 15B (NeMo Nemotron4Config15B, catalog nemotron4-15b):
	 * a plain MLP with squared ReLU (ffn_relu2), LayerNorm, GQA 48 / 8
	 * heads of 128, untied 256000-token embeddings, no biases. */
	{
		gp_op ops[GP_MAX_LAYER_OPS];
		gp_op_cfg oc;
		double act_flop, act_bytes;
		int n, i, at = -1;

		memset(&m, 0, sizeof m);
		m.layers = 32;
		m.hidden = 6144;
		m.heads = 48;
		m.kv_heads = 8;
		m.head_dim = 128;
		m.ffn_hidden = 24576;
		m.vocab = 256000;
		m.norm_params = 2 * 6144;
		m.ffn_relu2 = 1;
		is_int(model_check(&m, &e), GP_OK, "nemotron4-15b passes");
		/* Non-gated: one up projection.  A layer: q and o 2 x 6144^2
		 * = 75,497,472; k and v 2 x 6144 x 1024 = 12,582,912; up and
		 * down 2 x 6144 x 24576 = 301,989,888; two LayerNorms 2 x
		 * 12,288 = 24,576: 390,094,848, x 32 = 12,483,035,136.  Two
		 * embedding tables 2 x 256000 x 6144 = 3,145,728,000, the
		 * final norm 12,288: 15,628,775,424. */
		is_num(total(&m), 15628775424.0, EXACT,
		       "nemotron4-15b parameters (one up projection)");
		memset(&oc, 0, sizeof oc);
		oc.seqs = 1;
		oc.q = 8;
		oc.kv_len = 8;
		oc.tp = 1;
		oc.flash = 1;
		n = model_layer_ops(&m, &oc, ops);
		for (i = 0; i < n; i++)
			if (strcmp(ops[i].name, "mlp_act") == 0)
				at = i;
		ok(at > 0 && strcmp(ops[at - 1].name, "mlp_up") == 0,
		   "relu2: mlp_up then mlp_act");
		/* mlp_up over 8 tokens: 2 x 8 x 24576 x 6144 =
		 * 2,415,919,104 FLOP, the up projection only (no gate). */
		is_num(at > 0 ? ops[at - 1].flop : NAN, 2415919104.0, EXACT,
		       "relu2 MLP up: one projection");
		/* Squared ReLU over 8 x 24576 = 196,608 elements: max(x, 0)
		 * and its square, 2 FLOP each, 393,216; reads x and writes
		 * relu(x)^2, 2 elements each, 393,216. */
		act_flop = at > 0 ? ops[at].flop : NAN;
		act_bytes = at > 0 ? ops[at].act : NAN;
		is_num(act_flop, 393216.0, EXACT, "relu2: 2 FLOP an element");
		is_num(act_bytes, 393216.0, EXACT,
		       "relu2: one read, one write an element");
		/* The same MLP with the default activation keeps the 1.5
		 * elements a output at 5 FLOP: 5 x 1.5 x 196,608 =
		 * 1,474,560 FLOP, 2 x 1.5 x 196,608 = 589,824 elements. */
		m.ffn_relu2 = 0;
		n = model_layer_ops(&m, &oc, ops);
		is_num(at > 0 && at < n ? ops[at].flop : NAN, 1474560.0, EXACT,
		       "without relu2: 5 FLOP on 1.5 elements an output");
		is_num(at > 0 && at < n ? ops[at].act : NAN, 589824.0, EXACT,
		       "without relu2: 3 elements moved an output");
		m.ffn_relu2 = 1;
		m.ffn_gated = 1;
		fx_model_fails(m, "ffn_act 'relu2' applies to a plain MLP",
			       "squared ReLU on a gated MLP refused");
		m.ffn_gated = 0;
		m.ffn_gelu = 1;
		fx_model_fails(m, "name one activation each",
			       "relu2 and gelu together refused");
		m.ffn_gelu = 0;
		m.ffn_relu2 = 2;
		fx_model_fails(m, "ffn_relu2", "ffn_relu2 not 0 or 1 refused");
	}

	return done();
}
