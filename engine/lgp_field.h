/*
 * lgp_field.h - the binding's struct descriptions: each C struct the Lua side
 * fills is described once as a table of fields (name, type, offset,
 * default, range), and one reader fills any of them from a Lua table,
 * rejecting what it does not know -- as wrk's script.c describes the
 * structs it pushes.  Binding-side (includes lua.h); the kernels never
 * see it.
 */
#ifndef GP_LGP_FIELD_H
#define GP_LGP_FIELD_H

#include <stddef.h>

#include "lua.h"

typedef enum lgp_ftype {
	LGP_F_INT,       /* int in [lo, hi] */
	LGP_F_NUM,       /* finite double in [lo, hi] */
	LGP_F_COUNT,     /* a double that counts (micro-batches, sequences):
	                    read as NUM, pushed as an integer while whole
	                    (lgp_pushcount) */
	LGP_F_BOOL,      /* int 0 or 1 from a boolean */
	LGP_F_NAME,      /* int: the index of a string in names[] */
	LGP_F_PARSE,     /* a string through parse(s, dst, err) */
	LGP_F_STORE,     /* a string through parse(s, lgp_store_out *,
	                    err): into dst, its data kept in the store
	                    the reader's caller owns (lgp_read_store) */
	LGP_F_DTYPE,     /* gp_dtype from its name */
	LGP_F_SUB,       /* a nested table, read by the sub-description */
	LGP_F_CUSTOM,    /* read by custom(L, value index, dst, path) */
	LGP_F_IGNORE     /* known and not read here (another reader's) */
} lgp_ftype;

typedef int (*lgp_parse_fn)(const char *s, void *out, void *err);
/* What a STORE field's parse is given as out: the value in the struct,
 * and the caller's storage for what the value points at (NULL: none,
 * which a parser may refuse). */
typedef struct lgp_store_out {
	void *store;
	void *out;
} lgp_store_out;
typedef void (*lgp_custom_fn)(lua_State *L, int vidx, void *dst,
			      const char *path);

typedef struct lgp_field {
	const char *name;
	lgp_ftype type;
	size_t off;              /* of the value in the struct */
	double def;              /* default (INT, NUM, BOOL, NAME) */
	double lo, hi;           /* range (INT, NUM) */
	int required;            /* 1: absent is an error */
	const char *const *names;/* NAME: the accepted strings, NULL-ended */
	lgp_parse_fn parse;      /* PARSE, STORE */
	const struct lgp_desc *sub; /* SUB */
	lgp_custom_fn custom;    /* CUSTOM */
	const char *def_str;     /* PARSE, STORE: the default's text (NULL:
				  * none) */
} lgp_field;

typedef struct lgp_desc {
	const char *what;        /* "train", "model.moe" ... for messages */
	const lgp_field *fields; /* ended by a NULL name */
} lgp_desc;

/* Reading modes. */
enum {
	LGP_DEFAULTS = 1,        /* start from every field's default */
	LGP_STRICT = 2           /* an unknown key is an error */
};

/* Fill dst from the table at idx as desc describes it.  Errors (a bad
 * value, a missing required field, with LGP_STRICT an unknown key) are
 * raised as luaL_argerror on argument arg ("bad argument #4 to 'train'
 * (unknown field 'tpp')"), or as a plain error when arg is 0. */
void lgp_read(lua_State *L, int idx, int arg, const lgp_desc *desc,
	      void *dst, int mode);
/* lgp_read with the storage its STORE fields keep their data in (a
 * stage list's entries, layout.h gp_stage_store: the caller keeps it as
 * long as dst points into it), passed on to its sub-descriptions;
 * lgp_read gives none. */
void lgp_read_store(lua_State *L, int idx, int arg, const lgp_desc *desc,
		    void *dst, int mode, void *store);

