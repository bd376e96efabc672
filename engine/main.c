/*
 * main.c - the gpuplan executable.
 *
 * A Lua 5.4 state with the standard libraries, the engine's module
 * (gpuplan.core) preloaded and package.path pointing at the engine's own Lua
 * code; argv goes to lua/gpuplan/cli.lua, which does everything else.
 * Structure after lua.c: main -> pmain (protected) -> docall with a message
 * handler that appends a traceback.
 *
 * Where the Lua code is: $GPUPLAN_HOME if set; else the directory of the
 * executable when it holds lua/gpuplan/cli.lua (the build tree); else the
 * compile-time GP_DATADIR (make install).  LUA_PATH is honoured; ";;" in
 * it stands for the engine's directories followed by Lua's defaults.
 * The engine's own modules ("gpuplan", "gpuplan.*") load from that root
 * alone, and Lua's default paths lose their "./" entries: nothing in the
 * directory gpuplan starts in runs unless a script asks for it
 * (`gpuplan run` lets a script require files beside itself).
 *
 * The state's allocator counts bytes and can refuse growth past a limit
 * (off by default): gpuplan.config.memory([limit]) reads or sets it, so the
 * catalog loader can stop a data file that builds a huge string with a
 * clean "not enough memory" instead of being killed by the kernel.
 * gpuplan.config.write_file(path, data) writes an output file the safe way
 * (engine/outfile.h): every file the tool writes goes through it.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

#include "outfile.h"

#ifndef GP_DATADIR
#define GP_DATADIR "/usr/local/share/gpuplan"
#endif
#ifndef GP_VERSION
#define GP_VERSION "0.0.0"
#endif

int luaopen_gpuplan_core(lua_State *L);

/* Bytes the state holds and the most it may hold (0: no limit). */
struct gp_mem {
	size_t used;
	size_t limit;
};

/* lua_Alloc with accounting.  When ptr is NULL, osize is a type tag, not a
 * size.  Only growth is refused: Lua relies on shrinking never failing.
 * A refusal makes Lua collect garbage, retry once, then raise "not enough
 * memory" in the code that asked. */
static void *gp_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	struct gp_mem *m = ud;
	size_t old = ptr ? osize : 0;
	void *p;

	if (old > m->used)
		old = m->used;	/* blocks from before accounting began */
	if (nsize == 0) {
		free(ptr);
		m->used -= old;
		return NULL;
	}
	if (m->limit && nsize > old &&
	    (nsize - old > m->limit || m->used > m->limit - (nsize - old)))
		return NULL;
	p = realloc(ptr, nsize);
	if (p)
		m->used = m->used - old + nsize;
	return p;
}

/* config.memory([limit]) -> previous limit, bytes in use.  limit: bytes,
 * 0 for none; without it the limit is left as it is. */
static int l_memory(lua_State *L)
{
	void *ud;
	struct gp_mem *m;
	size_t prev;

	lua_getallocf(L, &ud);
	m = ud;
	prev = m->limit;
	if (!lua_isnoneornil(L, 1)) {
		lua_Integer n = luaL_checkinteger(L, 1);
		luaL_argcheck(L, n >= 0, 1, "limit must be >= 0 bytes");
		m->limit = (size_t)n;
	}
	lua_pushinteger(L, (lua_Integer)prev);
	lua_pushinteger(L, (lua_Integer)m->used);
	return 2;
}

/* config.write_file(path, data) -> true, or nil and "cannot write 'path':
 * reason": the file whole or not at all, never through a link, only over
 * a regular file (engine/outfile.h). */
