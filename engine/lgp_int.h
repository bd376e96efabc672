/*
 * lgp_int.h - what the Lua binding's files share (module gpuplan.core:
 * lgpuplan.c registers it): the Lua and kernel headers, the field
 * makers of the struct descriptions, the handles' metatable names, and
 * each file's readers, pushers and functions the others call.  Only
 * binding files (BIND_SRC) include it; kernels never see Lua.
 */
#ifndef GP_LGP_INT_H
#define GP_LGP_INT_H

#include "lauxlib.h"
#include "lua.h"

#include "lgp_field.h"

#include "common.h"
#include "memory.h"
#include "model.h"
#include "comm.h"
#include "infer.h"
#include "rl.h"
#include "roofline.h"
#include "serve.h"
#include "sweep.h"
#include "train.h"

int luaopen_gpuplan_core(lua_State *L);

/* Raise a kernel's refusal as a Lua error: prefix and err->msg.  A usage
 * refusal (err->usage, gp_usage) is recorded first with gpuplan.args'
 * usage, so the command line exits 2 on it; the error is the same string
 * either way (lgpuplan.c). */
int lgp_error(lua_State *L, const gp_error *err, const char *prefix);

/* The handles' metatables (lgp_model.c). */
#define LGP_MODEL "gpuplan.model"
#define LGP_DEVICE "gpuplan.device"
#define LGP_TOPO "gpuplan.topology"

/* Field makers: name, offset, default, range. */
#define F_INT(n, o, d, lo, hi) { n, LGP_F_INT, o, d, lo, hi, 0, NULL, NULL, NULL, NULL, NULL }
#define F_REQINT(n, o, lo, hi) { n, LGP_F_INT, o, 0, lo, hi, 1, NULL, NULL, NULL, NULL, NULL }
#define F_NUM(n, o, d) { n, LGP_F_NUM, o, d, -HUGE_VAL, HUGE_VAL, 0, NULL, NULL, NULL, NULL, NULL }
#define F_REQNUM(n, o) { n, LGP_F_NUM, o, 0, -HUGE_VAL, HUGE_VAL, 1, NULL, NULL, NULL, NULL, NULL }
#define F_BOOL(n, o, d) { n, LGP_F_BOOL, o, d, 0, 1, 0, NULL, NULL, NULL, NULL, NULL }
#define F_PARSE(n, o, fn, ds) { n, LGP_F_PARSE, o, 0, 0, 0, 0, NULL, fn, NULL, NULL, ds }
#define F_STORE(n, o, fn, ds) { n, LGP_F_STORE, o, 0, 0, 0, 0, NULL, fn, NULL, NULL, ds }
#define F_DTYPE(n, o, d) { n, LGP_F_DTYPE, o, d, 0, 0, 0, NULL, NULL, NULL, NULL, NULL }
#define F_SUB(n, o, sd) { n, LGP_F_SUB, o, 0, 0, 0, 0, NULL, NULL, sd, NULL, NULL }
#define F_REQSUB(n, o, sd) { n, LGP_F_SUB, o, 0, 0, 0, 1, NULL, NULL, sd, NULL, NULL }
#define F_CUSTOM(n, fn) { n, LGP_F_CUSTOM, 0, 0, 0, 0, 0, NULL, NULL, NULL, fn, NULL }
#define F_REQCUSTOM(n, fn) { n, LGP_F_CUSTOM, 0, 0, 0, 0, 1, NULL, NULL, NULL, fn, NULL }
#define F_IGNORE(n) { n, LGP_F_IGNORE, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL }
#define F_END { NULL, LGP_F_IGNORE, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL, NULL }
/* A kernel's name parser, fn(s, T *out, gp_error *err), as a PARSE
 * field's parse function. */
#define LGP_PARSER(name, fn, T)                                           \
	static int name(const char *s, void *out, void *err)              \
	{                                                                 \
		return fn(s, (T *)out, (gp_error *)err);                  \
	}
/* The memory reserve's overrides (gp_mem_reserve at member P of struct
 * S; an absent one keeps mem_reserve_default's): one list for
 * core.memory's reader and the inference config's. */
#define LGP_RESERVE_FIELDS(S, P)                                          \
	F_NUM("margin", offsetof(S, P margin), 0),                        \
	F_NUM("context", offsetof(S, P context), 0),                      \
	F_NUM("lib_workspace", offsetof(S, P workspace), 0),              \
	F_NUM("comm", offsetof(S, P comm), 0),                            \
	F_NUM("frag", offsetof(S, P frag), 0)
/* A quantized format's fields (gp_quant: bits, group, group_bits): one
 * list for core.memory's weights and an adapter's base in core.train.
 * fixed_group is gpuplan.memory's mark of a format whose group size is
 * its own (mxfp4's and fp6's 32), read and dropped: the engine prices the
 * group the table states. */
#define LGP_QUANT_FIELDS                                                  \
	F_REQNUM("bits", offsetof(gp_quant, bits)),                       \
	F_INT("group", offsetof(gp_quant, group), 0, 0, 2147483647.0),    \
	F_NUM("group_bits", offsetof(gp_quant, group_bits), 0),           \
	F_IGNORE("fixed_group")
/* A result's field for lgp_push: its Lua name, the struct and member. */
#define O_NUM(n, S, m) F_NUM(n, offsetof(S, m), 0)
#define O_INT(n, S, m) F_INT(n, offsetof(S, m), 0, 0, 0)
/* A result's count held in a double (lgp_pushcount). */
#define O_CNT(n, S, m) { n, LGP_F_COUNT, offsetof(S, m), 0, -HUGE_VAL, HUGE_VAL, 0, NULL, NULL, NULL, NULL, NULL }
#define O_BOOL(n, S, m) F_BOOL(n, offsetof(S, m), 0)

