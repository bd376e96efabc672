/*
 * lfield.c - one reader for every struct the binding fills (see lfield.h).
 */
#include "lfield.h"

#include <math.h>
#include <string.h>

#include "lauxlib.h"

#include "common.h"

#define AT(dst, off, type) ((type *)(void *)((char *)(dst) + (off)))

/* Raise msg as an error of argument arg (or plainly when arg is 0). */
static int fail(lua_State *L, int arg, const char *msg)
{
	if (arg > 0)
		return luaL_argerror(L, arg, msg);
	return luaL_error(L, "%s", msg);
}

/* The name -> index table of a description, built once and kept in the
 * registry under the description's address; pushed. */
static void lookup(lua_State *L, const lgp_desc *d)
{
	int i;

	if (lua_rawgetp(L, LUA_REGISTRYINDEX, d) == LUA_TTABLE)
		return;
	lua_pop(L, 1);
	lua_newtable(L);
	for (i = 0; d->fields[i].name; i++) {
		lua_pushinteger(L, i);
		lua_setfield(L, -2, d->fields[i].name);
	}
	lua_pushvalue(L, -1);
	lua_rawsetp(L, LUA_REGISTRYINDEX, d);
}

static void set_default(lua_State *L, int arg, const lgp_desc *d,
			const lgp_field *f, void *dst)
{
	gp_error err;

	switch (f->type) {
	case LGP_F_INT:
	case LGP_F_BOOL:
	case LGP_F_NAME:
		*AT(dst, f->off, int) = (int)f->def;
		break;
	case LGP_F_NUM:
		*AT(dst, f->off, double) = f->def;
		break;
	case LGP_F_DTYPE:
		*AT(dst, f->off, gp_dtype) = (gp_dtype)(int)f->def;
		break;
	case LGP_F_PARSE:
		if (f->def_str && f->parse(f->def_str, AT(dst, f->off, void),
					   &err))
			fail(L, arg, lua_pushfstring(L, "%s.%s: %s", d->what,
						     f->name, err.msg));
		break;
	case LGP_F_SUB:
		/* the sub-struct keeps what the caller zeroed */
	case LGP_F_CUSTOM:
	case LGP_F_IGNORE:
		break;
	}
}