static int l_write_file(lua_State *L)
{
	const char *path = luaL_checkstring(L, 1);
	size_t len;
	const char *data = luaL_checklstring(L, 2, &len);
	gp_error err;

	if (outfile_write(path, data, len, &err) != GP_OK) {
		luaL_pushfail(L);
		lua_pushfstring(L, "cannot write '%s': %s", path, err.msg);
		return 2;
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* config.stderr_is_tty() -> whether standard error is a terminal (a
 * progress bar draws only there). */
static int l_stderr_tty(lua_State *L)
{
	lua_pushboolean(L, isatty(STDERR_FILENO));
	return 1;
}

static int file_exists(const char *path)
{
	return access(path, R_OK) == 0;
}

/* Writes the engine's data root into buf; returns where it came from
 * (for the message when the Lua code is not there). */
static const char *find_root(char *buf, size_t len)
{
	char exe[PATH_MAX], probe[PATH_MAX + 32];
	const char *home = getenv("GPUPLAN_HOME");
	ssize_t n;
	char *slash;

	if (home && *home) {
		snprintf(buf, len, "%s", home);
		return "GPUPLAN_HOME";
	}
	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(probe, sizeof probe, "%s/lua/gpuplan/cli.lua",
				 exe);
			if (file_exists(probe)) {
				snprintf(buf, len, "%s", exe);
				return "the build tree";
			}
		}
	}
	snprintf(buf, len, "%s", GP_DATADIR);
	return "the install directory (make install DATADIR)";
}

/* Message handler: append a traceback to string errors; leave structured
 * (table) errors from the CLI alone, they carry their own exit code. */
static int msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	if (msg == NULL) {
		if (lua_type(L, 1) == LUA_TTABLE)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)",
				      luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* Lua's default path without the entries relative to the current
 * directory ("./?.lua", "./?/init.lua", "./?.so"): a file that happens to
 * sit where gpuplan is started must never load as code.  Pushes the result;
 * the template is the value of package.path or package.cpath. */
static void push_path_sans_cwd(lua_State *L, const char *tmpl)
{
	luaL_Buffer b;
	const char *p = tmpl, *end;
	int first = 1;

	luaL_buffinit(L, &b);
	while (*p) {
		end = strchr(p, ';');
		if (end == NULL)
			end = p + strlen(p);
		if (end > p && strncmp(p, "./", 2) != 0) {
			if (!first)
				luaL_addchar(&b, ';');
			luaL_addlstring(&b, p, (size_t)(end - p));
			first = 0;
		}
		p = *end ? end + 1 : end;
	}
	luaL_pushresult(&b);
}

static void set_path(lua_State *L, const char *root)
{
	const char *user = getenv("LUA_PATH");
	luaL_Buffer b;

	lua_getglobal(L, "package");
	luaL_buffinit(L, &b);
	lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua", root, root);
	luaL_addvalue(&b);
	if (user && *user) {
		/* The user's path first: ";;" in it expands to ours. */
		luaL_addstring(&b, ";");
		luaL_addgsub(&b, user, ";;", ";");
	}
	luaL_addstring(&b, ";");
	lua_getfield(L, -2, "path");
	push_path_sans_cwd(L, lua_tostring(L, -1));
	lua_remove(L, -2);
	luaL_addvalue(&b);
	luaL_pushresult(&b);
	lua_setfield(L, -2, "path");
	if (getenv("LUA_CPATH") == NULL) {
		lua_getfield(L, -1, "cpath");
		push_path_sans_cwd(L, lua_tostring(L, -1));
		lua_setfield(L, -3, "cpath");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
}

/* The searcher put before Lua's own: the executable's modules ("gpuplan"
 * and "gpuplan.*") load only from its own tree (upvalue 1: the pattern
 * ROOT/lua/?.lua;ROOT/lua/?/init.lua), never from LUA_PATH, the current
 * directory or a C library; a name that is not there is "not found", so
 * a later searcher can never supply it.  Other names: the next searchers.
 * Returns what a searcher returns (a loader and its file, or a message);
 * a missing own module raises, ending require's search. */
static int own_searcher(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);

	if (strcmp(name, "gpuplan") != 0 &&
	    strncmp(name, "gpuplan.", 8) != 0) {
		lua_pushfstring(L, "no module '%s' in gpuplan's own tree",
				name);
		return 1;
	}
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "searchpath");
	lua_pushvalue(L, 1);
	lua_pushvalue(L, lua_upvalueindex(1));
	lua_call(L, 2, 2);
	if (lua_isnil(L, -2))
		return luaL_error(L, "module '%s' not found in gpuplan's "
				  "own tree (%s)", name,
				  lua_tostring(L, lua_upvalueindex(1)));
	{
		const char *file = lua_tostring(L, -2);
		if (luaL_loadfilex(L, file, "t") != LUA_OK)
			return luaL_error(L, "error loading module '%s' from "
					  "file '%s':\n\t%s", name, file,
					  lua_tostring(L, -1));
		lua_pushstring(L, file);
	}
	return 2;
}

