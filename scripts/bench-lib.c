/*
 * bench-lib: what QueryThreadCycleTime costs through libtimingfs, beside
 * an open+read+close of the same cycles file and the kernel's own clock
 * of the calling thread, for scripts/bench's library section.
 *
 *   bench-lib MNT ROUNDS BATCH
 *
 * Each round times BATCH calls of each of the three, in an order that
 * turns every round: QueryThreadCycleTime(GetCurrentThread()) (the
 * library reads MNT/proc/self/threads/TID/cycles below its root), an
 * open+read+close of MNT/proc/self/threads/TID/cycles as a program would
 * read it, and clock_gettime(CLOCK_THREAD_CPUTIME_ID). Prints, a line
 * each, "NAME MEDIAN MIN" in µs per call (lib, orc, clock) and
 * "lib/orc MEDIAN" (the median of the rounds' ratios); exits 1 when a
 * call fails.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <timingfs/windows.h>

enum { LIB, ORC, CLOCK, METHODS };

static const char *const names[METHODS] = { "lib", "orc", "clock" };
static char path[4096];

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int call(int method)
{
	struct timespec ts;
	ULONG64 cycles;
	char buf[64];
	ssize_t n;
	int fd;

	switch (method) {
	case LIB:
		return QueryThreadCycleTime(GetCurrentThread(), &cycles) ? 0 :
									   -1;
	case ORC:
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		n = read(fd, buf, sizeof(buf));
		close(fd);
		return n > 0 ? 0 : -1;
	default:
		return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	}
}

/* µs per call of @method over @batch calls, or -1. */
static double batch_us(int method, int batch)
{
	double t0 = now_us();
	int i;

	for (i = 0; i < batch; i++)
		if (call(method) < 0)
			return -1;
	return (now_us() - t0) / batch;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	double *us[METHODS], *ratio;
	int rounds, batch, r, k, m;

	if (argc != 4)
		return 2;
	rounds = atoi(argv[2]);
	batch = atoi(argv[3]);
	if (rounds < 1 || batch < 1)
		return 2;
	setenv("TIMINGFS_MOUNT", argv[1], 1);
	snprintf(path, sizeof(path), "%s/proc/self/threads/%ld/cycles", argv[1],
		 (long)syscall(SYS_gettid));
	ratio = calloc((size_t)rounds, sizeof(double));
	for (m = 0; m < METHODS; m++)
		us[m] = calloc((size_t)rounds, sizeof(double));
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < METHODS; k++) {
			m = (r + k) % METHODS;
			us[m][r] = batch_us(m, batch);
			if (us[m][r] < 0) {
				fprintf(stderr, "bench-lib: %s failed\n",
					names[m]);
				return 1;
			}
		}
		ratio[r] = us[LIB][r] / us[ORC][r];
	}
	for (m = 0; m < METHODS; m++) {
		double med = median(us[m], rounds);
		printf("%s %.3f %.3f\n", names[m], med, us[m][0]);
	}
	printf("lib/orc %.3f\n", median(ratio, rounds));
	return 0;
}
