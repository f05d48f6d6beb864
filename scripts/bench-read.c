/*
 * bench-read: the cost of open+read+close of several files, measured
 * interleaved in one run, for `make bench`.
 *
 * usage: bench-read [-s N FILE] ROUNDS BATCH NAME=[sendfile:|list:]PATH...
 *                   [-- NAME/NAME...]
 *
 * After one round of warm-up, each of ROUNDS rounds times BATCH
 * open+read+close of every PATH in turn (read(2) to the end; with
 * "sendfile:" sendfile(2) to /dev/null until it returns 0, as busybox
 * cat reads: through the kernel's page cache; with "list:" a directory
 * listed whole with getdents64, as ls does), so that all of them meet the
 * same machine at nearly the same moment; every other round goes in the
 * reverse order. Prints, per file,
 *
 *	NAME MEDIAN MIN
 *
 * the median and the least of the rounds' mean cost, in µs, and for
 * each NAME/NAME after "--"
 *
 *	A/B RATIO
 *
 * the median of the rounds' ratios A/B: each round's pair was measured
 * side by side, so a machine busy for a while slows both alike. A file
 * that cannot be opened or reads empty is an error: exit 1.
 *
 * With -s, N readers started alike (the same ROUNDS and files, in the
 * same order) keep in step: each waits for all N at FILE, a file they
 * all map (made if missing), before every timed batch, so that each
 * times a file while the others read the same kind of file, and the
 * busy machine it meets is made of the same requests for every file of
 * a ratio (not the others' mix of both). The waits are not timed. A
 * reader that fails stops the others (exit 1), and so does a wait of
 * more than 60 s.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct target {
	const char *name;
	const char *path;
	int way;
	double *us; /* per round */
	double *sorted;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

enum { WAY_READ, WAY_SENDFILE, WAY_LIST };

static int devnull = -1;

/* The next bytes of @fd, by read(2), sendfile(2) or getdents64. */
static ssize_t next_bytes(int fd, int way)
{
	static char buf[65536];

	if (way == WAY_SENDFILE)
		return sendfile(devnull, fd, NULL, 1 << 20);
	if (way == WAY_LIST)
		return getdents64(fd, buf, sizeof(buf));
	return read(fd, buf, sizeof(buf));
}

/* BATCH opens, reads and closes of @path: the mean µs, or -1. */
static double time_batch(const char *path, int way, long batch)
{
	double start = now_us();
	long i;
	ssize_t n, total;
	int fd;

	for (i = 0; i < batch; i++) {
		fd = open(path, O_RDONLY | (way == WAY_LIST ? O_DIRECTORY : 0));
		if (fd < 0) {
			fprintf(stderr, "bench-read: %s: %s\n", path,
				strerror(errno));
			return -1;
		}
		total = 0;
		while ((n = next_bytes(fd, way)) > 0)
			total += n;
		close(fd);
		if (n < 0 || total == 0) {
			fprintf(stderr, "bench-read: %s: %s\n", path,
				n < 0 ? strerror(errno) : "empty");
			return -1;
		}
	}
	return (now_us() - start) / (double)batch;
}

/* The readers kept in step (-s): a barrier in a file they all map. */
struct step {
	_Atomic uint32_t arrived;
	_Atomic uint32_t gen; /* the futex: one more each time all came */
	_Atomic uint32_t failed; /* a reader failed: the others stop */
};

static struct step *step;
static uint32_t step_n;
static int step_done; /* this reader ended well */

