# gpuplan - GPU planning engine (C kernels + embedded Lua 5.4)
#
# User settings first; everything below the line is required by the build.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
DATADIR    ?= $(PREFIX)/share/gpuplan
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DESTDIR    ?=
CC         ?= cc
PKG_CONFIG ?= pkg-config
# -O3: the sweep's kernel (bench/sweep_bench's plan sweep) runs ~3% fewer
# instructions a layout than at -O2 and ~5% faster; every output is
# bit-for-bit the same (no option here lets GCC reorder floating point).
CFLAGS     ?= -O3 -g
LDFLAGS    ?=
PROVE      ?= prove
# Test files run at once by `make test` (prove -j): one a processor.  The
# tests are independent processes that write only their own temporary
# directories; JOBS=1 runs them one by one.
JOBS       ?= $(shell nproc 2>/dev/null || echo 1)
# The CLI test files `make test` runs: all of them (CI's sanitizer pass
# names a few, .ci/run says why).
CLI_TESTS  ?= $(wildcard tests/cli/*.t)
# Both checked before anything builds: a JOBS that is no count reached
# prove as -jabc (read as -j -a -b -c: "TAP::Harness::Archive is
# required") or -j --exec, and a CLI_TESTS file that is not there as
# prove's Perl stack trace.
ifneq ($(filter test check,$(MAKECMDGOALS)),)
ifeq ($(shell printf '%s' '$(JOBS)' | grep -Ex '[1-9][0-9]*'),)
$(error make test: JOBS must be a whole number of test files run at once, 1 or more (got '$(JOBS)'))
endif
ifeq ($(strip $(CLI_TESTS)),)
$(error make test: CLI_TESTS names no file (name tests/cli/*.t files, or leave it unset: all of them))
endif
ifneq ($(filter-out $(wildcard $(CLI_TESTS)),$(CLI_TESTS)),)
$(error make test: CLI_TESTS: no such file: $(filter-out $(wildcard $(CLI_TESTS)),$(CLI_TESTS)))
endif
endif
SANITIZE   ?=
# make fuzz: FUZZ_SCALE times the generated inputs of make test, from
# FUZZ_SEED (tests/lua/fuzz.lua)
FUZZ_SCALE ?= 100
FUZZ_SEED  ?= 13
# Link-time optimisation, on by default with GCC; `make LTO=` turns it off.
# The per-layout kernel of a sweep (sweep.c -> train*.c -> memory*.c ->
# comm*.c) crosses translation units, so without it none of those calls can
# be inlined; with it `make bench`'s c_sweep_evals_per_s rises by a few per
# cent.  Results do not change: GCC reorders no floating-point operation
# without -ffast-math, and -std=c99 keeps contraction into fused
# multiply-adds off, so inlining cannot move a rounding.  The sanitizer build
# (SANITIZE=1) keeps it off, one stack frame a function in its reports.  The
# archive is written with gcc-ar, which indexes the LTO objects' symbols
# through GCC's linker plugin; gcc-ar and the plugin come in Debian's gcc
# package, as cc and ld do.
CC_IS_GCC  := $(shell $(CC) -v 2>&1 | grep -q '^gcc version' && echo 1)
ifneq ($(SANITIZE),1)
ifeq ($(CC_IS_GCC),1)
LTO        ?= -flto=auto
endif
endif

# ---------------------------------------------------------------------------
VERSION := 0.1.0
LUA_CFLAGS := $(shell $(PKG_CONFIG) --cflags lua5.4)
LUA_LIBS   := $(shell $(PKG_CONFIG) --libs lua5.4)
WARN       := -std=c99 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
              -Wmissing-prototypes
# SANITIZE=1: every report stops the program, the float checks
# included (they are not in `undefined`, and would otherwise print and let
# the test pass): a division by zero fails the test that reaches it.
ifeq ($(SANITIZE),1)
SAN := -fsanitize=address,undefined,float-cast-overflow,float-divide-by-zero \
       -fno-omit-frame-pointer \
       -fno-sanitize-recover=all
endif
ALL_CFLAGS  = $(WARN) -D_POSIX_C_SOURCE=200809L -Iengine $(SAN) $(LTO) $(CFLAGS)
ALL_LDFLAGS = $(SAN) $(LDFLAGS)
# An LTO link compiles the program again: it takes the same optimisation
# flags, but not $(WARN): each file's compile has given its warnings, and
# GCC's -Wmaybe-uninitialized, run again after inlining across files, reports
# variables that only a Lua error path (luaL_error, not declared noreturn)
# or an error return leaves unset, which would stop a -Werror build.
ifneq ($(LTO),)
ALL_LDFLAGS += $(LTO) $(CFLAGS)
ifeq ($(origin AR),default)
AR := gcc-ar
endif
endif

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2)
endif

# The files that see Lua: the executable, the binding (lgpuplan.c and its
# lgp_*.c pieces) and its field-table reader; the kernels never do.
BIND_SRC   := engine/main.c $(wildcard engine/lgp*.c)
BIND_OBJ   := $(BIND_SRC:.c=.o)
KERNEL_SRC := $(filter-out $(BIND_SRC), $(wildcard engine/*.c))
KERNEL_OBJ := $(KERNEL_SRC:.c=.o)
HEADERS    := $(wildcard engine/*.h)
CTEST_SRC  := $(wildcard tests/c/t_*.c)
CTEST_BIN  := $(CTEST_SRC:.c=.t)
BENCH_SRC  := $(wildcard bench/*.c)

.PHONY: all test check fuzz bench validate ranges install uninstall clean deps docs

all: gpuplan

# The settings baked into the build: DATADIR (in main.o), the compiler and
# its flags.  Everything built depends on this stamp, rewritten when they
# change, so `make test SANITIZE=1` after a plain `make` rebuilds every
# object with the sanitizers instead of linking the old ones.
BUILD_STAMP := engine/datadir.stamp
BUILD_ID    := $(DATADIR) $(VERSION) $(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS)
$(shell echo '$(BUILD_ID)' | cmp -s - $(BUILD_STAMP) || \
	echo '$(BUILD_ID)' > $(BUILD_STAMP))

engine/%.o: engine/%.c $(HEADERS) $(BUILD_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BIND_OBJ): ALL_CFLAGS += $(LUA_CFLAGS)
engine/main.o: ALL_CFLAGS += -DGP_DATADIR='"$(DATADIR)"' \
                              -DGP_VERSION='"$(VERSION)"'

libgpuplan.a: $(KERNEL_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

gpuplan: $(BIND_OBJ) libgpuplan.a $(BUILD_STAMP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(BIND_OBJ) libgpuplan.a $(LUA_LIBS) -lm

# Compiled and linked apart, so the link does not take the warnings (see
# ALL_LDFLAGS).
tests/c/%.o: tests/c/%.c tests/c/tap.h tests/c/fixture.h tests/c/recipes.h $(HEADERS) $(BUILD_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/c -c -o $@ $<

.PRECIOUS: tests/c/%.o
tests/c/%.t: tests/c/%.o libgpuplan.a $(BUILD_STAMP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< libgpuplan.a -lm

# C tests are TAP executables; Lua tests run inside ./gpuplan; CLI tests are
# Perl.  Each group gets its own prove so each can use its own interpreter.
# All three groups run even when one fails; the target fails if any did.
# The buyer's market of the environment (gpuplan.prices.buyer) would change
# every cost the tests check: they run without it.
test check: gpuplan $(CTEST_BIN)
	@export GPUPLAN_CURRENCY= GPUPLAN_MARKET=; rc=0; \
	$(PROVE) -j$(JOBS) --exec '' $(CTEST_BIN) || rc=1; \
	$(PROVE) -j$(JOBS) --exec './gpuplan run' tests/lua/*.t || rc=1; \
	$(PROVE) -j$(JOBS) $(CLI_TESTS) || rc=1; \
	exit $$rc

# The published cases and the check of the README's per-kind figures
# (also part of `make test`).
validate: gpuplan
	./gpuplan validate validation/cases.json
	$(PROVE) --exec './gpuplan run' tests/lua/validate_figures.t

# The error model the commands' 80% ranges come from (lua/gpuplan/ranges.lua),
# regenerated from the shipped cases and their predictions: run it after
# changing a case or a prediction (tests/lua/ranges.t fails until then).
# The built-in catalog only: a user's catalog must not move the ranges.
ranges: gpuplan
	GPUPLAN_CATALOG= XDG_CONFIG_HOME=/nonexistent ./gpuplan validate --ranges validation/cases.json > validation/ranges.lua.tmp
	mv validation/ranges.lua.tmp validation/ranges.lua

# The fuzz targets (tests/lua/fuzz_*.t) run a fixed, seeded number of
# inputs in `make test`; here FUZZ_SCALE times as many (a few minutes).
fuzz: gpuplan
	GPUPLAN_FUZZ_SCALE=$(FUZZ_SCALE) GPUPLAN_FUZZ_SEED=$(FUZZ_SEED) \
		$(PROVE) -v --exec './gpuplan run' tests/lua/fuzz_*.t

bench/sweep_bench.o: bench/sweep_bench.c $(HEADERS) $(BUILD_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

bench/sweep_bench: bench/sweep_bench.o libgpuplan.a $(BUILD_STAMP)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $< libgpuplan.a -lm

bench: gpuplan $(if $(BENCH_SRC),bench/sweep_bench)
	@if [ -x bench/sweep_bench ]; then ./bench/sweep_bench; fi
	./gpuplan run bench/bench.lua

# The references generated from the declarations (gpuplan.docgen): the CLI
# and Lua references, the man page and the bash completion.  tests/cli/docs.t
# fails when a committed one is not what this writes.
docs: gpuplan
	./gpuplan run tools/docs.lua

# What install copies under DATADIR; uninstall removes exactly these files
# (as the source tree lists them) and then the directories they leave
# empty, so a file someone else put there stays.
DATA_TREES := lua catalog scripts validation

install: gpuplan
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DATADIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 755 gpuplan $(DESTDIR)$(BINDIR)/gpuplan
	cp -R $(DATA_TREES) $(DESTDIR)$(DATADIR)/
	install -m 644 man/gpuplan.1 $(DESTDIR)$(MANDIR)/man1/gpuplan.1
	install -m 644 completion/gpuplan.bash $(DESTDIR)$(BASHCOMPDIR)/gpuplan

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/gpuplan $(DESTDIR)$(MANDIR)/man1/gpuplan.1 \
		$(DESTDIR)$(BASHCOMPDIR)/gpuplan
	find $(DATA_TREES) -type f | while IFS= read -r f; do \
		rm -f "$(DESTDIR)$(DATADIR)/$$f"; done
	find $(DATA_TREES) -depth -type d | while IFS= read -r d; do \
		rmdir "$(DESTDIR)$(DATADIR)/$$d" 2>/dev/null || true; done
	rmdir $(DESTDIR)$(DATADIR) 2>/dev/null || true

# Installs the Debian packages the build and tests need, when any is
# missing (through sudo when not root).
DEPS := liblua5.4-dev lua-filesystem lua-cjson make gcc libc6-dev perl \
        pkg-config parallel
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
deps:
	@if dpkg -s $(DEPS) >/dev/null 2>&1; then \
		echo "deps: all packages present"; \
	else \
		$(SUDO) apt-get update && \
		$(SUDO) apt-get install -y --no-install-recommends $(DEPS); \
	fi

clean:
	rm -f gpuplan libgpuplan.a engine/*.o $(BUILD_STAMP) tests/c/*.t \
		tests/c/*.o bench/sweep_bench bench/*.o
