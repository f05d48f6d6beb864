/*
 * helper-readers: every system call by which a Linux program reads a
 * file, made exactly, for the tests of what each reader gets.
 *
 *   helper-readers read PATH       read(2) to the end; the bytes on stdout
 *   helper-readers sendfile PATH   sendfile(2) from PATH to stdout (a file
 *                                  or a pipe) until it returns 0
 *   helper-readers splice PATH     splice(2) from PATH into a pipe until it
 *                                  returns 0, the pipe drained to stdout
 *   helper-readers copy PATH DEST  copy_file_range(2) from PATH to the new
 *                                  file DEST until it returns 0; when the
 *                                  kernel refuses (EXDEV, EOPNOTSUPP,
 *                                  EINVAL, ENOSYS) on the first call, say
 *                                  "refused NAME" on stderr and copy with
 *                                  read(2), as cp does
 *   helper-readers mmap PATH [private]
 *                                  fstat, then mmap(2) st_size bytes
 *                                  (MAP_SHARED, or MAP_PRIVATE) and write
 *                                  them out; "mmap NAME" on stderr and
 *                                  exit 1 if it fails
 *   helper-readers tables PATH SECONDS WAY PID COUNT
 *                                  for SECONDS, read the table PATH whole
 *                                  again and again by WAY (read, sendfile
 *                                  or splice) and check each copy: the
 *                                  header, then lines of 7 integers
 *                                  and a name, no (pid, tid) twice,
 *                                  exactly COUNT lines
 *                                  of process PID; prints "reads N bad M",
 *                                  and the first bad copy's fault
 *
 * With HELPER_READERS_ANSWERS=FILE in the environment, every system call
 * on PATH (its open, each read, sendfile or splice from it, its close)
 * adds a line "T0 T1" to FILE: the wall-clock times (seconds, to the
 * microsecond) at which it was made and at which it returned, so that a
 * test sees how long each answer of the filesystem took, not only a
 * whole copy.
 *
 * Exit status: 0; 1 when a call fails (its errno name on stderr) or a
 * table is bad; 2 for bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib-table.h"

#define CHUNK (1 << 20)

/* HELPER_READERS_ANSWERS's file, or NULL. */
static FILE *answers;

static void now(struct timespec *t)
{
	clock_gettime(CLOCK_REALTIME, t);
}

/* A system call on PATH made at @t0 has returned. */
static void answered(const struct timespec *t0)
{
	struct timespec t1;

	if (!answers)
		return;
	now(&t1);
	fprintf(answers, "%lld.%06ld %lld.%06ld\n", (long long)t0->tv_sec,
		t0->tv_nsec / 1000, (long long)t1.tv_sec, t1.tv_nsec / 1000);
	fflush(answers);
}

static int fail(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, strerrorname_np(errno));
	return 1;
}

static int write_all(int fd, const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, p, n);
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Read @fd to its end into @out (malloc'd, *@len bytes); with @timed,
 * each read is an answer of PATH's.
 */
static int slurp_read(int fd, bool timed, char **out, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap), *more;
	struct timespec t0;
	ssize_t r;

	if (!buf)
		return -1;
	for (;;) {
		if (n == cap) {
			more = realloc(buf, cap *= 2);
			if (!more)
				break;
			buf = more;
		}
		now(&t0);
		r = read(fd, buf + n, cap - n);
		if (timed)
			answered(&t0);
		if (r <= 0) {
			if (r == 0) {
				*out = buf;
				*len = n;
				return 0;
			}
			break;
		}
		n += (size_t)r;
	}
	free(buf);
	return -1;
}

/* sendfile @fd whole into a new memfd, and read that back. */
static int slurp_sendfile(int fd, char **out, size_t *len)
{
	int mem = memfd_create("copy", 0), ret = -1;
	struct timespec t0;
	ssize_t n;

	if (mem < 0)
		return -1;
	do {
		now(&t0);
		n = sendfile(mem, fd, NULL, CHUNK);
		answered(&t0);
	} while (n > 0);
	if (n == 0 && lseek(mem, 0, SEEK_SET) == 0)
		ret = slurp_read(mem, false, out, len);
	close(mem);
	return ret;
}

