/*
 * lgp_field.c - one reader for every struct the binding fills (see lgp_field.h).
 */
#include "lgp_field.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lauxlib.h"

#include "common.h"
#include "lgp_int.h"  /* lgp_step_desc, lgp_train_desc (strict_fail) */

/* The most names a suggestion is chosen among (a table's first 256):
 * the largest reader, core.rl's, takes 40. */
#define LGP_NAMES_MAX 256

#define AT(dst, off, type) ((type *)(void *)((char *)(dst) + (off)))

/* Raise msg as an error of argument arg (or plainly when arg is 0). */
static int fail(lua_State *L, int arg, const char *msg)
{
	if (arg > 0)
		return luaL_argerror(L, arg, msg);
	return luaL_error(L, "%s", msg);
}

/* Edit distance of a and b (insertions, deletions, substitutions and
 * transpositions of neighbours, each 1), limit + 1 past limit or for
 * names longer than 63. */
static int distance(const char *a, const char *b, int limit)
{
	int prev2[64], prev[64], cur[64], la = (int)strlen(a),
	    lb = (int)strlen(b), i, j;

	if (la > 63 || lb > 63 || abs(la - lb) > limit)
		return limit + 1;
	for (j = 0; j <= lb; j++)
		prev2[j] = prev[j] = j;
	for (i = 1; i <= la; i++) {
		int best = i;

		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			int v = prev[j] + 1;

			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (prev[j - 1] + (a[i - 1] != b[j - 1]) < v)
				v = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < v)
				v = prev2[j - 2] + 1;
			cur[j] = v;
			if (v < best)
				best = v;
		}
		if (best > limit)
			return limit + 1;
		memcpy(prev2, prev, sizeof prev);
		memcpy(prev, cur, sizeof cur);
	}
	return prev[lb];
}

const char *lgp_nearest(const char *key, const char *const *names, int n)
{
	char k[66], words[68];
	const char *best = NULL;
	int i, len, bestd;

	for (len = 0; key[len] && len < 63; len++)
		k[len] = key[len] == '-' ? '_' :
			(char)tolower((unsigned char)key[len]);
	k[len] = 0;
	if (key[len])
		return NULL;
	bestd = len - 1 < 2 ? len - 1 : 2;
	for (i = 0; i < n; i++) {
		int d = distance(k, names[i], bestd);

		if (d <= bestd && (!best || d < bestd)) {
			best = names[i];
			bestd = d;
		}
	}
	if (best)
		return best;
	/* an abbreviation or a longer spelling: a name that begins one
	 * of the key's words ("_" .. k .. "_" holds "_" .. name) */
	words[0] = '_';
	memcpy(words + 1, k, (size_t)len);
	words[len + 1] = '_';
	words[len + 2] = 0;
	for (i = 0; i < n; i++) {
		size_t nl = strlen(names[i]);
		const char *p;

		if (nl < 2 || (best && nl <= strlen(best)))
			continue;
		for (p = strchr(words, '_'); p; p = strchr(p + 1, '_'))
			if (strncmp(p + 1, names[i], nl) == 0)
				break;
		if (p)
			best = names[i];
	}
	return best;
}

/* Raise "what: unknown NOUN 'key' (did you mean 'x'?)", or with no near
 * name the names it takes, as args.check_keys words it on the Lua side.
 * noun: "option" for a call's options (job:step's layout, the names of
 * gp.train's own options: args.unknown_option's words), "field" for a
 * description table's (a model's, a device's). */
