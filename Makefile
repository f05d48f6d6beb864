# timingfs: the Windows timing APIs as a FUSE filesystem.
#
#   make          build ./timingfs, libtimingfs (src/lib), its example
#                 (examples/) and the test programs
#   make check    install what is missing, build, check the layers, run
#                 the TAP suite
#   make check-layers  an include that runs up a layer fails the build
#   make run      install what is missing, build, mount at ./mnt
#   make check-sanitize  the suite under ASan and UBSan
#   make check-stress    the suite three times in a row while stress-ng
#                 loads every CPU (not in CI: it shows what a loaded
#                 machine does to the tests' waits)
#   make fuzz     each libFuzzer target in t/fuzz for FUZZ_TIME=60 s
#                 (clang, FUZZ_CC, installed when missing); fuzz-merge
#                 adds what they found to the committed corpus
#   make bench    read cost against a do-nothing libfuse3 filesystem and
#                 against the daemon before the supervisor (BENCH_BEFORE)
#   make install  PREFIX=/usr/local DESTDIR= SYSCONFDIR=/etc LIBDIR=: the
#                 daemon, its scripts, man pages, systemd unit and
#                 configuration; libtimingfs, its headers, timingfs.pc
#   make uninstall  all of that but the configuration
#   make deb      Debian packages of that, dist/timingfs_VERSION-REV_ARCH.deb
#                 and libtimingfs0_..., libtimingfs-dev_... beside it
#                 (debhelper, conf/debian; installed when missing)
#   make check-package  make deb, then as root: lintian, dpkg -i, a mount
#                 by the installed daemon, dpkg -r and --purge leave
#                 nothing behind (scripts/check-package)

VERSION = 0.1.0

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
EXAMPLEDIR ?= $(PREFIX)/share/doc/libtimingfs-dev/examples
SYSCONFDIR ?= /etc
DESTDIR ?=
MOUNTPOINT ?= mnt
CONFIG ?= conf/timingfs.conf

CC ?= cc
PKG_CONFIG ?= pkg-config
CFLAGS ?= -O2 -g
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
PKG_LIBS = $(shell $(PKG_CONFIG) --libs fuse3 inih libmnl libbpf 2>/dev/null)
DEFS = -std=gnu11 $(WARN) -D_GNU_SOURCE -DTIMINGFS_VERSION='"$(VERSION)"'
LDLIBS = $(PKG_LIBS) -lpthread

# The layers, each a folder of src/, from the bottom up (docs/design.md,
# "Layers"). A layer's files see the headers of their own
# folder and of the layers below it, and no others: the engine's are
# compiled without FUSE's include path or the tree's, so that an
# include that runs back up fails the build (make check-layers).
#   shared  the policies every layer names, decimal numbers, a hash
#           table, clock readings, the control protocol, logging
#   engine  the kernel's sources, tasks, views, exited tasks (libmnl),
#           the BPF task iterator (libbpf; src/engine/bpf, below)
#   tree    the names of the mount, snapshots, rendering
#   fuse    the FUSE operations, the workers (libfuse3), the inode
#           records and the budgets of memory
#   daemon  command line, configuration (inih), lifetime, attach
#   ctl     timingfsctl: shared only
#   lib     libtimingfs.so.0, the public library: nothing of the others
#           (it reads a mount's files), compiled for a shared object
#           with only its API visible
LAYERS = shared engine tree fuse daemon ctl lib
INC_shared = -Isrc/shared
INC_engine = -Isrc/engine -Isrc/engine/bpf $(INC_shared) \
	     $(shell $(PKG_CONFIG) --cflags libmnl libbpf 2>/dev/null)
INC_tree = -Isrc/tree $(INC_engine)
INC_fuse = -Isrc/fuse $(INC_tree) \
	   $(shell $(PKG_CONFIG) --cflags fuse3 2>/dev/null)
INC_daemon = -Isrc/daemon $(INC_fuse) \
	     $(shell $(PKG_CONFIG) --cflags inih 2>/dev/null)