/* At exit: a reader that failed frees the others at once. */
static void step_exit(void)
{
	if (step_done)
		return;
	atomic_store(&step->failed, 1);
	atomic_fetch_add(&step->gen, 1);
	syscall(SYS_futex, &step->gen, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static int step_open(const char *n, const char *path)
{
	char *end;
	long v;
	int fd;

	errno = 0;
	v = strtol(n, &end, 10);
	if (errno || *end || v < 1 || v > 1000) {
		fprintf(stderr, "bench-read: -s %s: not a count of readers\n",
			n);
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT, 0600);
	/* A file of zeros, which every reader may extend alike. */
	if (fd < 0 || ftruncate(fd, 4096) < 0) {
		fprintf(stderr, "bench-read: %s: %s\n", path, strerror(errno));
		return -1;
	}
	step = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (step == MAP_FAILED) {
		fprintf(stderr, "bench-read: %s: %s\n", path, strerror(errno));
		return -1;
	}
	step_n = (uint32_t)v;
	atexit(step_exit);
	return 0;
}

/* Wait for every reader to come here: 0, or -1 after 60 s. */
static int step_wait(void)
{
	struct timespec limit = { .tv_sec = 1 };
	uint32_t gen;
	int waited = 0;

	if (!step)
		return 0;
	gen = atomic_load(&step->gen);
	if (atomic_load(&step->failed))
		goto failed;
	if (atomic_fetch_add(&step->arrived, 1) + 1 == step_n) {
		atomic_store(&step->arrived, 0);
		atomic_fetch_add(&step->gen, 1);
		syscall(SYS_futex, &step->gen, FUTEX_WAKE, INT32_MAX, NULL,
			NULL, 0);
		return 0;
	}
	while (atomic_load(&step->gen) == gen) {
		if (syscall(SYS_futex, &step->gen, FUTEX_WAIT, gen, &limit,
			    NULL, 0) < 0 &&
		    errno == ETIMEDOUT && ++waited >= 60) {
			fprintf(stderr, "bench-read: the other readers did not "
					"come in 60 s\n");
			return -1;
		}
	}
	if (!atomic_load(&step->failed))
		return 0;
failed:
	fprintf(stderr, "bench-read: another reader failed\n");
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, long n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return v[n / 2];
}

static struct target *find(struct target *t, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	fprintf(stderr, "bench-read: no file named %s\n", name);
	return NULL;
}

/* Print the median over the rounds of a/b, for "A/B". */
static int ratio(struct target *t, int n, char *spec, long rounds)
{
	char *slash = strchr(spec, '/');
	struct target *a, *b;
	double *q;
	long r;

	if (!slash) {
		fprintf(stderr, "bench-read: not A/B: %s\n", spec);
		return -1;
	}
	*slash = '\0';
	a = find(t, n, spec);
	b = find(t, n, slash + 1);
	if (!a || !b)
		return -1;
	q = calloc((size_t)rounds, sizeof(double));
	if (!q)
		return -1;
	for (r = 0; r < rounds; r++)
		q[r] = a->us[r] / b->us[r];
	printf("%s/%s %.3f\n", a->name, b->name, median(q, rounds));
	free(q);
	return 0;
}

int main(int argc, char *argv[])
{
	struct target *t;
	long rounds, batch, r;
	int i, j, n, ratios;
	char *eq;

	if (argc >= 4 && strcmp(argv[1], "-s") == 0) {
		if (step_open(argv[2], argv[3]) < 0)
			return 2;
		argv[3] = argv[0];
		argv += 3;
		argc -= 3;
	}
	if (argc < 4) {
		fprintf(stderr,
			"usage: %s [-s N FILE] ROUNDS BATCH "
			"NAME=[sendfile:|list:]PATH... [-- A/B...]\n",
			argv[0]);
		return 2;
	}
	rounds = strtol(argv[1], NULL, 10);
	batch = strtol(argv[2], NULL, 10);
	if (rounds < 1 || batch < 1) {
		fprintf(stderr, "bench-read: ROUNDS and BATCH must be > 0\n");
		return 2;
	}
	for (n = 0; n + 3 < argc && strcmp(argv[n + 3], "--") != 0; n++)
		;
	ratios = n + 3 < argc ? n + 4 : argc;
	t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return 1;
	for (i = 0; i < n; i++) {
		eq = strchr(argv[i + 3], '=');
		if (!eq) {
			fprintf(stderr, "bench-read: not NAME=PATH: %s\n",
				argv[i + 3]);
			return 2;
		}
		*eq = '\0';
		t[i].name = argv[i + 3];
		t[i].path = eq + 1;
		if (strncmp(t[i].path, "sendfile:", 9) == 0) {
			t[i].path += 9;
			t[i].way = WAY_SENDFILE;
		} else if (strncmp(t[i].path, "list:", 5) == 0) {
			t[i].path += 5;
			t[i].way = WAY_LIST;
		}
		t[i].us = calloc((size_t)rounds, sizeof(double));
		t[i].sorted = calloc((size_t)rounds, sizeof(double));
		if (!t[i].us || !t[i].sorted)
			return 1;
	}
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0)
		return 1;
	for (i = 0; i < n; i++) /* warm-up: caches, lookups, threads */
		if (time_batch(t[i].path, t[i].way, batch) < 0)
			return 1;
	for (r = 0; r < rounds; r++) {
		for (j = 0; j < n; j++) {
			i = r % 2 ? n - 1 - j : j;
			if (step_wait() < 0)
				return 1;
			t[i].us[r] = time_batch(t[i].path, t[i].way, batch);
			if (t[i].us[r] < 0)
				return 1;
		}
	}
	for (i = 0; i < n; i++) {
		double med;

		memcpy(t[i].sorted, t[i].us, (size_t)rounds * sizeof(double));
		med = median(t[i].sorted, rounds); /* sorts: min is [0] */
		printf("%s %.2f %.2f\n", t[i].name, med, t[i].sorted[0]);
	}
	step_done = 1; /* every batch timed: the others need this one no more */
	for (i = ratios; i < argc; i++)
		if (ratio(t, n, argv[i], rounds) < 0)
			return 2;
	for (i = 0; i < n; i++) {
		free(t[i].us);
		free(t[i].sorted);
	}
	free(t);
	return 0;
}