/* ---- lgp_arg.c ---- */

int lgp_get(lua_State *L, int idx, const char *key);

double lgp_field_num(lua_State *L, int idx, const char *what,
		     const char *key, int required, double def);

int lgp_field_int(lua_State *L, int idx, const char *what,
		  const char *key, int required, int def, int lo);

int lgp_field_bool(lua_State *L, int idx, const char *what,
		   const char *key, int def);

int lgp_subtable(lua_State *L, int idx, const char *what,
		 const char *key);

int lgp_field_option(lua_State *L, int idx, const char *what,
		     const char *key, const char *const opts[],
		     const char *expect);

gp_dtype lgp_field_dtype(lua_State *L, int idx, const char *what,
			 const char *key, gp_dtype def);

void lgp_setnum(lua_State *L, const char *key, double v);

void lgp_setint(lua_State *L, const char *key, lua_Integer v);

/* A count held in a double, as lgp_pushcount pushes it. */
void lgp_setcount(lua_State *L, const char *key, double v);

void lgp_setstr(lua_State *L, const char *key, const char *v);

void lgp_setbool(lua_State *L, const char *key, int v);

/* ---- lgp_model.c ---- */

void lgp_tomodel(lua_State *L, int idx, gp_model *m);

int lgp_model_params(lua_State *L);

int lgp_model_flops(lua_State *L);

int lgp_model_vision(lua_State *L);

int lgp_model_kv(lua_State *L);

int lgp_model_cross_kv(lua_State *L);
int lgp_model_mamba(lua_State *L);

void lgp_totopo(lua_State *L, int idx, gp_topo *t);

int lgp_comm_cost(lua_State *L);

void lgp_todevice(lua_State *L, int idx, roof_device *d);

void lgp_pushroof(lua_State *L, const roof_result *r);

int lgp_roof_op(lua_State *L);

int lgp_roof_ridge(lua_State *L);

int lgp_model_handle(lua_State *L);

int lgp_device_handle(lua_State *L);

int lgp_topo_handle(lua_State *L);

/* ---- lgp_desc.c ---- */

extern const lgp_desc lgp_recipe_desc;
extern const lgp_desc lgp_optim_desc;
extern const lgp_desc lgp_mem_train_desc;
extern const lgp_desc lgp_train_desc;
extern const lgp_desc lgp_step_desc;
extern const lgp_desc lgp_rl_step_desc;
void lgp_step_batches(lua_State *L, int arg, double batch, double global,
		      double job_batch, double job_global);

/* ---- lgp_memory.c ---- */

const char *lgp_field_str(lua_State *L, int idx, const char *what,
			  const char *key, const char *def);

void lgp_pushmem(lua_State *L, const gp_mem_result *r);

int lgp_memory(lua_State *L);

int lgp_state_bytes(lua_State *L);

/* ---- lgp_serve.c ---- */

int lgp_infer_wformat(lua_State *L);

int lgp_infer_cdtype(lua_State *L);

int lgp_infer(lua_State *L);

int lgp_infer_gpus_for(lua_State *L);

int lgp_cost_per_mtok(lua_State *L);

int lgp_heads_tp_ok(lua_State *L);

int lgp_serve(lua_State *L);

int lgp_serve_target(lua_State *L);

int lgp_serve_accept(lua_State *L);
int lgp_serve_redundant(lua_State *L);
int lgp_host_share(lua_State *L);
int lgp_host_bw_each(lua_State *L);

int lgp_zero_group_gpus(lua_State *L);
int lgp_hsdp_experts_ok(lua_State *L);
int lgp_ulysses_refusal(lua_State *L);

/* An inference engine's config at idx (core.infer's third argument) into
 * c, its TP topology into t; core.rl reads its rollout engine with it. */
void lgp_toserve(lua_State *L, int idx, infer_cfg *c, gp_topo *t);

/* ---- lgp_rl.c ---- */

int lgp_torlcfg(lua_State *L, int idx, rl_cfg *c, gp_topo *rt,
		gp_model own[2], gp_stage_store *st);
void lgp_pushrl(lua_State *L, const rl_result *out);
int lgp_rl(lua_State *L);
int lgp_rl_job(lua_State *L);
void lgp_rl_handle_types(lua_State *L);

/* ---- lgp_train.c ---- */

/* A training-step config at idx into c, its stage list's entries
 * into *st (layout.h gp_stage_store: the caller keeps it while c, or a
 * copy of c, is used). */
void lgp_totraincfg(lua_State *L, int idx, train_cfg *c,
		    gp_stage_store *st);

void lgp_pushtrain(lua_State *L, const train_result *r);

int lgp_train(lua_State *L);

int lgp_sweep(lua_State *L);

int lgp_train_job(lua_State *L);

void lgp_tofusion(lua_State *L, int idx, int given, int fusion[2]);
/* A training or rl job's Lua functions, kept in its user value slots
 * (lgp_set_job_fn). */
enum { LGP_JOB_REFUSAL = 1, LGP_JOB_SHARDING = 2, LGP_JOB_STAGE_LIST = 3,
       LGP_JOB_FNS = 3 };
void lgp_set_job_fn(lua_State *L, int job, int idx, int slot);
void lgp_job_refusal(lua_State *L, int job, const train_cfg *c);
void lgp_job_sharding(lua_State *L, int job, int step, train_cfg *c);
void lgp_job_stage_list(lua_State *L, int job, int step);
int lgp_job_zero_group_arg(lua_State *L, int idx);
void lgp_job_zero_group(lua_State *L, int n, gp_layout *y);

void lgp_handle_types(lua_State *L);

#endif