static int unknown(lua_State *L, int arg, const char *what, const char *noun,
		   const char *key, const char *const *names, int n)
{
	const char *near = lgp_nearest(key, names, n);
	luaL_Buffer b;
	int i;

	luaL_buffinit(L, &b);
	if (near) {
		luaL_addstring(&b, "did you mean '");
		luaL_addstring(&b, near);
		luaL_addstring(&b, "'?");
	}
	for (i = 0; !near && i < n; i++) {
		if (i)
			luaL_addstring(&b, ", ");
		luaL_addstring(&b, names[i]);
	}
	luaL_pushresult(&b);
	return fail(L, arg, lua_pushfstring(L, "%s: unknown %s '%s' (%s)",
					    what, noun, key,
					    lua_tostring(L, -1)));
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
			const lgp_field *f, void *dst, void *store)
{
	lgp_store_out so;

	gp_error err;

	switch (f->type) {
	case LGP_F_INT:
	case LGP_F_BOOL:
	case LGP_F_NAME:
		*AT(dst, f->off, int) = (int)f->def;
		break;
	case LGP_F_NUM:
	case LGP_F_COUNT:
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
	case LGP_F_STORE:
		so.store = store;
		so.out = AT(dst, f->off, void);
		if (f->def_str && f->parse(f->def_str, &so, &err))
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

/* The value at the top of the stack, of Lua type t, must be of type
 * want (a Lua type, said as noun): "<what>.<field> must be <noun> (got
 * <type>)" otherwise. */
static void want(lua_State *L, int arg, const lgp_desc *d, const lgp_field *f,
		 int t, int want_t, const char *noun)
{
	if (t != want_t)
		fail(L, arg, lua_pushfstring(L, "%s.%s must be %s (got %s)",
					     d->what, f->name, noun,
					     lua_typename(L, t)));
}

/* The number at the top of the stack into INT or NUM field f of dst:
 * finite, whole for an INT, within [lo, hi]. */
static void read_number(lua_State *L, int arg, const lgp_desc *d,
			const lgp_field *f, void *dst)
{
	int t = lua_type(L, -1);
	double v;

	want(L, arg, d, f, t, LUA_TNUMBER, "a number");
	v = lua_tonumber(L, -1);
	if (!gp_finite(v))
		fail(L, arg, lua_pushfstring(L, "%s.%s must be finite",
					     d->what, f->name));
	/* A whole number is said as one ("got 0", not "got
	 * 0.0"); %I takes it while it fits a lua_Integer. */
	if (f->type == LGP_F_INT && v == floor(v) && fabs(v) < 9e15 &&
	    (v < f->lo || v > f->hi))
		fail(L, arg, lua_pushfstring(L, "%s.%s must be an "
			"integer in %d..%d (got %I)", d->what, f->name,
			(int)f->lo, (int)f->hi, (lua_Integer)v));
	if (f->type == LGP_F_INT && (v != floor(v) || v < f->lo ||
				     v > f->hi))
		fail(L, arg, lua_pushfstring(L, "%s.%s must be an "
			"integer in %d..%d (got %f)", d->what, f->name,
			(int)f->lo, (int)f->hi, (lua_Number)v));
	if (f->type != LGP_F_INT && (v < f->lo || v > f->hi))
		fail(L, arg, lua_pushfstring(L, "%s.%s must be in "
			"[%f, %f] (got %f)", d->what, f->name,
			(lua_Number)f->lo, (lua_Number)f->hi,
			(lua_Number)v));
	if (f->type == LGP_F_INT)
		*AT(dst, f->off, int) = (int)v;
	else
		*AT(dst, f->off, double) = v;
}

/* The string at the top of the stack into NAME field f of dst: its index
 * in f->names, or an error listing them. */
static void read_name(lua_State *L, int arg, const lgp_desc *d,
		      const lgp_field *f, void *dst)
{
	const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) :
		NULL;
	luaL_Buffer b;
	int k;

	for (k = 0; s && f->names[k]; k++)
		if (strcmp(s, f->names[k]) == 0) {
			*AT(dst, f->off, int) = k;
			return;
		}
	luaL_buffinit(L, &b);
	for (k = 0; f->names[k]; k++) {
		if (k)
			luaL_addstring(&b, ", ");
		luaL_addstring(&b, f->names[k]);
	}
	luaL_pushresult(&b);
	fail(L, arg, lua_pushfstring(L, "%s.%s must be one of %s", d->what,
				     f->name, lua_tostring(L, -1)));
}

/* The value at the top of the stack into field f of dst. */
static void read_value(lua_State *L, int arg, const lgp_desc *d,
		       const lgp_field *f, void *dst, int mode, void *store)
{
	int t = lua_type(L, -1);
	gp_error err;
	lgp_store_out so;

	switch (f->type) {
	case LGP_F_INT:
	case LGP_F_NUM:
	case LGP_F_COUNT:
		read_number(L, arg, d, f, dst);
		break;
	case LGP_F_BOOL:
		want(L, arg, d, f, t, LUA_TBOOLEAN, "a boolean");
		*AT(dst, f->off, int) = lua_toboolean(L, -1);
		break;
	case LGP_F_NAME:
		read_name(L, arg, d, f, dst);
		break;
	case LGP_F_PARSE:
		want(L, arg, d, f, t, LUA_TSTRING, "a string");
		if (f->parse(lua_tostring(L, -1), AT(dst, f->off, void), &err))
			fail(L, arg, lua_pushfstring(L, "%s", err.msg));
		break;
	case LGP_F_STORE:
		want(L, arg, d, f, t, LUA_TSTRING, "a string");
		so.store = store;
		so.out = AT(dst, f->off, void);
		if (f->parse(lua_tostring(L, -1), &so, &err))
			fail(L, arg, lua_pushfstring(L, "%s", err.msg));
		break;
	case LGP_F_DTYPE: {
		gp_dtype p = GP_DTYPE_COUNT; /* none until parsed */

		want(L, arg, d, f, t, LUA_TSTRING, "a string");
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
		want(L, arg, d, f, t, LUA_TTABLE, "a table");
		lgp_forget(L, -1);
		lgp_read_store(L, lua_gettop(L), arg, f->sub,
			       AT(dst, f->off, void), mode | LGP_DEFAULTS,
			       store);
		/* A sub-table is read by its description alone, so it is
		 * judged here, as a strict read would: no caller judges it
		 * later, and its notes left in the buffer outlived the
		 * table -- a later table at the same address took them as
		 * its own names (a key the sub-description names accepted,
		 * and enough of them crowded a config's own names out of
		 * lgp_strict's list: "memory: unknown field ..."). */
		if (!(mode & LGP_STRICT))
			lgp_strict(L, lua_gettop(L), arg, f->sub->what);
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

/* Does gp.<cmd> (its job: gp.train_job, gp.rl_job) take key as an option?
 * Asked of the options' declarations (gpuplan.options takes), where the
 * module is loaded; 0 where it is not (the engine's own tests). */
static int job_takes(lua_State *L, const char *cmd, const char *key)
{
	int took = 0, top = lua_gettop(L);

	if (lua_getglobal(L, "package") == LUA_TTABLE &&
	    lua_getfield(L, -1, "loaded") == LUA_TTABLE &&
	    lua_getfield(L, -1, "gpuplan.options") == LUA_TTABLE &&
	    lua_getfield(L, -1, "takes") == LUA_TFUNCTION) {
		lua_pushstring(L, cmd);
		lua_pushstring(L, key);
		lua_pushstring(L, "lua");
		if (lua_pcall(L, 3, 1, 0) == LUA_OK)
			took = lua_toboolean(L, -1);
	}
	lua_settop(L, top);
	return took;
}

/* Refuse key, unknown to d: the nearest of d's names suggested. */
static void strict_fail(lua_State *L, int arg, const lgp_desc *d,
			const char *key)
{
	const char *names[LGP_NAMES_MAX];
	int n;

	/* job:step{seq = 4096} suggested 'ep', the nearest step name: seq
	 * is the job's (gp.train_job's, read by lgp_train_desc), which the
	 * message now says. */
	for (n = 0; d == &lgp_step_desc && lgp_train_desc.fields[n].name; n++)
		if (strcmp(lgp_train_desc.fields[n].name, key) == 0)
			fail(L, arg, lua_pushfstring(L, "%s: '%s' is the job's, "
				"not a step's: give it where the job is made "
				"(the job's own table)", d->what, key));
	/* So is zero_group, which a job takes beside its config
	 * (lgp_job_zero_group_arg), train's and rl's alike: a step's
	 * zero_group = 8 read "unknown field 'zero_group' (did you mean
	 * 'zero'?)". */
	if (strcmp(d->what, "step") == 0 && strcmp(key, "zero_group") == 0)
		fail(L, arg, lua_pushfstring(L, "%s: 'zero_group' is the job's, "
			"not a step's: give it where the job is made (the "
			"job's own table); each step's groups are its own dp x "
			"cp ranks' (it must divide them)", d->what));
	/* Any other option of the job's function is the job's too: an RL
	 * job's step{max_batch = 64} (gp.rl_job's rollout engine option)
	 * read "unknown field 'max_batch' (did you mean 'batch'?)", the
	 * micro-batch, and step{seq = 4096} suggested 'ep'. */
	if ((d == &lgp_rl_step_desc && job_takes(L, "rl", key)) ||
	    (d == &lgp_step_desc && job_takes(L, "train", key)))
		fail(L, arg, lua_pushfstring(L, "%s: '%s' is the job's, "
			"not a step's: give it where the job is made "
			"(the job's own table)", d->what, key));
	for (n = 0; n < LGP_NAMES_MAX && d->fields[n].name; n++)
		names[n] = d->fields[n].name;
	unknown(L, arg, d->what, d == &lgp_step_desc || d == &lgp_rl_step_desc
		? "option" : "field", key, names, n);
}

void lgp_flat(lua_State *L, int idx)
{
	int t, at, depth;

	idx = lua_absindex(L, idx);
	if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx))
		return;
	lua_pop(L, 1);
	lua_newtable(L);
	t = lua_gettop(L);
	lua_pushvalue(L, idx);
	/* A chain that loops adds nothing after its first turn: the bound
	 * ends it, as init.lua's seen set does. */
	for (depth = 0; depth < 100 && lua_type(L, -1) == LUA_TTABLE;
	     depth++) {
		at = lua_gettop(L);
		lua_pushnil(L);
		while (lua_next(L, at)) {
			lua_pushvalue(L, -2);
			if (lua_rawget(L, t) == LUA_TNIL) {
				lua_pop(L, 1);
				lua_pushvalue(L, -2);
				lua_pushvalue(L, -2);
				lua_rawset(L, t);
			} else {
				lua_pop(L, 1);
			}
			lua_pop(L, 1);
		}
		if (lua_getmetatable(L, at)) {
			lua_pushliteral(L, "__index");
			lua_rawget(L, -2);
			lua_remove(L, -2);
		} else {
			lua_pushnil(L);
		}
		lua_remove(L, at);
	}
	if (lua_type(L, -1) == LUA_TFUNCTION) {
		lua_createtable(L, 0, 1);
		lua_insert(L, -2);
		lua_setfield(L, -2, "__index");
		lua_setmetatable(L, t);
	} else {
		lua_pop(L, 1);
	}
	lua_replace(L, idx);
}

/* Whether t[name] is nil without its metatable (lua_rawget by name). */
static int raw_nil(lua_State *L, int t, const char *name)
{
	int nil;

	lua_pushstring(L, name);
	nil = lua_rawget(L, t) == LUA_TNIL;
	lua_pop(L, 1);
	return nil;
}

void lgp_read(lua_State *L, int idx, int arg, const lgp_desc *d, void *dst,
	      int mode)
{
	lgp_read_store(L, idx, arg, d, dst, mode, NULL);
}

void lgp_read_store(lua_State *L, int idx, int arg, const lgp_desc *d,
		    void *dst, int mode, void *store)
{
	int i, lt, top = lua_gettop(L);

	idx = lua_absindex(L, idx);
	if (lua_type(L, idx) != LUA_TTABLE)
		fail(L, arg, lua_pushfstring(L, "%s: expected a table (got "
					     "%s)", d->what,
					     luaL_typename(L, idx)));
	if (mode & LGP_DEFAULTS)
		for (i = 0; d->fields[i].name; i++)
			set_default(L, arg, d, &d->fields[i], dst, store);
	/* Not strict: the caller's lgp_strict judges the keys, knowing
	 * every name of d (those given and those that may be). */
	if (!(mode & LGP_STRICT))
		lgp_mark_desc(L, idx, d);
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
				strict_fail(L, arg, d, lua_tostring(L, -2));
			lua_pop(L, 1);
			continue;
		}
		i = (int)lua_tointeger(L, -1);
		lua_pop(L, 1);
		read_value(L, arg, d, &d->fields[i], dst, mode, store);
		lua_pop(L, 1);       /* the value; the key stays for lua_next */
	}
	/* A proxy whose keys come from an __index function (lgp_flat keeps
	 * one as the flat table's __index): lua_next cannot list them, so a
	 * layout job:step(setmetatable({}, {__index = f})) priced the job's
	 * own, in silence.  Each field it does not hold is asked of it. */
	if (lua_getmetatable(L, idx)) {
		int fn = lua_getfield(L, -1, "__index") == LUA_TFUNCTION;

		lua_pop(L, 2);
		for (i = 0; fn && d->fields[i].name; i++) {
			if (raw_nil(L, idx, d->fields[i].name)) {
				if (lua_getfield(L, idx, d->fields[i].name) !=
				    LUA_TNIL)
					read_value(L, arg, d, &d->fields[i],
						   dst, mode, store);
				lua_pop(L, 1);
			}
		}
	}
	/* A required field is looked up again (rawget, as lua_next saw
	 * it): no mask, so no limit on the number of fields. */
	for (i = 0; d->fields[i].name; i++) {
		if (!d->fields[i].required)
			continue;
		if (lua_getfield(L, idx, d->fields[i].name) == LUA_TNIL)
			fail(L, arg, lua_pushfstring(L, "%s.%s is required",
						     d->what,
						     d->fields[i].name));
		lua_pop(L, 1);
	}
	lua_settop(L, top);
}

