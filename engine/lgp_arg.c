/*
 * lgp_arg.c - reading a Lua argument and writing a result: a
 * table's field checked as a number, integer, boolean, option or dtype
 * (the key noted for lgp_strict), a sub-table, and a result table's
 * fields set.  Every binding file reads and answers through these.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "lgp_int.h"

/* ---- helpers ---- */

/* t[key] of the table at idx pushed (lua_getfield), the key noted as one
 * this reader takes: lgp_strict refuses the keys no reader noted. */
int lgp_get(lua_State *L, int idx, const char *key)
{
	lgp_mark(L, idx, key);
	return lua_getfield(L, idx, key);
}

/* Read t[key] (table at idx) as a number; absent -> def (when !required).
 * Raises "<what>.<key> must be ..." on a wrong type, NaN or infinity. */
double lgp_field_num(lua_State *L, int idx, const char *what,
		     const char *key, int required, double def)
{
	double v;
	int t = lgp_get(L, idx, key);

	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		if (required)
			return luaL_error(L, "%s.%s is required", what, key);
		return def;
	}
	if (t != LUA_TNUMBER) {
		return luaL_error(L, "%s.%s must be a number (got %s)", what,
				  key, lua_typename(L, t));
	}
	v = lua_tonumber(L, -1);
	lua_pop(L, 1);
	if (!gp_finite(v))
		return luaL_error(L, "%s.%s must be finite", what, key);
	return v;
}

/* Integer field in [lo, INT_MAX]; absent -> def unless required. */
int lgp_field_int(lua_State *L, int idx, const char *what,
		  const char *key, int required, int def, int lo)
{
	double v = lgp_field_num(L, idx, what, key, required, (double)def);

	/* lua_pushfstring knows %f (a lua_Number, "%.14g"), not %g: with
	 * %g every out-of-range count raised "invalid option '%g' to
	 * 'lua_pushfstring'" instead of naming the field. */
	if (v == floor(v) && v > 2147483647.0 && v < 9e15)
		return luaL_error(L, "%s.%s must be an integer %d..2147483647 "
				  "(got %I)", what, key, lo, (lua_Integer)v);
	if (v == floor(v) && v < lo && v > -9e15)
		return luaL_error(L, "%s.%s must be an integer >= %d (got %I)",
				  what, key, lo, (lua_Integer)v);
	if (v != floor(v) || v < lo || v > 2147483647.0)
		return luaL_error(L, "%s.%s must be an integer >= %d (got %f)",
				  what, key, lo, (lua_Number)v);
	return (int)v;
}

int lgp_field_bool(lua_State *L, int idx, const char *what,
		   const char *key, int def)
{
	int t = lgp_get(L, idx, key), v;

	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		return def;
	}
	if (t != LUA_TBOOLEAN)
		return luaL_error(L, "%s.%s must be a boolean (got %s)", what,
				  key, lua_typename(L, t));
	v = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return v;
}

/* Push t[key] if it is a table and return its absolute index; 0 if nil. */
int lgp_subtable(lua_State *L, int idx, const char *what,
		 const char *key)
{
	int t = lgp_get(L, idx, key);

	if (t == LUA_TNIL || (t == LUA_TBOOLEAN && !lua_toboolean(L, -1))) {
		lua_pop(L, 1);
		return 0;
	}
	if (t != LUA_TTABLE)
		return luaL_error(L, "%s.%s must be a table (got %s)", what,
				  key, lua_typename(L, t));
	lgp_forget(L, -1);	/* its reader judges it next */
	return lua_gettop(L);
}

/* t[key] as an index into the NULL-terminated list opts; absent -> 0 (the
 * first is the default).  Raises "<what>.<key> must be <expect>" for
 * anything else. */
int lgp_field_option(lua_State *L, int idx, const char *what,
		     const char *key, const char *const opts[],
		     const char *expect)
{
	int t = lgp_get(L, idx, key), k = 0;

	if (t != LUA_TNIL) {
		const char *s = t == LUA_TSTRING ? lua_tostring(L, -1) : "";

		while (opts[k] && strcmp(s, opts[k]) != 0)
			k++;
		if (t != LUA_TSTRING || !opts[k])
			return luaL_error(L, "%s.%s must be %s", what, key,
					  expect);
	}
	lua_pop(L, 1);
	return k;
}

/* t[key] as a precision name (bf16, fp8, ...); absent -> def.  Raises
 * "<what>.<key>: unknown precision '...'" (a number reads as its text),
 * or "<what>.<key> must be a string" for any other value. */
gp_dtype lgp_field_dtype(lua_State *L, int idx, const char *what,
			 const char *key, gp_dtype def)
{
	int t = lgp_get(L, idx, key);
	const char *name = lua_tostring(L, -1);

	if (t == LUA_TNIL) {
		lua_pop(L, 1);
		return def;
	}
	if (!name)
		return (gp_dtype)luaL_error(L, "%s.%s must be a string "
					    "(got %s)", what, key,
					    lua_typename(L, t));
	if (gp_dtype_parse(name, &def) != GP_OK)
		return (gp_dtype)luaL_error(L, "%s.%s: unknown precision "
					    "'%s'", what, key, name);
	lua_pop(L, 1);
	return def;
}

/* Set field key of the table on top of the stack to a number, an
 * integer, a string or a boolean. */
void lgp_setnum(lua_State *L, const char *key, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, key);
}

void lgp_setcount(lua_State *L, const char *key, double v)
{
	lgp_pushcount(L, v);
	lua_setfield(L, -2, key);
}

void lgp_setint(lua_State *L, const char *key, lua_Integer v)
{
	lua_pushinteger(L, v);
	lua_setfield(L, -2, key);
}

void lgp_setstr(lua_State *L, const char *key, const char *v)
{
	lua_pushstring(L, v);
	lua_setfield(L, -2, key);
}

void lgp_setbool(lua_State *L, const char *key, int v)
{
	lua_pushboolean(L, v);
	lua_setfield(L, -2, key);
}