/* The table at idx, when it inherits (setmetatable(o, {__index =
 * base})), replaced there by one plain table of its keys and its
 * chain's, nearest first -- the rule by which gp.X{...} reads an options
 * table (lua/gpuplan/init.lua, flattened) -- for a reader that walks raw
 * keys (lgp_read) called from a script directly: job:step(layout).  An
 * __index function, whose keys cannot be listed, stays the copy's
 * __index.  A plain table, or anything else, is left as it is. */
void lgp_flat(lua_State *L, int idx);

/* Push the fields of src that d describes into the table on top of the
 * stack, each under its name: the way back of lgp_read, so a result
 * reaches Lua under the one name its description gives (INT as an
 * integer, NUM as a number, COUNT as lgp_pushcount pushes it, BOOL as a
 * boolean, NAME as names[value]);
 * other types are left to the caller. */
void lgp_push(lua_State *L, const lgp_desc *d, const void *src);
/* Push field f of src alone, as lgp_push sets it (nil for a type it
 * leaves to the caller). */
void lgp_push_value(lua_State *L, const lgp_field *f, const void *src);
/* A count held in a double, pushed as Lua sees a count: an integer
 * (tostring 16, not 16.0, as gpus and tp are) while it is whole and
 * exact (|v| < 2^53), else the number it is (an interleaved schedule's
 * 5.5 micro-batches in flight). */
void lgp_pushcount(lua_State *L, double v);

/* A result handle's __index: a loop reads fields by the million, so a
 * name is looked up in a table built once rather than compared one by
 * one.  lgp_push_names pushes that table: each field of the NULL-ended
 * list of field arrays under its name (the caller may add entries of its
 * own: methods, computed fields).  lgp_index_field looks the key at
 * stack index 2 up in the table at index names: a field is returned, its
 * value not pushed (lgp_push_value pushes it); any other entry is left
 * on the stack and NULL returned; a name not there raises "<what>: no
 * field 'name' (<hint>)". */
void lgp_push_names(lua_State *L, const lgp_field *const *tables);

/* Sets the __newindex of the metatable on the stack's top: a handle
 * (a job, a step result) is read-only, and an assignment raises
 * "<what>: read-only (<hint>)" -- Lua's own answer was "attempt to
 * index a gpuplan.train_result value", which names neither the handle
 * nor what to do. */
void lgp_set_readonly(lua_State *L, const char *what, const char *hint);
const lgp_field *lgp_index_field(lua_State *L, int names, const char *what,
				 const char *hint);

/* Strictness for readers that fetch keys one by one: lgp_mark notes that
 * key of the table at idx is one its reader takes (lgp_read notes every
 * key its description knows); lgp_strict then refuses the first key, by
 * name, that no reader noted -- "model: unknown field 'hiddn' (did you
 * mean 'hidden'?)" -- as luaL_argerror on arg (a plain error when arg is
 * 0), and forgets the notes.  A key that begins with '_' is the Lua
 * side's own (the catalog loader's _file, _line ...) and never refused.
 * The notes live in one C buffer in the registry, keyed by the table's
 * address (not a reference: the table may be collected and its address
 * reused, hence lgp_forget below). */
void lgp_mark(lua_State *L, int idx, const char *key);
void lgp_strict(lua_State *L, int idx, int arg, const char *what);
/* The notes of the table at idx dropped unjudged.  A read that raises
 * (under pcall) leaves its notes behind: on the table, and on its address
 * once the table is collected, where a later table would take another
 * reader's names as its own (an infer config's weight_bits accepted in a
 * memory config).  Each reader that judges a table forgets it before its
 * first read of it. */
void lgp_forget(lua_State *L, int idx);
/* lgp_mark of every field name of d. */
void lgp_mark_desc(lua_State *L, int idx, const lgp_desc *d);

/* The name of names[0..n) a user most likely meant by key, or NULL: the
 * nearest within two edits and fewer than the key's length, else the
 * longest name that begins one of the key's words -- the rule of
 * lua/gpuplan/args.lua's nearest, ties to the earlier name. */
const char *lgp_nearest(const char *key, const char *const *names, int n);

#endif