/* The notes: (table, key) pairs in a C buffer kept in the registry --
 * no Lua table per read, so a reader costs a few API calls per field.
 * Keys are the readers' C strings (literals, descriptions), never freed.
 * A reader that raises leaves its notes behind; when the buffer fills the
 * older half is dropped (a read in progress holds the newest notes, far
 * fewer than half: the largest reader notes 70). */
#define LGP_MARKS_MAX 1024

typedef struct lgp_marks {
	int n;
	struct {
		const void *t;
		const char *key;
	} e[LGP_MARKS_MAX];
} lgp_marks;

static lgp_marks *marks(lua_State *L)
{
	static const char tag = 0;
	lgp_marks *m;

	if (lua_rawgetp(L, LUA_REGISTRYINDEX, &tag) == LUA_TUSERDATA) {
		m = lua_touserdata(L, -1);
		lua_pop(L, 1);
		return m;
	}
	lua_pop(L, 1);
	m = lua_newuserdatauv(L, sizeof *m, 0);
	m->n = 0;
	lua_rawsetp(L, LUA_REGISTRYINDEX, &tag);
	return m;
}

void lgp_forget(lua_State *L, int idx)
{
	lgp_marks *m;
	const void *t;
	int i, j;

	if (lua_type(L, idx) != LUA_TTABLE)
		return;
	m = marks(L);
	t = lua_topointer(L, idx);
	for (i = j = 0; i < m->n; i++)
		if (m->e[i].t != t)
			m->e[j++] = m->e[i];
	m->n = j;
}

