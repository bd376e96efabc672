/*
 * lfield.h - the binding's struct descriptions: each C struct the Lua side
 * fills is described once as a table of fields (name, type, offset,
 * default, range), and one reader fills any of them from a Lua table,
 * rejecting what it does not know -- as wrk's script.c describes the
 * structs it pushes.  Binding-side (includes lua.h); the kernels never
 * see it.
 */
#ifndef GP_LFIELD_H
#define GP_LFIELD_H

#include <stddef.h>

#include "lua.h"

typedef enum lgp_ftype {
	LGP_F_INT,       /* int in [lo, hi] */
	LGP_F_NUM,       /* finite double in [lo, hi] */
	LGP_F_BOOL,      /* int 0 or 1 from a boolean */
	LGP_F_NAME,      /* int: the index of a string in names[] */
	LGP_F_PARSE,     /* a string through parse(s, dst, err) */
	LGP_F_DTYPE,     /* gp_dtype from its name */
	LGP_F_SUB,       /* a nested table, read by the sub-description */
	LGP_F_CUSTOM,    /* read by custom(L, value index, dst, path) */
	LGP_F_IGNORE     /* known and not read here (another reader's) */
} lgp_ftype;

typedef int (*lgp_parse_fn)(const char *s, void *out, void *err);
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
	lgp_parse_fn parse;      /* PARSE */
	const struct lgp_desc *sub; /* SUB */
	lgp_custom_fn custom;    /* CUSTOM */
	const char *def_str;     /* PARSE: the default's text (NULL: none) */
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

#endif
