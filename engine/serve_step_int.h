/*
 * serve_step_int.h - what the files of the serving step share: the step
 * under construction (sx), one layer's times as the two-batch overlap
 * sees them (blk), and the operator rows and collectives the layers are
 * built from.  serve_row.c prices rows on the roofline, serve_a2a.c the
 * TP collectives and the EP all-to-all, serve_step.c assembles layers and
 * the step.  Internal to the engine; the contract is serve.h.
 */
#ifndef GP_SERVE_STEP_INT_H
#define GP_SERVE_STEP_INT_H

#include "serve.h"
#include "serve_int.h"

/* Activations in flight are bf16. */
#define SX_ACT 2.0

/* Fixed cost of one DeepEP low-latency dispatch or combine call: kernel
 * launch, the RDMA/NVLink round trip of the count and flag exchange and
 * the receivers' polling.  Derived from DeepEP's legacy table (H800,
 * 128 tokens per GPU, hidden 7168, top-8, fp8 dispatch, bf16 combine):
 * at EP8 every byte crosses NVLink (160 GB/s per direction on H800 at
 * the catalog's 0.80 of 200); dispatch 6.62 MB remote in 77 us and
 * combine 12.85 MB in 114 us leave 35.6 and 33.7 us beside the bytes at
 * that rate: 35 us.  The same 35 us + remote bytes at the NDR NIC's 47
 * GB/s reproduces the table's EP16..EP256 rows within 3% for dispatch
 * and 11% for combine (tests/c/t_serve.c), so the low-latency kernels
 * run at the links' achievable rates and no efficiency factor is added.
 * The normal kernels' latency was not published; the same floor is
 * used (their transfers are megabytes, where it is small). */
#define DEEPEP_LAT 35e-6

typedef struct sx {
	const gp_model *m;
	const roof_device *d;
	const serve_cfg *c;
	const serve_layout *Ly;
	gp_topo t;
	shp s;
	gp_error *err;
	int graphs;
	gp_dtype cp, half, ap;
	gp_dtype xcp;        /* the routed experts' GEMM precision */
	serve_step *st;      /* rows go here (NULL: none) */
	double passes;       /* micro-batch passes the rows stand for */
	double m_tile;       /* M tile of the sub-16-bit weight GEMMs
	                        (serve_cfg.m_tile; roofline.h) */
	double m_tile_grouped; /* the masked grouped GEMM's
	                        (serve_cfg.m_tile_grouped) */
	double bf16_x;       /* the rows' roof_op.bf16_x: set for the
	                        weight-only GEMMs (sx_wo_x) and the routed
	                        experts' fp8 GEMMs (serve_cfg.moe_fp8_
	                        bf16_x) alone, else 0 */
	double stream;       /* the rows' roof_op.stream: set for the
	                        weight-only GEMMs (sx_wo_stream) alone,
	                        else 0 */
	double dequant;      /* the rows' roof_op.dequant and dequant_rep:
	                        set for the routed experts of a kernel that
	                        widens their weights in each M block
	                        (serve_cfg.moe_upcast) alone, else 0 */
	double dequant_rep;
	double mix;          /* prompt tokens of a chunk one attention group
	                        carries in this decode step (serve_mixed_
	                        time); 0: none */
	double mix_bg;       /* with mix: the decodes' sequences in the
	                        attention group */
} sx;

/* Per layer (one pass of one micro-batch), split as the stages of the
 * two-batch overlap see it (pass()). */
typedef struct blk {
	double prep;         /* s, attention up to its core: norm, the q/kv
	                        projections, rope (every layer) */
	double core;         /* s, attention core, output projection, MLP
	                        norm (every layer) */
	double dense;        /* s, dense MLP */
	double gate;         /* s, router, top-k (and the prefill dispatch's
	                        fp8 cast) */
	double shared;       /* s, shared experts */
	double routed;       /* s, routed experts and their permutation */
	double down;         /* s, of which the down GEMM */
	double attn;         /* s, of core, the attention kernels */
	double outer;        /* s, embed, norm, logits, sample */
	double proj;         /* s, the MTP projection (draft passes) */
	double tp_dense, tp_moe; /* s, TP collectives per layer */
	double disp, comb;   /* s, all-to-all per MoE layer */
	double hdisp, hcomb; /* s, of which the NVLink copies the low-
	                        latency kernels make with their own SMs */
	double dbytes, cbytes, remote;
} blk;