INC_ctl = -Isrc/ctl $(INC_shared)
INC_lib = -Isrc/lib
CFLAGS_lib = -fPIC -fvisibility=hidden -DTIMINGFS_BUILDING
# Tests, fuzz targets and tools outside src/ see every layer.
BASE_CFLAGS = $(DEFS) $(INC_daemon)
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) -MMD -MP

SRCS = $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
OBJS = $(SRCS:.c=.o)
# Everything but the two programs' mains and the public library, as an
# archive internal to the build (not libtimingfs, which is src/lib's
# shared object): the daemon, every unit test and fuzz replay link what
# they use of it.
LIB_SRCS = $(filter-out src/daemon/main.c src/ctl/timingfsctl.c \
	src/lib/%,$(SRCS))
LIB_OBJS = $(LIB_SRCS:.c=.o)
LIB = src/libtimingfs-internal.a

# libtimingfs (src/lib): its ABI version, apart from the package's.
SO_VERSION = 0.1.0
SO_MAJOR = 0
SO_NAME = libtimingfs.so.$(SO_MAJOR)
SO_OBJS = $(patsubst %.c,%.o,$(wildcard src/lib/*.c))
SO_FILE = src/lib/libtimingfs.so.$(SO_VERSION)
SO_LINKS = src/lib/$(SO_NAME) src/lib/libtimingfs.so
SO_HEADERS = src/lib/timingfs.h src/lib/timingfs/windows.h
CTL_OBJS = src/ctl/timingfsctl.o src/shared/control.o

UNIT_SRCS = $(wildcard t/unit-*.c)
UNIT_BINS = $(patsubst t/%.c,t/bin/%,$(UNIT_SRCS))
HELPER_SRCS = $(wildcard t/helper-*.c)
HELPER_BINS = $(patsubst t/%.c,t/bin/%,$(HELPER_SRCS))
# The tests of libtimingfs's API against a mount (t/api-*.c), linked
# with its objects, so that another user runs them from a copy of t/bin.
API_SRCS = $(wildcard t/api-*.c)
API_BINS = $(patsubst t/%.c,t/bin/%,$(API_SRCS))
EXAMPLES = examples/cycles
# The fuzz targets (t/fuzz/fuzz-NAME.c), each also built to replay inputs.
FUZZ_NAMES = $(patsubst t/fuzz/fuzz-%.c,%,$(wildcard t/fuzz/fuzz-*.c))
REPLAY_BINS = $(addprefix t/bin/replay-,$(FUZZ_NAMES))

.PHONY: install-lib lib all check check-layers check-sanitize check-stress run bench deps install uninstall clean format \
	fuzz fuzz-deps fuzz-merge fuzz-seeds fuzz-clean deb deb-deps check-package

# The scripts for shell users, Prometheus and OCI runtimes, installed
# with the daemon.
SCRIPTS = scripts/timingtop scripts/timingfs-exporter scripts/timingfs-oci-hook
# Their manual pages (the hook's is timingfs(8), by a link).
SCRIPT_PAGES = scripts/timingtop.1 scripts/timingfs-exporter.1

all: timingfs timingfsctl timingfs.8 $(UNIT_BINS) $(HELPER_BINS) $(REPLAY_BINS) \
	t/bin/timingfs-next $(SO_FILE) $(SO_LINKS) $(API_BINS) \
	$(EXAMPLES)

# The man page (mdoc, src/daemon/timingfs.8) with the version filled in.
timingfs.8: src/daemon/timingfs.8 Makefile
	sed 's/@VERSION@/$(VERSION)/' src/daemon/timingfs.8 >$@

timingfs: src/daemon/main.o $(LIB)
	$(CC) $(CFLAGS) -o $@ src/daemon/main.o $(LIB) $(LDFLAGS) $(LDLIBS)

timingfsctl: $(CTL_OBJS)
	$(CC) $(CFLAGS) -o $@ $(CTL_OBJS) $(LDFLAGS)

$(LIB): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJS)

# Each layer's objects with its own include path (and flags).
define layer_rule
src/$(1)/%.o: src/$(1)/%.c
	$$(CC) $$(DEFS) $$(INC_$(1)) $$(CFLAGS_$(1)) $$(CFLAGS) -MMD -MP -c -o $$@ $$<
endef
$(foreach l,$(LAYERS),$(eval $(call layer_rule,$(l))))

# libtimingfs: the shared object, its SONAME and development links.
$(SO_FILE): $(SO_OBJS)
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(SO_NAME) -o $@ $(SO_OBJS) \
		$(LDFLAGS) -lpthread

lib: $(SO_FILE) $(SO_LINKS)

$(SO_LINKS): $(SO_FILE)
	ln -sf $(notdir $(SO_FILE)) $@

t/bin/api-%: t/api-%.c t/tap.h $(SO_OBJS) $(SO_HEADERS)
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -Isrc/lib -It -o $@ $< $(SO_OBJS) $(LDFLAGS) \
		-lpthread

# The example, as a program of its user builds it: the headers and the
# shared object, found beside it in the tree.
examples/%: examples/%.c $(SO_HEADERS) $(SO_LINKS)
	$(CC) $(DEFS) -Isrc/lib $(CFLAGS) -o $@ $< -Lsrc/lib -ltimingfs \
		-Wl,-rpath,'$$ORIGIN/../src/lib' $(LDFLAGS)

# The BPF task iterator (src/engine/bpf/tasks.bpf.c), compiled by clang
# for the BPF target and made into a libbpf skeleton by bpftool, which
# taskpass.c includes. The object needs no vmlinux.h: its kernel types
# are relocated at load (CO-RE), so it builds without the kernel's BTF.
BPF_CLANG ?= clang
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || echo /usr/sbin/bpftool)
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
BPF_SKEL = src/engine/bpf/tasks.skel.h

src/engine/bpf/tasks.bpf.o: src/engine/bpf/tasks.bpf.c src/engine/bpf/task_rec.h
	$(BPF_CLANG) -g -O2 -target bpf -Wall -Isrc/engine/bpf \
		$(if $(MULTIARCH),-I/usr/include/$(MULTIARCH)) -c -o $@ $<

$(BPF_SKEL): src/engine/bpf/tasks.bpf.o
	$(BPFTOOL) gen skeleton $< name tasks_bpf >$@.tmp && mv $@.tmp $@

src/engine/taskpass.o t/fuzz/obj/engine/taskpass.o: $(BPF_SKEL)

# An include that runs back up fails the build: a copy of src/ in which
# an engine file includes the FUSE layer's header, and one in which it
# includes libfuse's, must each fail to compile; src/ as it is compiles.
check-layers:
	@scripts/check-layers

t/bin/unit-%: t/unit-%.c t/tap.h $(LIB)
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -It -o $@ $< $(LIB) $(LDFLAGS) $(LDLIBS)

# The daemon built anew, as version $(VERSION)+next: what t2201 upgrades
# a running daemon to. The two files that name the version are compiled
# again; the linker takes the rest from the archive.
NEXT_DEFS = -UTIMINGFS_VERSION -DTIMINGFS_VERSION='"$(VERSION)+next"'
t/bin/timingfs-next: src/daemon/main.c src/tree/nodes.c $(LIB)
	@mkdir -p t/bin/next
	$(CC) $(DEFS) $(NEXT_DEFS) $(INC_daemon) $(CFLAGS) -c \
		-o t/bin/next/main.o src/daemon/main.c
	$(CC) $(DEFS) $(NEXT_DEFS) $(INC_tree) $(CFLAGS) -c \
		-o t/bin/next/nodes.o src/tree/nodes.c
	$(CC) $(CFLAGS) -o $@ t/bin/next/main.o t/bin/next/nodes.o $(LIB) \
		$(LDFLAGS) $(LDLIBS)

t/bin/helper-%: t/helper-%.c
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -It -o $@ $< $(LDFLAGS) -lpthread

# The benchmark's programs: the do-nothing floor, the reader, and the
# big processes (with the reader of their tables).
BENCH_BINS = t/bin/floorfs t/bin/bench-read t/bin/bench-threads \
	t/bin/bench-lib

t/bin/floorfs: scripts/floorfs.c
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) $(LDLIBS)

t/bin/bench-read: scripts/bench-read.c
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS)

# The library against an open+read+close (scripts/bench, "library"):
# linked with the shared object, as a program of its user is.
t/bin/bench-lib: scripts/bench-lib.c $(SO_HEADERS) $(SO_LINKS)
	@mkdir -p t/bin
	$(CC) $(DEFS) -Isrc/lib $(CFLAGS) -o $@ $< -Lsrc/lib -ltimingfs \
		-Wl,-rpath,'$$ORIGIN/../../src/lib' $(LDFLAGS)

t/bin/bench-threads: scripts/bench-threads.c
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) -lpthread

# Fuzzing: a libFuzzer target per parser, t/fuzz/fuzz-NAME.c. The normal
# build links each with t/fuzz/replay.c into t/bin/replay-NAME, which
# t0020 runs on its committed corpus (t/fuzz/corpus/NAME) and the inputs
# of the crashes found so far (t/fuzz/regress/NAME). make fuzz builds
# them with clang's libFuzzer, ASan and UBSan, from objects of their own
# in t/fuzz/obj, and runs each for FUZZ_TIME seconds on a scratch corpus
# in t/fuzz/work (t/fuzz/run says how).
FUZZ_CC ?= clang
FUZZ_TIME ?= 60
FUZZ_SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS = $(BASE_CFLAGS) -It/fuzz -O1 -g -fno-omit-frame-pointer \
	      $(FUZZ_SANITIZE) -MMD -MP
FUZZ_OBJS = $(patsubst src/%.c,t/fuzz/obj/%.o,$(LIB_SRCS))
FUZZ_LIB = t/fuzz/obj/libtimingfs-internal.a
FUZZ_BINS = $(addprefix t/fuzz/bin/fuzz-,$(FUZZ_NAMES))
.SECONDARY: $(FUZZ_OBJS) $(FUZZ_LIB) $(FUZZ_BINS)

t/bin/replay.o: t/fuzz/replay.c t/fuzz/fuzz.h
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -It/fuzz -c -o $@ $<

t/bin/replay-%: t/fuzz/fuzz-%.c t/fuzz/fuzz.h t/bin/replay.o $(LIB)
	$(CC) $(ALL_CFLAGS) -It/fuzz -o $@ $< t/bin/replay.o $(LIB) \
		$(LDFLAGS) $(LDLIBS)

t/fuzz/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJS)
	rm -f $@
	$(AR) rcs $@ $(FUZZ_OBJS)

t/fuzz/bin/fuzz-%: t/fuzz/fuzz-%.c t/fuzz/fuzz.h $(FUZZ_LIB)
	@mkdir -p t/fuzz/bin
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) \
		$(LDLIBS)

fuzz-deps:
	@FUZZ_CC='$(FUZZ_CC)' scripts/install-deps fuzz

# Every target runs (-k), whichever crashed; make -j2 fuzz runs two at once.
fuzz: fuzz-deps
	@$(MAKE) --no-print-directory -k $(addprefix fuzz-run-,$(FUZZ_NAMES))

fuzz-run-%: t/fuzz/bin/fuzz-%
	@t/fuzz/run $* $(FUZZ_TIME)

# What the last make fuzz found that covers more, added to the corpus.
fuzz-merge: fuzz-deps
	@$(MAKE) --no-print-directory -s $(FUZZ_BINS)
	@for name in $(FUZZ_NAMES); do \
		test -d t/fuzz/work/$$name || continue; \
		t/fuzz/bin/fuzz-$$name -merge=1 t/fuzz/corpus/$$name \
			t/fuzz/work/$$name 2>&1 | grep -E '^MERGE-OUTER: [0-9]+ new' | \
			sed "s/^MERGE-OUTER/$$name/"; \
	done

# The binary seeds (taskstats records, netlink messages) made anew.
fuzz-seeds: t/bin/make-seeds
	t/bin/make-seeds t/fuzz/corpus

t/bin/make-seeds: t/fuzz/make-seeds.c
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) $(LDLIBS)

fuzz-clean:
	rm -rf t/fuzz/work

# Installs the Debian packages the build and the suite need when
# pkg-config, prove or fusermount3 cannot find them.
deps:
	@scripts/install-deps

check: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory check-layers
	prove -v --timer t/

# The whole suite again with AddressSanitizer and UBSan in every binary
# (t/asan.supp says what is suppressed, and why).
SANITIZE = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined
check-sanitize: deps
	@$(MAKE) --no-print-directory clean
	@ASAN_OPTIONS="suppressions='$(CURDIR)/t/asan.supp'" \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$(MAKE) --no-print-directory check CFLAGS='$(SANITIZE)' \
		LDFLAGS='-fsanitize=address,undefined'
	@$(MAKE) --no-print-directory clean

# Every CPU busy with stress-ng (a worker each) while the suite runs
# three times in a row; stress-ng is stopped however the runs end.
STRESS_RUNS ?= 3
check-stress: deps
	@scripts/install-deps stress
	@$(MAKE) --no-print-directory all
	@stress-ng --cpu $$(nproc) --timeout 0 --quiet & load=$$!; \
	trap 'kill $$load 2>/dev/null; wait $$load 2>/dev/null' EXIT; \
	status=0; \
	for run in $$(seq 1 $(STRESS_RUNS)); do \
		echo "check-stress: run $$run of $(STRESS_RUNS), $$(nproc) CPU(s) loaded"; \
		prove --timer t/ || status=1; \
	done; \
	exit $$status

run: deps
	@$(MAKE) --no-print-directory timingfs
	@mkdir -p $(MOUNTPOINT)
	./timingfs -f -c $(CONFIG) $(MOUNTPOINT)

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_BINS)
	scripts/bench

# The unit is written with the daemon's installed path in it. timingfs(8)
# is also the manual of timingfsctl and the hook (its NAME names all
# three): man timingfsctl finds it by a link.
install: timingfs timingfsctl timingfs.8 install-lib
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 \
		$(DESTDIR)$(UNITDIR)
	install -m 0755 timingfs timingfsctl $(SCRIPTS) $(DESTDIR)$(BINDIR)/
	install -m 0644 $(SCRIPT_PAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 timingfs.8 $(DESTDIR)$(MANDIR)/man8/timingfs.8
	ln -sf timingfs.8 $(DESTDIR)$(MANDIR)/man8/timingfsctl.8
	ln -sf timingfs.8 $(DESTDIR)$(MANDIR)/man8/timingfs-oci-hook.8
	sed 's|@BINDIR@|$(BINDIR)|g' conf/timingfs.service \
		>$(DESTDIR)$(UNITDIR)/timingfs.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/timingfs.service
	test -e $(DESTDIR)$(SYSCONFDIR)/timingfs.conf || \
		install -m 0644 conf/timingfs.conf $(DESTDIR)$(SYSCONFDIR)/timingfs.conf

# libtimingfs: the shared object and its links, the headers, the
# pkg-config file (written with install's PREFIX and LIBDIR), the
# section 3 pages and the example's source.
LIB_PAGES = src/lib/timingfs.3 src/lib/timingfs-windows.3
install-lib: $(SO_FILE)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/timingfs \
		$(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man3 \
		$(DESTDIR)$(EXAMPLEDIR)
	install -m 0644 $(SO_FILE) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SO_FILE)) $(DESTDIR)$(LIBDIR)/$(SO_NAME)
	ln -sf $(SO_NAME) $(DESTDIR)$(LIBDIR)/libtimingfs.so
	install -m 0644 src/lib/timingfs.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 0644 src/lib/timingfs/windows.h \
		$(DESTDIR)$(INCLUDEDIR)/timingfs/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(SO_VERSION)|' src/lib/timingfs.pc.in \
		>$(DESTDIR)$(PKGCONFIGDIR)/timingfs.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/timingfs.pc
	install -m 0644 $(LIB_PAGES) $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 examples/cycles.c $(DESTDIR)$(EXAMPLEDIR)/

# Everything install put there but the configuration, which may hold
# the administrator's changes.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/timingfs $(DESTDIR)$(BINDIR)/timingfsctl \
		$(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(SCRIPTS))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(SCRIPT_PAGES))) \
		$(DESTDIR)$(MANDIR)/man8/timingfs.8 \
		$(DESTDIR)$(MANDIR)/man8/timingfsctl.8 \
		$(DESTDIR)$(MANDIR)/man8/timingfs-oci-hook.8 \
		$(DESTDIR)$(UNITDIR)/timingfs.service
	rm -f $(DESTDIR)$(LIBDIR)/$(notdir $(SO_FILE)) \
		$(DESTDIR)$(LIBDIR)/$(SO_NAME) $(DESTDIR)$(LIBDIR)/libtimingfs.so \
		$(DESTDIR)$(INCLUDEDIR)/timingfs.h \
		$(DESTDIR)$(INCLUDEDIR)/timingfs/windows.h \
		$(DESTDIR)$(PKGCONFIGDIR)/timingfs.pc \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(LIB_PAGES))) \
		$(DESTDIR)$(EXAMPLEDIR)/cycles.c
	-rmdir $(DESTDIR)$(INCLUDEDIR)/timingfs

# A Debian package of what make install installs, built by Debian's
# tools: a copy of the tree in a scratch directory, conf/debian as its
# debian/, dpkg-buildpackage there (debian/rules runs make install with
# Debian's paths), and only the .deb kept, in dist/. Its version is
# VERSION and the revision of conf/debian/changelog's first entry, which
# must be for VERSION. The outer make's flags stay out of the build.
DEB_VERSION = $(shell sed -n '1s/^timingfs (\(.*\)).*/\1/p' conf/debian/changelog)
DEB_ARCH = $(shell dpkg --print-architecture 2>/dev/null)
DEB = dist/timingfs_$(DEB_VERSION)_$(DEB_ARCH).deb
# The three packages of the source: the daemon's and the library's.
DEB_NAMES = $(foreach p,timingfs libtimingfs0 libtimingfs-dev,\
	$(p)_$(DEB_VERSION)_$(DEB_ARCH).deb)
DEB_TREE = Makefile src conf scripts examples README.md docs LICENSE

deb-deps:
	@scripts/install-deps deb

deb: deb-deps
	@case '$(DEB_VERSION)' in $(VERSION)-*) ;; *) \
		echo "make deb: conf/debian/changelog is at $(DEB_VERSION)," \
			"not $(VERSION)-REV: add an entry for it" >&2; \
		exit 1 ;; \
	esac
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	tree=$$tmp/timingfs-$(VERSION) && mkdir "$$tree" && \
	tar -cf - --exclude='*.o' --exclude='*.d' --exclude='*.a' \
		--exclude='libtimingfs.so*' --exclude=examples/cycles \
		--exclude=conf/debian $(DEB_TREE) | tar -xf - -C "$$tree" && \
	cp -R conf/debian "$$tree/debian" && \
	(cd "$$tree" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		dpkg-buildpackage -b -us -uc) && \
	mkdir -p dist && rm -f dist/timingfs_*.deb dist/libtimingfs*.deb && \
	for deb in $(DEB_NAMES); do cp "$$tmp/$$deb" dist/ || exit 1; done && \
	echo "make deb: $(addprefix dist/,$(DEB_NAMES))"

# Installs the package, checks it and removes it; refuses where timingfs
# is installed already. Root only; make check is not needed first.
check-package: deb
	@scripts/check-package $(DEB)

format:
	clang-format -i src/*/*.c src/*/*.h t/*.c t/*.h scripts/*.c t/fuzz/*.c \
		t/fuzz/*.h src/lib/timingfs/*.h examples/*.c

clean:
	rm -f timingfs timingfsctl timingfs.8 $(LIB) src/*/*.o src/*/*.d \
		src/engine/bpf/*.o $(BPF_SKEL) src/lib/libtimingfs.so* \
		$(EXAMPLES)
	rm -rf t/bin t/trash.* t/fuzz/obj t/fuzz/bin

-include $(wildcard src/*/*.d t/bin/*.d t/fuzz/obj/*/*.d t/fuzz/bin/*.d)
