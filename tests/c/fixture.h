/*
 * fixture.h - the round-number device, node and model the training and
 * sweep tests derive their expected values from, and the Llama-style
 * decoder the model tests build published architectures on (header-only).
 *
 * An A100-like part: 312 TFLOPS bf16 at 0.75, 19.5 fp32, no fp8, 2.039
 * TB/s at 0.85, 4 us launches (1 us in a graph), 108 SMs.  A Selene-like
 * node: 8 GPUs on NVLink at 300 GB/s per direction (0.8 achievable, 0.6 us,
 * NVLS off) and 8 NICs of 25 GB/s (HDR 200 Gb/s) at 0.9, 2.7 us.  A GPT of
 * Narayanan et al. 2021's shape: LayerNorm, GeLU MLP of 4h, MHA, tied
 * embeddings, no biases, so its parameters are 12 l h^2 + V h exactly.
 * Nemotron 3 Nano, the hybrid Mamba/attention/MoE stack the model and
 * hybrid-step tests count (fx_nemotron_nano).  And the model_check
 * refusal the model tests expect (fx_model_fails).  And the layer
 * activation config the recompute_modules tests count their saved bytes
 * under (fx_act_listed).
 */
#ifndef GP_TEST_FIXTURE_H
#define GP_TEST_FIXTURE_H

#include <stdio.h>
#include <string.h>

#include "comm.h"
#include "memory.h"
#include "model.h"
#include "roofline.h"
#include "tap.h"

static inline void fx_a100(roof_device *d)
{
	memset(d, 0, sizeof *d);
	d->peak[GP_BF16] = d->peak[GP_FP16] = 312e12;
	d->peak[GP_FP32] = 19.5e12;
	d->gemm_frac[GP_BF16] = d->gemm_frac[GP_FP16] = 0.75;
	d->mem_bw = 2.039e12;
	d->hbm_frac = 0.85;
	d->launch = 4e-6;
	d->graph_launch = 1e-6;
	d->sms = 108;
}

static inline gp_topo fx_selene(void)
{
	gp_topo t;

	comm_topo_init(&t, GP_LINK_NVLINK);
	t.gpus_per_node = 8;
	t.nodes = 1;
	t.up.bw = 300e9;
	t.up.latency = 0.6e-6;
	t.up.achievable = 0.8;
	t.nics = 8;
	t.nic.bw = 25e9;
	t.nic.latency = 2.7e-6;
	t.nic.achievable = 0.9;
	return t;
}

static inline gp_model fx_gpt(int l, int h, int a, int v)
{
	gp_model m;

	memset(&m, 0, sizeof m);
	m.layers = l;
	m.hidden = h;
	m.heads = a;
	m.kv_heads = a;
	m.head_dim = h / a;
	m.ffn_hidden = 4 * h;
	m.vocab = v;
	m.tied_embeddings = 1;
	m.norm_params = 2 * h;
	return m;
}

/* A Llama-style decoder: gated MLP, RMSNorm (one weight vector), no
 * biases, untied embeddings; kv_heads below heads for GQA. */
static inline gp_model fx_llama(int layers, int hidden, int heads,
				int kv_heads, int ffn, int vocab)
{
	gp_model m;

	memset(&m, 0, sizeof m);
	m.layers = layers;
	m.hidden = hidden;
	m.heads = heads;
	m.kv_heads = kv_heads;
	m.head_dim = hidden / heads;
	m.ffn_hidden = ffn;
	m.ffn_gated = 1;
	m.vocab = vocab;
	m.norm_params = hidden;	/* RMSNorm */
	return m;
}

/* NVIDIA Nemotron 3 Nano 30B-A3B (Megatron-Bridge Nemotron3NanoProvider
 * at 2c2425a): 52 layers, 23 Mamba-2 (M), 23 MoE (E), 6 attention (*);
 * the model and hybrid-step tests derive their counts from it. */
static inline gp_model fx_nemotron_nano(void)
{
	gp_model m;

	memset(&m, 0, sizeof m);
	m.layers = 52;
	m.hidden = 2688;
	m.heads = 32;
	m.kv_heads = 2;
	m.head_dim = 128;
	m.ffn_hidden = 1856;
	m.vocab = 131072;
	m.norm_params = 2688;
	strcpy(m.pattern, "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME");
	m.mamba.heads = 64;
	m.mamba.head_dim = 64;
	m.mamba.state = 128;
	m.mamba.groups = 8;
	m.mamba.conv = 4;
	m.mamba.chunk = 128;
	m.moe.experts = 128;
	m.moe.top_k = 6;
	m.moe.shared_experts = 1;
	m.moe.ffn_hidden = 1856;
	m.moe.shared_ffn_hidden = 3712;
	return m;
}

/* One TAP point: model_check refuses m with GP_EINVAL and a message that
 * contains needle; on a miss the code and message are printed as a
 * diagnostic.  Returns model_check's code. */
static inline int fx_model_fails(gp_model m, const char *needle,
				 const char *name)
{
	gp_error e;
	int rc;

	e.msg[0] = '\0';
	rc = model_check(&m, &e);
	if (!ok(rc == GP_EINVAL && strstr(e.msg, needle) != NULL, name))
		printf("#   rc %d, msg '%s', want '%s'\n", rc, e.msg, needle);
	return rc;
}

/* One sequence of 4096 tokens, TP 1, bf16 activations (A = 2), flash
 * attention, recompute selective with exactly the modules mods listed
 * (GP_RECMOD_LISTED: a stated list, which replaces selective's default
 * core_attn): the recompute_modules tests' layer config. */
static inline gp_act_cfg fx_act_listed(unsigned mods)
{
	gp_act_cfg c;

	memset(&c, 0, sizeof c);
	c.seq = 4096;
	c.micro_batch = 1;
	c.tp = 1;
	c.act_bytes = 2;
	c.flash = 1;
	c.recompute = GP_RECOMPUTE_SELECTIVE;
	c.recompute_modules = mods | GP_RECMOD_LISTED;
	return c;
}

#endif