/* splice @fd whole through a pipe, drained into a buffer as it fills. */
static int slurp_splice(int fd, char **out, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap), *more;
	int p[2], ret = -1;
	struct timespec t0;
	ssize_t s, r;

	if (!buf || pipe(p) < 0) {
		free(buf);
		return -1;
	}
	for (;;) {
		now(&t0);
		s = splice(fd, NULL, p[1], NULL, CHUNK, 0);
		answered(&t0);
		if (s <= 0)
			break;
		while (s > 0) {
			if (n == cap) {
				more = realloc(buf, cap *= 2);
				if (!more)
					goto out;
				buf = more;
			}
			r = read(p[0], buf + n, cap - n);
			if (r <= 0)
				goto out;
			n += (size_t)r;
			s -= r;
		}
	}
	if (s == 0) {
		*out = buf;
		*len = n;
		buf = NULL;
		ret = 0;
	}
out:
	free(buf);
	close(p[0]);
	close(p[1]);
	return ret;
}

/* open(2) of PATH, an answer. */
static int open_path(const char *path)
{
	struct timespec t0;
	int fd;

	now(&t0);
	fd = open(path, O_RDONLY);
	answered(&t0);
	return fd;
}

/* close(2) of PATH, an answer (FLUSH and RELEASE). */
static void close_path(int fd)
{
	struct timespec t0;

	now(&t0);
	close(fd);
	answered(&t0);
}

static int slurp(const char *way, const char *path, char **out, size_t *len)
{
	int fd = open_path(path), ret = -1;

	if (fd < 0)
		return -1;
	if (!strcmp(way, "read"))
		ret = slurp_read(fd, true, out, len);
	else if (!strcmp(way, "sendfile"))
		ret = slurp_sendfile(fd, out, len);
	else if (!strcmp(way, "splice"))
		ret = slurp_splice(fd, out, len);
	else
		errno = EINVAL;
	close_path(fd);
	return ret;
}

static int do_sendfile(int fd)
{
	struct timespec t0;
	ssize_t n;

	do {
		now(&t0);
		n = sendfile(1, fd, NULL, CHUNK);
		answered(&t0);
	} while (n > 0);
	return n < 0 ? fail("sendfile") : 0;
}

static int do_splice(int fd)
{
	char *buf;
	size_t len;

	if (slurp_splice(fd, &buf, &len) < 0)
		return fail("splice");
	if (write_all(1, buf, len) < 0)
		return fail("write");
	free(buf);
	return 0;
}

static bool refusal(int err)
{
	return err == EXDEV || err == EOPNOTSUPP || err == EINVAL ||
	       err == ENOSYS;
}

static int do_copy(int fd, const char *dest)
{
	int out = open(dest, O_WRONLY | O_CREAT | O_EXCL, 0644);
	bool first = true;
	char *buf;
	size_t len;
	ssize_t n;

	if (out < 0)
		return fail("open DEST");
	while ((n = copy_file_range(fd, NULL, out, NULL, CHUNK, 0)) > 0)
		first = false;
	if (n < 0 && first && refusal(errno)) {
		fprintf(stderr, "refused %s\n", strerrorname_np(errno));
		if (slurp_read(fd, true, &buf, &len) < 0)
			return fail("read");
		if (write_all(out, buf, len) < 0)
			return fail("write");
		free(buf);
		n = 0;
	}
	if (n < 0)
		return fail("copy_file_range");
	return close(out) < 0 ? fail("close") : 0;
}

static int do_mmap(int fd, bool private)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st) < 0)
		return fail("fstat");
	if (st.st_size == 0)
		return 0;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ,
		 private ? MAP_PRIVATE : MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return fail("mmap");
	if (write_all(1, p, (size_t)st.st_size) < 0)
		return fail("write");
	return munmap(p, (size_t)st.st_size) < 0 ? fail("munmap") : 0;
}