void lgp_mark(lua_State *L, int idx, const char *key)
{
	lgp_marks *m;

	if (lua_type(L, idx) != LUA_TTABLE)
		return;
	m = marks(L);
	if (m->n == LGP_MARKS_MAX) {
		m->n = LGP_MARKS_MAX / 2;
		memmove(m->e, m->e + m->n, sizeof m->e[0] * (size_t)m->n);
	}
	m->e[m->n].t = lua_topointer(L, idx);
	m->e[m->n++].key = key;
}

void lgp_push_value(lua_State *L, const lgp_field *f, const void *src)
{
	const void *p = (const char *)src + f->off;

	switch (f->type) {
	case LGP_F_INT:
		lua_pushinteger(L, *(const int *)p);
		break;
	case LGP_F_NUM:
		lua_pushnumber(L, *(const double *)p);
		break;
	case LGP_F_COUNT:
		lgp_pushcount(L, *(const double *)p);
		break;
	case LGP_F_BOOL:
		lua_pushboolean(L, *(const int *)p);
		break;
	case LGP_F_NAME:
		lua_pushstring(L, f->names[*(const int *)p]);
		break;
	default:
		lua_pushnil(L);
	}
}

void lgp_pushcount(lua_State *L, double v)
{
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		lua_pushinteger(L, (lua_Integer)v);
	else
		lua_pushnumber(L, v);
}