/* The value at the top of the stack into field f of dst. */
static void read_value(lua_State *L, int arg, const lgp_desc *d,
		       const lgp_field *f, void *dst, int mode)
{
	int t = lua_type(L, -1);
	double v;
	gp_error err;

	switch (f->type) {
	case LGP_F_INT:
	case LGP_F_NUM:
		if (t != LUA_TNUMBER)
			fail(L, arg, lua_pushfstring(L, "%s.%s must be a "
				"number (got %s)", d->what, f->name,
				lua_typename(L, t)));
		v = lua_tonumber(L, -1);
		if (!gp_finite(v))
			fail(L, arg, lua_pushfstring(L, "%s.%s must be finite",
						     d->what, f->name));
		if (f->type == LGP_F_INT && (v != floor(v) || v < f->lo ||
					     v > f->hi))
			fail(L, arg, lua_pushfstring(L, "%s.%s must be an "
				"integer in %d..%d (got %f)", d->what, f->name,
				(int)f->lo, (int)f->hi, (lua_Number)v));
		if (f->type == LGP_F_NUM && (v < f->lo || v > f->hi))
			fail(L, arg, lua_pushfstring(L, "%s.%s must be in "
				"[%f, %f] (got %f)", d->what, f->name,
				(lua_Number)f->lo, (lua_Number)f->hi,
				(lua_Number)v));
		if (f->type == LGP_F_INT)
			*AT(dst, f->off, int) = (int)v;
		else
			*AT(dst, f->off, double) = v;
		break;
	case LGP_F_BOOL:
		if (t != LUA_TBOOLEAN)
			fail(L, arg, lua_pushfstring(L, "%s.%s must be a "
				"boolean (got %s)", d->what, f->name,
				lua_typename(L, t)));
		*AT(dst, f->off, int) = lua_toboolean(L, -1);
		break;
	case LGP_F_NAME: {
		const char *s = t == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
		int k;

		for (k = 0; s && f->names[k]; k++)
			if (strcmp(s, f->names[k]) == 0)
				break;
		if (!s || !f->names[k]) {
			luaL_Buffer b;

			luaL_buffinit(L, &b);
			for (k = 0; f->names[k]; k++) {
				if (k)
					luaL_addstring(&b, ", ");
				luaL_addstring(&b, f->names[k]);
			}
			luaL_pushresult(&b);
			fail(L, arg, lua_pushfstring(L, "%s.%s must be one of "
				"%s", d->what, f->name, lua_tostring(L, -1)));
		}
		*AT(dst, f->off, int) = k;
		break;
	}
	case LGP_F_PARSE:
		if (t != LUA_TSTRING)
			fail(L, arg, lua_pushfstring(L, "%s.%s must be a "
				"string (got %s)", d->what, f->name,
				lua_typename(L, t)));
		if (f->parse(lua_tostring(L, -1), AT(dst, f->off, void), &err))
			fail(L, arg, lua_pushfstring(L, "%s", err.msg));
		break;
	case LGP_F_DTYPE: {
		gp_dtype p;

		if (t != LUA_TSTRING)
			fail(L, arg, lua_pushfstring(L, "%s.%s must be a "
				"string (got %s)", d->what, f->name,
				lua_typename(L, t)));
		if (gp_dtype_parse(lua_tostring(L, -1), &p) != GP_OK)
			fail(L, arg, lua_pushfstring(L, "%s.%s: unknown "
				"precision '%s'", d->what, f->name,
				lua_tostring(L, -1)));
		*AT(dst, f->off, gp_dtype) = p;
		break;
	}
	case LGP_F_SUB:
		/* false reads as absent (a flag that turns the part off) */
		if (t == LUA_TBOOLEAN && !lua_toboolean(L, -1))
			break;
		if (t != LUA_TTABLE)
			fail(L, arg, lua_pushfstring(L, "%s.%s must be a table "
				"(got %s)", d->what, f->name,
				lua_typename(L, t)));
		lgp_read(L, lua_gettop(L), arg, f->sub, AT(dst, f->off, void),
			 mode | LGP_DEFAULTS);
		break;
	case LGP_F_CUSTOM: {
		int vi = lua_gettop(L);
		const char *path = lua_pushfstring(L, "%s.%s", d->what,
						   f->name);

		f->custom(L, vi, dst, path);
		lua_pop(L, 1);
		break;
	}
	case LGP_F_IGNORE:
		break;
	}
}

void lgp_read(lua_State *L, int idx, int arg, const lgp_desc *d, void *dst,
	      int mode)
{
	unsigned long long seen = 0;
	int i, lt, top = lua_gettop(L);

	idx = lua_absindex(L, idx);
	if (lua_type(L, idx) != LUA_TTABLE)
		fail(L, arg, lua_pushfstring(L, "%s: expected a table (got "
					     "%s)", d->what,
					     luaL_typename(L, idx)));
	if (mode & LGP_DEFAULTS)
		for (i = 0; d->fields[i].name; i++)
			set_default(L, arg, d, &d->fields[i], dst);
	lookup(L, d);
	lt = lua_gettop(L);
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		/* key at -2, value at -1 */
		if (lua_type(L, -2) != LUA_TSTRING) {
			if (mode & LGP_STRICT)
				fail(L, arg, lua_pushfstring(L, "%s: field "
					"names are strings (got %s)", d->what,
					luaL_typename(L, -2)));
			lua_pop(L, 1);
			continue;
		}
		lua_pushvalue(L, -2);
		if (lua_rawget(L, lt) != LUA_TNUMBER) {
			lua_pop(L, 1);
			if (mode & LGP_STRICT)
				fail(L, arg, lua_pushfstring(L, "%s: unknown "
					"field '%s'", d->what,
					lua_tostring(L, -2)));
			lua_pop(L, 1);
			continue;
		}
		i = (int)lua_tointeger(L, -1);
		lua_pop(L, 1);
		if (i < 64)
			seen |= 1ULL << i;
		read_value(L, arg, d, &d->fields[i], dst, mode);
		lua_pop(L, 1);       /* the value; the key stays for lua_next */
	}
	for (i = 0; d->fields[i].name; i++)
		if (d->fields[i].required && (i >= 64 || !(seen >> i & 1)))
			fail(L, arg, lua_pushfstring(L, "%s.%s is required",
						     d->what,
						     d->fields[i].name));
	lua_settop(L, top);
}
