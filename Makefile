# SPDX-License-Identifier: GPL-2.0-or-later
# blackout — plain Makefile. `make` builds build/libblackout.a and build/blackout.
# Targets: all, check, check-unit, check-compat, check-asan, check-format, check-long, bench,
# fuzz, demo, man, install, uninstall, clean. BUILD=dir builds elsewhere (check-asan
# uses build/asan). PREFIX (/usr/local) and DESTDIR as usual: see "install" below.

BUILD    ?= build
CC       ?= cc
OPT      ?= -O2
SAN      ?=
CFLAGS_WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
ISAL_CFLAGS := $(shell pkg-config --cflags libisal 2>/dev/null)
ISAL_LIBS   := $(shell pkg-config --libs libisal 2>/dev/null || echo -lisal)
# jansson reads and writes every JSON file (docs/json.md)
JSON_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)
JSON_LIBS   := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)
# libblkid: the signatures probe safety refuses (src/probe/safety.c)
BLKID_CFLAGS := $(shell pkg-config --cflags blkid 2>/dev/null)
BLKID_LIBS   := $(shell pkg-config --libs blkid 2>/dev/null || echo -lblkid)
CPPFLAGS += -D_GNU_SOURCE -Iinclude -Isrc
# Each .d names its object both as this make spells it and as an absolute path: a make
# run with BUILD=/abs/build (install.t) otherwise leaves .d files whose rules a plain
# `make` never matches, and a changed header then rebuilds nothing.
CFLAGS   += $(CFLAGS_WARN) $(OPT) -g $(SAN) $(ISAL_CFLAGS) $(JSON_CFLAGS) $(BLKID_CFLAGS) -MMD -MP \
            -MT $@ -MT $(abspath $@)
LDFLAGS  += $(SAN)
LDLIBS   += $(ISAL_LIBS) $(JSON_LIBS) $(BLKID_LIBS) -lm