void lgp_push(lua_State *L, const lgp_desc *d, const void *src)
{
	const lgp_field *f;

	for (f = d->fields; f->name; f++) {
		if (f->type != LGP_F_INT && f->type != LGP_F_NUM &&
		    f->type != LGP_F_COUNT && f->type != LGP_F_BOOL &&
		    f->type != LGP_F_NAME)
			continue;
		lgp_push_value(L, f, src);
		lua_setfield(L, -2, f->name);
	}
}

void lgp_push_names(lua_State *L, const lgp_field *const *tables)
{
	const lgp_field *f;

	lua_newtable(L);
	for (; *tables; tables++)
		for (f = *tables; f->name; f++) {
			lua_pushlightuserdata(L, (void *)f);
			lua_setfield(L, -2, f->name);
		}
}

static int readonly(lua_State *L)
{
	int t = lua_type(L, 2);

	return luaL_error(L, "%s: read-only: cannot set %s%s%s (%s)",
			  lua_tostring(L, lua_upvalueindex(1)),
			  t == LUA_TSTRING ? "'" : "",
			  t == LUA_TSTRING || t == LUA_TNUMBER ?
			  luaL_tolstring(L, 2, NULL) : "a key that is not a name",
			  t == LUA_TSTRING ? "'" : "",
			  lua_tostring(L, lua_upvalueindex(2)));
}