/* Price an operator row (count per micro-batch pass, flop, bytes, GEMM
 * shape mm x n x k, nb of them, precision prec, M tile mt; 0 = the
 * library's) on the roofline: *t its time, s, and the row recorded in
 * x->st while there is room.  GP_OK or GP_EINVAL (x->err). */
int sx_row_mt(sx *x, const char *name, double count, double flop,
              double bytes, double mm, double n, double k, double nb,
              gp_dtype prec, double mt, double *t);
/* sx_row_mt for the routed experts' grouped GEMM: nb experts, mm the
 * mean of their rows, which vary per expert (roof_op.spread). */
int sx_row_experts(sx *x, const char *name, double count, double flop,
                   double bytes, double mm, double n, double k, double nb,
                   gp_dtype prec, double mt, double *t);
/* sx_row_mt with the library's M tile. */
int sx_row(sx *x, const char *name, double count, double flop,
           double bytes, double mm, double n, double k, double nb,
           gp_dtype prec, double *t);
/* The M tile of a GEMM over weights of wbytes bytes each. */
double sx_tile(const sx *x, double wbytes);
/* The multiple of the 16-bit rate a GEMM over weights of wbytes each
 * computing in prec runs at (roof_op.bf16_x): the runtime's weight-only
 * kernel's (infer_cfg.wo_bf16_x, vLLM's Marlin) where the weights are
 * stored below 16 bits and multiplied in 16; 0 (the library's) else. */
double sx_wo_x(const sx *x, gp_dtype prec, double wbytes);
double sx_lin_x(const sx *x, gp_dtype prec, double wbytes);
/* The fraction of the streaming copy at which the same weight-only
 * kernel reads those weights (roof_op.stream): gp.infer's rule
 * (infer_cfg.wo_stream, set by lua/gpuplan/infer.lua M.wo_stream_of),
 * for the routed experts (experts 1) in a format of their own
 * serve_cfg.expert_wo_stream; 0 (the device's rate) else. */
double sx_wo_stream(const sx *x, gp_dtype prec, double wbytes, int experts);
/* A T x n x k GEMM over weights of wbytes bytes each. */
int sx_gemm(sx *x, const char *name, double count, double T, double n,
            double k, double wbytes, double *t);
/* nb GEMMs of T x n x k over 16-bit weights. */
int sx_bmm16(sx *x, const char *name, double count, double nb,
             double T, double n, double k, double *t);
/* The cast of elems bf16 activations to the GEMMs' input format; *t = 0
 * at 16 bits. */
int sx_quant(sx *x, const char *name, double count, double elems,
             double *t);
/* The fused attention core (mm x n over k keys, nb of them; causal_q
 * the causal prompt's tokens, 0 for decode). */
int sx_attn_row(sx *x, const char *name, double count, double flop,
                double bytes, double mm, double n, double k, double nb,
                double causal_q, double *t);

/* The hottest GPU's routed tokens / the mean in a step routing Tr tokens
 * per GPU (serve_step.c). */
double sx_imbalance(const sx *x, double Tr);

/* A collective of `bytes` on `ranks` GPUs filling nodes in order: *t, s. */
int sx_coll(sx *x, gp_coll op, double bytes, double ranks, double *t);
/* One dispatch or combine of `tokens` x top_k rows of hidden x elem bytes
 * per GPU: *t, s, the logical and the remote bytes, and *held, s, the
 * part of *t the kernel's SMs spend copying over NVLink (low-latency
 * kernels; 0 otherwise). */
int sx_a2a(sx *x, double tokens, double elem, int decode, double *t,
           double *logical, double *remote, double *held);
/* The TP collectives of a dense and a MoE layer into b->tp_dense,
 * b->tp_moe. */
int sx_ar_fused(const sx *x, double Tg);
int sx_tp_colls(sx *x, double Tg, double Tinst, blk *b);

#endif