LIB_SRCS  := $(sort $(filter-out src/cli/% src/nbd/% src/guest/%,$(wildcard src/*/*.c)))
CLI_SRCS  := $(sort $(wildcard src/cli/*.c))
TEST_SUPPORT := $(sort $(wildcard tests/support/*.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRCS := $(sort $(wildcard bench/bench_*.c))
FUZZ_SRCS := $(sort $(wildcard fuzz/fuzz_*.c))

LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
SUPPORT_OBJS := $(TEST_SUPPORT:%.c=$(BUILD)/obj/%.o)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

LIB := $(BUILD)/libblackout.a
# The guest's tree walker (src/guest/observe.c): static, copied into the initramfs by
# scripts/vm-build; not part of the library.
GUEST_OBSERVE := $(BUILD)/guest/bo-observe
# The guest's `probe write|verify` (src/guest/probe.c): static, into the initramfs too.
GUEST_PROBE := $(BUILD)/guest/bo-probe
CLI := $(BUILD)/blackout

PROVE ?= prove
PROVE_FLAGS ?= -j2 --timer
# The suites run as if make were not around them: a make a test starts (install.t,
# debian/rules) builds on its own terms, not inside this one's jobserver.
TEST_ENV := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL
# A script suite's prove gets BLACKOUT_FAILLOG=$(1) (after $(call faillog,FILE)): each
# failing script appends its failed tests with the lines before them (test-lib.sh), and
# that is printed after prove's summary, which names only test numbers, at the end of
# the log where CI shows it.
faillog = rm -f $(1); $(TEST_ENV) BLACKOUT_FAILLOG=$(CURDIR)/$(1)
faillog_show = || { echo "---- the failing scripts, each failed test with what it printed before it:"; \
	  cat $(1) 2>/dev/null; exit 1; }

# Every build uses every core without -j on the command line: `.ci/run` is a bare
# `make check`, which compiled the library five times over (plain, PIC, ASan, fuzz and
# the unit tests' links) on one core. Only the top-level make sets it; sub-makes share
# its jobserver; `make -j1` still wins. Targets that install packages first (check,
# demo, bench) do so in their recipe, before any build starts.
NPROC := $(shell nproc 2>/dev/null || echo 1)
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j$(NPROC)
endif

.PHONY: all deps check check-unit check-compat check-vm check-asan check-format check-fuzz check-long \
	bench fuzz demo clean format unit man install uninstall

all: $(LIB) $(CLI) $(GUEST_OBSERVE) $(GUEST_PROBE)

deps:
	@scripts/install-deps

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(CLI): $(CLI_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS)

$(BUILD)/tests/unit/%: tests/unit/%.c $(SUPPORT_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) $(LDFLAGS) -o $@ $< $(SUPPORT_OBJS) $(LIB) $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS) $(BENCH_LIBS_$*)

unit: $(UNIT_BINS)

GUEST_OBSERVE_SRCS := src/guest/observe.c src/guest/apply.c src/guest/fsop.c src/guest/dm.c src/guest/look.c src/crash/md5.c src/vm/delta.c \
                      src/util/err.c src/util/fdio.c src/util/grow.c
$(GUEST_OBSERVE): $(GUEST_OBSERVE_SRCS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_WARN) -O2 -static -o $@ $(GUEST_OBSERVE_SRCS) -lm

# the probe's driver and what it needs: no CLI, no safety checks (the guest writes the
# device it was given), no TCP listener, no in-process models
GUEST_PROBE_SRCS := src/guest/probe.c \
	$(filter-out src/probe/inproc.c src/probe/net.c src/probe/safety.c src/probe/timing.c,$(wildcard src/probe/*.c)) \
	src/blk/blk.c src/blk/pages.c \
	src/util/err.c src/util/util.c src/util/num.c src/util/fdio.c
$(GUEST_PROBE): $(GUEST_PROBE_SRCS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS_WARN) -O2 -static -o $@ $(GUEST_PROBE_SRCS) -lm

# ---- tests -------------------------------------------------------------------
check:
	@scripts/install-deps
	$(MAKE) all unit
	$(MAKE) check-format
	$(MAKE) check-unit
	$(MAKE) check-compat
	$(MAKE) check-vm
	$(MAKE) check-asan
	$(MAKE) check-fuzz
	@echo "make check: all suites passed"

check-unit: unit
	$(TEST_ENV) BLACKOUT_SRC=$(CURDIR) $(PROVE) $(PROVE_FLAGS) --exec '' $(UNIT_BINS)

check-compat: all
	@if ls tests/compat/*.t >/dev/null 2>&1; then \
	  $(call faillog,$(BUILD)/compat.fail) BLACKOUT=$(CURDIR)/$(CLI) BLACKOUT_SRC=$(CURDIR) \
	  BUILD=$(CURDIR)/$(BUILD) $(PROVE) $(PROVE_FLAGS) tests/compat/*.t \
	  $(call faillog_show,$(BUILD)/compat.fail); \
	else echo "check-compat: no compat tests yet"; fi

# Real Linux in qemu on modelled stacks (tests/vm, docs/vmtest.md). Two scripts at a
# time: one after the other they kept 0.74 of the 2 cores busy (936 s of CPU in 1268 s,
# over the 20 minutes the suite may take); each guest is one TCG-emulated CPU, and
# every script bounds its guests and states with timeouts that hold under that load.
# The longest scripts start first (prove keeps the order given): last in alphabetical
# order, vm_realkernel.t ran its final minute beside an idle slot.
VM_JOBS ?= 2
VM_SLOW := $(wildcard tests/vm/vm_md.t tests/vm/vm_apps.t tests/vm/vm_integrity.t \
	tests/vm/vm_realkernel.t)
VM_TESTS := $(VM_SLOW) $(filter-out $(VM_SLOW),$(sort $(wildcard tests/vm/*.t)))
check-vm: all
	@if ls tests/vm/*.t >/dev/null 2>&1; then \
	  $(call faillog,$(BUILD)/vm.fail) BLACKOUT=$(CURDIR)/$(CLI) BLACKOUT_SRC=$(CURDIR) \
	  BUILD=$(CURDIR)/$(BUILD) $(PROVE) --timer -j$(VM_JOBS) $(VM_TESTS) \
	  $(call faillog_show,$(BUILD)/vm.fail); \
	else echo "check-vm: no vm tests"; fi

# Long acceptance runs kept out of make check (every tests/long/*.t: the real kernel
# and md at the acceptance's scale, fsck -y over 840 damaged images; docs/testing.md),
# run on demand, two scripts at a time as the vm suite.
check-long: all
	@if ls tests/long/*.t >/dev/null 2>&1; then \
	  $(call faillog,$(BUILD)/long.fail) BLACKOUT=$(CURDIR)/$(CLI) BLACKOUT_SRC=$(CURDIR) \
	  BUILD=$(CURDIR)/$(BUILD) $(PROVE) --timer -j$(VM_JOBS) tests/long/*.t \
	  $(call faillog_show,$(BUILD)/long.fail); \
	else echo "check-long: no long tests"; fi

# The unit tests again under AddressSanitizer and UndefinedBehaviorSanitizer, and the
# CLI on the damaged-image generator (fsck_damage.t) and the journal/superblock tests;
# fs_damage.t there on one seed of each corrupt kind (check-compat runs three, the
# long run eight): the sanitizers look for memory errors, which every kind reaches.
check-asan:
	$(MAKE) BUILD=build/asan OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  unit build/asan/blackout
	$(TEST_ENV) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  BLACKOUT_SRC=$(CURDIR) BLACKOUT_ASAN=1 \
	  $(PROVE) $(PROVE_FLAGS) --exec '' $(patsubst $(BUILD)/%,build/asan/%,$(UNIT_BINS))
	$(call faillog,build/asan/cli.fail) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 \
	  BLACKOUT=$(CURDIR)/build/asan/blackout BLACKOUT_SRC=$(CURDIR) BUILD=$(CURDIR)/build/asan \
	  FS_DAMAGE_SEEDS=1 $(PROVE) $(PROVE_FLAGS) tests/compat/fsck_damage.t tests/compat/fsck_journal.t \
	  tests/compat/fsck_backup_sb.t tests/compat/jbd_recover_fs.t tests/compat/fs_damage.t \
	  tests/compat/fs_precheck.t $(call faillog_show,build/asan/cli.fail)

FORMAT_FILES = $(sort $(wildcard include/blackout/*.h src/*/*.c src/*/*.h tests/*/*.c \
	tests/*/*.h bench/*.c bench/*.h fuzz/*.c apps/*/*.c))
check-format:
	clang-format --dry-run -Werror $(FORMAT_FILES)
format:
	clang-format -i $(FORMAT_FILES)

# ---- fuzzing (clang libFuzzer) -------------------------------------------------
FUZZ_BUILD := build/fuzz
FUZZ_SAN := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_SECONDS ?= 20
FUZZ_TIMEOUT ?= 30
FUZZ_BINS := $(FUZZ_SRCS:fuzz/%.c=$(FUZZ_BUILD)/%)

$(FUZZ_BUILD)/lib.a: $(LIB_SRCS)
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 SAN="$(FUZZ_SAN)" $(FUZZ_BUILD)/libblackout.a
	cp $(FUZZ_BUILD)/libblackout.a $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c $(FUZZ_BUILD)/lib.a
	clang $(CPPFLAGS) $(CFLAGS_WARN) -O1 -g -fsanitize=fuzzer,address,undefined \
	  $(ISAL_CFLAGS) $(JSON_CFLAGS) -o $@ $< $(FUZZ_BUILD)/lib.a $(ISAL_LIBS) $(JSON_LIBS) -lm

# Short runs from each target's seed corpus; crashes are saved under build/fuzz/. An
# input that runs over FUZZ_TIMEOUT seconds is a failure (a hang found), saved the same
# way: libFuzzer's own limit is 20 minutes an input, and -max_total_time is only looked
# at between inputs (a hang in fuzz_md_journal once held check-fuzz for minutes).
fuzz: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do n=$$(basename $$f); \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$n; \
	  echo "fuzz: $$n for $(FUZZ_SECONDS)s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -timeout=$(FUZZ_TIMEOUT) -artifact_prefix=$(FUZZ_BUILD)/$$n- \
	    -print_final_stats=0 $(FUZZ_BUILD)/corpus/$$n fuzz/corpus/$$n 2>$(FUZZ_BUILD)/$$n.log \
	    || { tail -40 $(FUZZ_BUILD)/$$n.log; exit 1; }; done

check-fuzz:
	$(MAKE) fuzz FUZZ_SECONDS=5

# ---- nbdkit plugin (src/nbd, docs/nbd.md) ----------------------------------------
# A shared object nbdkit loads: src/nbd/*.c compiled -fPIC and linked with a separate
# PIC build of libblackout in $(BUILD)/pic. Built by `all` only where nbdkit-plugin-dev
# (the header; there is no library) is installed. nbdkit_* symbols resolve at load time.
NBD_PLUGIN := $(BUILD)/blackout-nbdkit.so
NBD_OBJS := $(patsubst src/nbd/%.c,$(BUILD)/pic/nbd/%.o,$(sort $(wildcard src/nbd/*.c)))
ifneq ($(wildcard /usr/include/nbdkit-plugin.h),)
all: $(NBD_PLUGIN)
endif
# Always asks the sub-make (it knows the header dependencies); the plugin relinks only
# when the archive really changed.
.PHONY: FORCE
$(BUILD)/pic/libblackout.a: FORCE
	$(MAKE) BUILD=$(BUILD)/pic SAN="$(SAN) -fPIC" $@
$(BUILD)/pic/nbd/%.o: src/nbd/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -pthread -c $< -o $@
$(NBD_PLUGIN): $(NBD_OBJS) $(BUILD)/pic/libblackout.a
	$(CC) -shared $(LDFLAGS) -pthread -o $@ $^ $(LDLIBS)
# The control-protocol parser is fuzzed on its own (it is not in the library).
$(FUZZ_BUILD)/fuzz_nbd_control: fuzz/fuzz_nbd_control.c src/nbd/control.c $(FUZZ_BUILD)/lib.a
	clang $(CPPFLAGS) $(CFLAGS_WARN) -O1 -g -fsanitize=fuzzer,address,undefined \
	  $(ISAL_CFLAGS) $(JSON_CFLAGS) -o $@ $^ $(ISAL_LIBS) $(JSON_LIBS) -lm
-include $(NBD_OBJS:.o=.d)

# ---- the LevelDB example of blackout app (apps/leveldb, docs/apps.md) -------------
# A small program against Debian's libleveldb, carried into the guest with --with (its
# libraries follow it). Built by `all` only where libleveldb-dev is installed.
APP_LEVELDB := $(BUILD)/apps/bo-leveldb
ifneq ($(wildcard /usr/include/leveldb/c.h),)
all: $(APP_LEVELDB)
endif
$(APP_LEVELDB): apps/leveldb/bo-leveldb.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< -lleveldb

# ---- benchmarks and the demo --------------------------------------------------
# libext2fs is the peer of the filesystem benchmark
BENCH_LIBS_bench_fs = -lext2fs -lcom_err

BENCH_LIBS_bench_nbd = -lnbd
# Each benchmark prints its figures beside their goals ("goal: ... met|MISSED",
# bench/bench_goal.h); the misses are listed again at the end. Speed never fails it.
bench:
	@scripts/install-deps
	$(MAKE) all $(BENCH_BINS)
	@out=$$(mktemp) && for b in $(BENCH_BINS); do echo "== $$(basename $$b)"; \
	  { BLACKOUT=$(CURDIR)/$(CLI) $$b; echo $$? >$$out.rc; } | tee -a $$out; \
	  [ "$$(cat $$out.rc)" = 0 ] || { rm -f $$out $$out.rc; exit 1; }; echo; done; \
	echo "== goals: $$(grep -c '^goal:.* met$$' $$out) met, $$(grep -c '^goal:.*MISSED$$' $$out) missed"; \
	grep '^goal:.*MISSED$$' $$out; rm -f $$out $$out.rc; true

demo:
	@scripts/install-deps
	$(MAKE) all
	scripts/demo

# ---- install (docs/install.md) ---------------------------------------------------
# The binary; the vmtest harness in LIBEXECDIR (found by the binary through
# BINDIR/../lib/blackout, else the path compiled in below); the nbdkit plugin as
# nbdkit-blackout-plugin.so in nbdkit's plugin directory with its /usr prefix
# swapped for PREFIX (with PREFIX=/usr, `nbdkit blackout` finds it by name); man pages
# made from the --help texts; the docs.
VERSION    := 0.1
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/lib/blackout
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/blackout
NBDKIT_PLUGINDIR ?= $(or $(shell nbdkit --dump-config 2>/dev/null | \
	sed -n 's|^plugindir=/usr/|$(PREFIX)/|p'),$(PREFIX)/lib/nbdkit/plugins)
$(BUILD)/obj/src/cli/cmd_vmtest.o: CPPFLAGS += -DBLACKOUT_LIBEXECDIR='"$(LIBEXECDIR)"'
$(BUILD)/obj/src/cli/main.o: CPPFLAGS += -DBLACKOUT_VERSION='"$(VERSION)"'

# The pages name DOCDIR, so they are made again when it (or PREFIX) changes: the
# stamp's name carries a hash of it.
MAN_KEY   := $(shell printf '%s' '$(VERSION) $(DOCDIR)' | cksum | cut -d' ' -f1)
MAN_STAMP := $(BUILD)/man/.stamp-$(MAN_KEY)
man: $(MAN_STAMP)
$(MAN_STAMP): $(CLI) scripts/gen-man
	rm -rf $(BUILD)/man
	scripts/gen-man $(CLI) $(BUILD)/man $(VERSION) $(DOCDIR)
	touch $@

install: all man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DOCDIR) \
	  $(DESTDIR)$(LIBEXECDIR)/scripts $(DESTDIR)$(LIBEXECDIR)/src/guest \
	  $(DESTDIR)$(LIBEXECDIR)/guest
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/blackout
	install -m 755 $(GUEST_OBSERVE) $(GUEST_PROBE) $(DESTDIR)$(LIBEXECDIR)/guest/
	install -m 755 scripts/vmtest scripts/vmrecord scripts/vm-build $(DESTDIR)$(LIBEXECDIR)/scripts/
	install -m 644 scripts/vm-lib.sh $(DESTDIR)$(LIBEXECDIR)/scripts/
	install -m 755 src/guest/guest-init $(DESTDIR)$(LIBEXECDIR)/src/guest/
	install -m 644 src/guest/guest-fs.sh src/guest/guest-probe.sh src/guest/guest-app.sh \
		src/guest/guest-integrity.sh src/guest/guest-md.sh $(DESTDIR)$(LIBEXECDIR)/src/guest/
	install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	cp -R docs $(DESTDIR)$(DOCDIR)/
	install -m 644 README.md $(DESTDIR)$(DOCDIR)/
	@if [ -f $(NBD_PLUGIN) ]; then set -x; \
	  install -d $(DESTDIR)$(NBDKIT_PLUGINDIR); \
	  install -m 755 $(NBD_PLUGIN) $(DESTDIR)$(NBDKIT_PLUGINDIR)/nbdkit-blackout-plugin.so; \
	  ln -sfr $(DESTDIR)$(NBDKIT_PLUGINDIR)/nbdkit-blackout-plugin.so \
	    $(DESTDIR)$(LIBEXECDIR)/blackout-nbdkit.so; \
	else echo "install: no nbdkit plugin (nbdkit-plugin-dev missing): not installed"; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/blackout $(DESTDIR)$(NBDKIT_PLUGINDIR)/nbdkit-blackout-plugin.so
	rm -f $(DESTDIR)$(MANDIR)/man1/blackout.1 $(DESTDIR)$(MANDIR)/man1/blackout-*.1
	rm -rf $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(DOCDIR)

clean:
	rm -rf build

# a unit test rebuilds when a header it includes changes (tap.h, test_*.h)
-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(SUPPORT_OBJS:.o=.d) $(UNIT_BINS:=.d)