/* ---- tables ------------------------------------------------------------- */

struct seen {
	uint64_t *keys; /* (pid << 32 | tid) + 1, 0 where empty */
	size_t cap;
};

/* Whether (pid, tid) was seen before in this copy; marks it. */
static bool seen_twice(struct seen *s, uint64_t key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & (s->cap - 1);

	key++;
	while (s->keys[i]) {
		if (s->keys[i] == key)
			return true;
		i = (i + 1) & (s->cap - 1);
	}
	s->keys[i] = key;
	return false;
}

/* What is wrong with table @t of @len bytes, or NULL. */
static const char *table_fault(const char *t, size_t len, long pid, long count)
{
	size_t hl = strlen(table_header), lines = 0;
	const char *p = t + hl, *end = t + len, *nl, *fault = NULL;
	unsigned long long v[7];
	struct seen s;
	long mine = 0;
	int used;

	if (len < hl || memcmp(t, table_header, hl))
		return "no header";
	if (t[len - 1] != '\n')
		return "not whole lines";
	for (nl = p; nl < end; nl++)
		lines += *nl == '\n';
	for (s.cap = 1024; s.cap < lines * 2; s.cap *= 2)
		;
	s.keys = calloc(s.cap, sizeof(*s.keys));
	if (!s.keys)
		return "out of memory";
	for (; p < end && !fault; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		used = 0;
		if (sscanf(p, "%llu %llu %llu %llu %llu %llu %llu %*[^ \n]%n",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &used) != 7 ||
		    p + used != nl)
			fault = "a line is not 7 integers and a name";
		else if (seen_twice(&s, v[0] << 32 | v[1]))
			fault = "a (pid, tid) twice";
		mine += (long)v[0] == pid;
	}
	free(s.keys);
	if (!fault && mine != count)
		fault = "not COUNT lines of PID";
	return fault;
}

static int do_tables(const char *path, double seconds, const char *way,
		     long pid, long count)
{
	long reads = 0, bad = 0;
	const char *fault;
	struct timespec t0, t;
	char *buf;
	size_t len;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (slurp(way, path, &buf, &len) < 0)
			return fail(way);
		fault = table_fault(buf, len, pid, count);
		if (fault && !bad++)
			fprintf(stderr, "%s copy %ld, %zu bytes: %s\n", way,
				reads, len, fault);
		free(buf);
		reads++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) +
			 (double)(t.tv_nsec - t0.tv_nsec) / 1e9 <
		 seconds);
	printf("reads %ld bad %ld\n", reads, bad);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *op = argc > 2 ? argv[1] : "";
	char *buf;
	size_t len;
	const char *log = getenv("HELPER_READERS_ANSWERS");
	int fd, ret;

	table_header_init("helper-readers");
	if (log && *log && !(answers = fopen(log, "a")))
		return fail(log);
	if (!strcmp(op, "tables") && argc == 7)
		return do_tables(argv[2], atof(argv[3]), argv[4], atol(argv[5]),
				 atol(argv[6]));
	if (!strcmp(op, "read") && argc == 3) {
		if (slurp("read", argv[2], &buf, &len) < 0)
			return fail("read");
		ret = write_all(1, buf, len) < 0 ? fail("write") : 0;
		free(buf);
		return ret;
	}
	fd = argc > 2 ? open_path(argv[2]) : -1;
	if (fd < 0 && argc > 2)
		return fail("open");
	if (!strcmp(op, "sendfile") && argc == 3)
		return do_sendfile(fd);
	if (!strcmp(op, "splice") && argc == 3)
		return do_splice(fd);
	if (!strcmp(op, "copy") && argc == 4)
		return do_copy(fd, argv[3]);
	if (!strcmp(op, "mmap") && (argc == 3 || argc == 4))
		return do_mmap(fd, argc == 4 && !strcmp(argv[3], "private"));
	fprintf(stderr, "usage: helper-readers read|sendfile|splice|mmap PATH"
			" | copy PATH DEST | tables PATH SECONDS WAY PID "
			"COUNT\n");
	return 2;
}