/* Puts own_searcher after the preload searcher (1), before the path and
 * C searchers. */
static void set_searcher(lua_State *L, const char *root)
{
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "searchers");
	lua_getglobal(L, "table");
	lua_getfield(L, -1, "insert");
	lua_pushvalue(L, -3);
	lua_pushinteger(L, 2);
	lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua", root, root);
	lua_pushcclosure(L, own_searcher, 1);
	lua_call(L, 3, 0);
	lua_pop(L, 3);
}

static int pmain(lua_State *L)
{
	int argc = (int)lua_tointeger(L, 1);
	char **argv = (char **)lua_touserdata(L, 2);
	char root[PATH_MAX], probe[PATH_MAX + 32];
	const char *from;
	int i;

	luaL_openlibs(L);
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, luaopen_gpuplan_core);
	lua_setfield(L, -2, "gpuplan.core");
	lua_pop(L, 1);

	from = find_root(root, sizeof root);
	snprintf(probe, sizeof probe, "%s/lua/gpuplan/cli.lua", root);
	if (!file_exists(probe))
		return luaL_error(L, "cannot find the gpuplan Lua modules: no "
				  "%s (root from %s)", probe, from);
	set_path(L, root);
	set_searcher(L, root);

	/* package.loaded["gpuplan.config"]: facts the Lua side needs. */
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
	lua_createtable(L, 0, 6);
	lua_pushcfunction(L, l_memory);
	lua_setfield(L, -2, "memory");
	lua_pushcfunction(L, l_write_file);
	lua_setfield(L, -2, "write_file");
	lua_pushcfunction(L, l_stderr_tty);
	lua_setfield(L, -2, "stderr_is_tty");
	lua_pushstring(L, root);
	lua_setfield(L, -2, "root");
	lua_pushstring(L, GP_VERSION);
	lua_setfield(L, -2, "version");
	lua_pushstring(L, argv[0]);
	lua_setfield(L, -2, "progname");
	lua_setfield(L, -2, "gpuplan.config");
	lua_pop(L, 1);

	lua_pushcfunction(L, msghandler);
	lua_getglobal(L, "require");
	lua_pushliteral(L, "gpuplan.cli");
	if (lua_pcall(L, 1, 1, -3) != LUA_OK)
		return lua_error(L);
	lua_getfield(L, -1, "main");
	lua_createtable(L, argc, 0);
	for (i = 1; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i);
	}
	if (lua_pcall(L, 1, 1, -4) != LUA_OK)
		return lua_error(L);
	return 1;
}

/* Print an error that escaped the CLI.  Tables come from cli.lua's own
 * error constructors: { msg = "...", usage = true|nil }. */
static int report(lua_State *L)
{
	int usage = 0;
	const char *msg;

	if (lua_type(L, -1) == LUA_TTABLE) {
		lua_getfield(L, -1, "usage");
		usage = lua_toboolean(L, -1);
		lua_pop(L, 1);
		lua_getfield(L, -1, "msg");
	}
	msg = lua_tostring(L, -1);
	fprintf(stderr, "gpuplan: %s\n", msg ? msg : "(no message)");
	fflush(stderr);
	return usage ? 2 : 1;
}

int main(int argc, char **argv)
{
	lua_State *L = luaL_newstate();
	struct gp_mem mem;
	int status, code;

	if (L == NULL) {
		fprintf(stderr, "gpuplan: cannot create Lua state: %s\n",
			strerror(errno));
		return 1;
	}
	/* Take over allocation, starting from what the new state holds. */
	mem.used = (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 +
		   (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
	mem.limit = 0;
	lua_setallocf(L, gp_alloc, &mem);
	lua_pushcfunction(L, pmain);
	lua_pushinteger(L, argc);
	lua_pushlightuserdata(L, argv);
	status = lua_pcall(L, 2, 1, 0);
	if (status != LUA_OK)
		code = report(L);
	else if (lua_isinteger(L, -1))
		code = (int)lua_tointeger(L, -1);
	else
		code = 0;
	/* Output that did not reach its file is an error (a full disk,
	 * >/dev/full), not a silent success. */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "gpuplan: cannot write output: %s\n",
			strerror(errno));
		if (code == 0)
			code = 1;
	}
	lua_close(L);
	return code;
}
