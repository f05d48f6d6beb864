# timingfs: the Windows timing APIs as a FUSE filesystem.
#
#   make          build ./timingfs and the test programs
#   make check    install what is missing, build, run the TAP suite
#   make run      install what is missing, build, mount at ./mnt
#   make check-sanitize  the suite under ASan and UBSan
#   make bench    read cost against a do-nothing libfuse3 filesystem
#   make install  PREFIX=/usr/local DESTDIR= SYSCONFDIR=/etc: the daemon,
#                 its scripts, man page, systemd unit and configuration
#   make uninstall  all of that but the configuration

VERSION = 0.1.0

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
DESTDIR ?=
MOUNTPOINT ?= mnt
CONFIG ?= conf/timingfs.conf

CC ?= cc
PKG_CONFIG ?= pkg-config
PKGS = fuse3 inih libmnl
CFLAGS ?= -O2 -g
WARN = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
ALL_CFLAGS = -std=gnu11 $(WARN) -D_GNU_SOURCE -DTIMINGFS_VERSION='"$(VERSION)"' \
	     -Isrc $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
LDLIBS = $(PKG_LIBS) -lpthread

# The engine, configuration and rendering: everything but the FUSE
# layer and main, linked into the daemon and every unit test.
LIB_SRCS = $(filter-out src/main.c src/fs.c,$(wildcard src/*.c))
LIB_OBJS = $(LIB_SRCS:.c=.o)
DAEMON_OBJS = $(LIB_OBJS) src/fs.o src/main.o

UNIT_SRCS = $(wildcard t/unit-*.c)
UNIT_BINS = $(patsubst t/%.c,t/bin/%,$(UNIT_SRCS))
HELPER_SRCS = $(wildcard t/helper-*.c)
HELPER_BINS = $(patsubst t/%.c,t/bin/%,$(HELPER_SRCS))

.PHONY: all check check-sanitize run bench deps install uninstall clean format

# The scripts for shell users and Prometheus, installed with the daemon.
SCRIPTS = scripts/timingtop scripts/timingfs-exporter

all: timingfs timingfs.8 $(UNIT_BINS) $(HELPER_BINS)

# The man page (mdoc, src/timingfs.8) with the version filled in.
timingfs.8: src/timingfs.8 Makefile
	sed 's/@VERSION@/$(VERSION)/' src/timingfs.8 >$@

timingfs: $(DAEMON_OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $(DAEMON_OBJS) $(LDFLAGS) $(LDLIBS)

src/%.o: src/%.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

t/bin/unit-%: t/unit-%.c t/tap.h $(LIB_OBJS)
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -It -o $@ $< $(LIB_OBJS) $(LDFLAGS) $(LDLIBS)

t/bin/helper-%: t/helper-%.c
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -It -o $@ $< $(LDFLAGS) -lpthread

# The benchmark's programs: the do-nothing floor, the reader, and the
# big processes (with the reader of their tables).
BENCH_BINS = t/bin/floorfs t/bin/bench-read t/bin/bench-threads

t/bin/floorfs: scripts/floorfs.c
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) $(LDLIBS)

t/bin/bench-read: scripts/bench-read.c
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS)

t/bin/bench-threads: scripts/bench-threads.c
	@mkdir -p t/bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS) -lpthread

# Installs the Debian packages the build and the suite need when
# pkg-config, prove or fusermount3 cannot find them.
deps:
	@scripts/install-deps

check: deps
	@$(MAKE) --no-print-directory all
	prove -v --timer t/

# The whole suite again with AddressSanitizer and UBSan in every binary
# (t/asan.supp says what is suppressed, and why).
SANITIZE = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined
check-sanitize: deps
	@$(MAKE) --no-print-directory clean
	@ASAN_OPTIONS=suppressions=$(CURDIR)/t/asan.supp \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		$(MAKE) --no-print-directory check CFLAGS='$(SANITIZE)' \
		LDFLAGS='-fsanitize=address,undefined'
	@$(MAKE) --no-print-directory clean

run: deps
	@$(MAKE) --no-print-directory timingfs
	@mkdir -p $(MOUNTPOINT)
	./timingfs -f -c $(CONFIG) $(MOUNTPOINT)

bench: deps
	@$(MAKE) --no-print-directory all $(BENCH_BINS)
	scripts/bench

# The unit is written with the daemon's installed path in it.
install: timingfs timingfs.8
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR) \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(UNITDIR)
	install -m 0755 timingfs $(SCRIPTS) $(DESTDIR)$(BINDIR)/
	install -m 0644 timingfs.8 $(DESTDIR)$(MANDIR)/man8/timingfs.8
	sed 's|@BINDIR@|$(BINDIR)|g' conf/timingfs.service \
		>$(DESTDIR)$(UNITDIR)/timingfs.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/timingfs.service
	test -e $(DESTDIR)$(SYSCONFDIR)/timingfs.conf || \
		install -m 0644 conf/timingfs.conf $(DESTDIR)$(SYSCONFDIR)/timingfs.conf

# Everything install put there but the configuration, which may hold
# the administrator's changes.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/timingfs \
		$(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(SCRIPTS))) \
		$(DESTDIR)$(MANDIR)/man8/timingfs.8 \
		$(DESTDIR)$(UNITDIR)/timingfs.service

format:
	clang-format -i src/*.c src/*.h t/*.c t/*.h scripts/*.c

clean:
	rm -f timingfs timingfs.8 src/*.o src/*.d
	rm -rf t/bin t/trash.*

-include $(wildcard src/*.d t/bin/*.d)