void lgp_set_readonly(lua_State *L, const char *what, const char *hint)
{
	lua_pushstring(L, what);
	lua_pushstring(L, hint);
	lua_pushcclosure(L, readonly, 2);
	lua_setfield(L, -2, "__newindex");
}

const lgp_field *lgp_index_field(lua_State *L, int names, const char *what,
				 const char *hint)
{
	int t;

	luaL_checkstring(L, 2);
	lua_pushvalue(L, 2);
	t = lua_rawget(L, names);
	if (t == LUA_TLIGHTUSERDATA)
		return lua_touserdata(L, -1);
	if (t == LUA_TNIL)
		luaL_error(L, "%s: no field '%s' (%s; result:table() for all)",
			   what, lua_tostring(L, 2), hint);
	return NULL;
}

void lgp_mark_desc(lua_State *L, int idx, const lgp_desc *d)
{
	int i;

	for (i = 0; d->fields[i].name; i++)
		lgp_mark(L, idx, d->fields[i].name);
}

/* names[0..n) without repeats, the first of each kept in its place;
 * returns the new count. */
static int distinct(const char **names, int n)
{
	int i, j, k = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < k && (names[j][0] != names[i][0] ||
				      strcmp(names[j], names[i])); j++)
			;
		if (j == k)
			names[k++] = names[i];
	}
	return k;
}

void lgp_strict(lua_State *L, int idx, int arg, const char *what)
{
	const char *bad = NULL, *nonstr = NULL, *names[LGP_NAMES_MAX];
	lgp_marks *m;
	const void *t;
	int n = 0, i, j, k, top = lua_gettop(L);

	idx = lua_absindex(L, idx);
	if (lua_type(L, idx) != LUA_TTABLE)
		return;
	m = marks(L);
	t = lua_topointer(L, idx);
	/* this table's notes out of the buffer, in the order noted (the
	 * nearest's tie goes to the field read first) */
	for (i = j = 0; i < m->n; i++) {
		if (m->e[i].t != t) {
			m->e[j++] = m->e[i];
			continue;
		}
		/* a name noted twice is kept twice: one more string to
		 * pass over, cheaper than looking for it on every read.
		 * The list fills only with the notes of reads that raised
		 * (a pcall loop over one table leaves each try's); then
		 * the repeats go, and past 256 names the oldest, so the
		 * read being judged -- the newest notes -- keeps its own
		 * names (before, a valid config was refused: "memory:
		 * unknown field 'frag' (gpus, kind, capacity, gpus, ...)"). */
		if (n == LGP_NAMES_MAX)
			n = distinct(names, n);
		if (n == LGP_NAMES_MAX)
			memmove(names, names + 1, sizeof names[0] * (size_t)--n);
		names[n++] = m->e[i].key;
	}
	m->n = j;
	/* the first unknown key by name: the same message every run */
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		const char *key;

		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING) {
			nonstr = luaL_typename(L, -1);
			continue;
		}
		key = lua_tostring(L, -1);
		if (key[0] == '_' || (bad && strcmp(key, bad) >= 0))
			continue;
		for (k = 0; k < n && (names[k][0] != key[0] ||
				      strcmp(names[k], key)); k++)
			;
		if (k == n)
			bad = key;
	}
	if (nonstr)
		fail(L, arg, lua_pushfstring(L, "%s: field names are strings "
					     "(got %s)", what, nonstr));
	/* the names a refusal lists, each once: a field read twice (the
	 * model's head_dim, norm, moe ... by the reader and again by the
	 * check after it) was listed twice ("... vision, id, name, ...,
	 * head_dim, head_dim, ffn_act, ...") */
	if (bad)
		unknown(L, arg, what, "field", bad, names, distinct(names, n));
	lua_settop(L, top);
}
