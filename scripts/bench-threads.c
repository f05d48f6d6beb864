/*
 * bench-threads: big processes for `make bench`, and the cost of reading
 * one process's threads.table against reading its sources natively.
 *
 * usage: bench-threads PROCS THREADS
 *        bench-threads -t ROUNDS TABLE PID
 *
 * The first form forks PROCS processes, each of THREADS threads (its
 * main thread and THREADS-1 more, on 64 KiB stacks), all asleep. Once
 * every thread of every process exists it prints the processes' pids,
 * one a line, closes its output and sleeps until killed; the processes
 * die with it (PR_SET_PDEATHSIG), however it dies.
 *
 * The second form times, interleaved, ROUNDS rounds (after one of
 * warm-up) of three ways to get the same numbers: TABLE opened, read to
 * its end with read(2) and closed; the same with sendfile(2) to
 * /dev/null, as busybox cat reads (through the kernel's page cache);
 * and what a scraper does natively, listing /proc/PID/task and opening,
 * reading and closing each thread's stat and schedstat. Every other
 * round goes in the reverse order. Prints
 *
 *	table MEDIAN
 *	sendfile MEDIAN
 *	native MEDIAN
 *	table/native RATIO
 *	sendfile/table RATIO
 *
 * the medians of the rounds' seconds, and the medians of the rounds'
 * ratios. A file that cannot be read is an error: exit 1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 16];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* In a forked child: THREADS-1 threads more, then 'R' (or 'E') on @fd. */
static void child(long threads, int fd)
{
	pthread_attr_t attr;
	pthread_t t;
	long i;
	char c = 'R';

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 1; i < threads; i++) {
		int err = pthread_create(&t, &attr, sleeper, NULL);

		if (err) {
			fprintf(stderr, "bench-threads: thread %ld: %s\n", i,
				strerror(err));
			c = 'E';
			break;
		}
	}
	if (write(fd, &c, 1) != 1 || c == 'E')
		_exit(1);
	close(fd);
	for (;;)
		pause();
}

static int spawn(long procs, long threads)
{
	pid_t *pid = calloc((size_t)procs, sizeof(*pid));
	int fds[2];
	long i, ready = 0;
	char c;

	if (!pid || pipe(fds) < 0)
		return 1;
	for (i = 0; i < procs; i++) {
		pid[i] = fork();
		if (pid[i] < 0) {
			perror("bench-threads: fork");
			return 1; /* the children die with us */
		}
		if (pid[i] == 0) {
			close(fds[0]);
			child(threads, fds[1]);
		}
	}
	close(fds[1]);
	while (ready < procs) {
		ssize_t n = read(fds[0], &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n != 1 || c != 'R')
			return 1;
		ready++;
	}
	close(fds[0]);
	for (i = 0; i < procs; i++)
		printf("%ld\n", (long)pid[i]);
	if (fclose(stdout) != 0)
		return 1;
	for (;;)
		pause();
}

/* Open, read to the end and close @path: bytes read, or -1. */
static long read_whole(const char *path)
{
	long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0) {
		fprintf(stderr, "bench-threads: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	if (n < 0)
		fprintf(stderr, "bench-threads: %s: %s\n", path,
			strerror(errno));
	close(fd);
	return n < 0 ? -1 : total;
}

/* Open @path, sendfile(2) it to /dev/null, close: bytes, or -1. */
static long sendfile_whole(const char *path)
{
	static int devnull = -1;
	long total = 0;
	ssize_t n;
	int fd;

	if (devnull < 0)
		devnull = open("/dev/null", O_WRONLY);
	fd = open(path, O_RDONLY);
	if (fd < 0 || devnull < 0) {
		fprintf(stderr, "bench-threads: %s: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((n = sendfile(devnull, fd, NULL, 1 << 24)) > 0)
		total += n;
	if (n < 0)
		fprintf(stderr, "bench-threads: %s: sendfile: %s\n", path,
			strerror(errno));
	close(fd);
	return n < 0 ? -1 : total;
}

/* Seconds to read @table whole, by sendfile or read(2), or -1. */
static double time_table(const char *table, int by_sendfile)
{
	double start = now_s();

	if ((by_sendfile ? sendfile_whole(table) : read_whole(table)) <= 0)
		return -1;
	return now_s() - start;
}

/* Seconds to list /proc/PID/task and read each stat and schedstat. */
static double time_native(const char *pid)
{
	static const char *const files[] = { "stat", "schedstat" };
	char path[512];
	double start = now_s();
	struct dirent *e;
	DIR *d;
	int i;

	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "bench-threads: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		for (i = 0; i < 2; i++) {
			snprintf(path, sizeof(path), "/proc/%s/task/%s/%s", pid,
				 e->d_name, files[i]);
			if (read_whole(path) <= 0) {
				closedir(d);
				return -1;
			}
		}
	}
	closedir(d);
	return now_s() - start;
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

static int table_vs_native(long rounds, const char *table, const char *pid)
{
	double *t = calloc((size_t)rounds, sizeof(double));
	double *sf = calloc((size_t)rounds, sizeof(double));
	double *nat = calloc((size_t)rounds, sizeof(double));
	double *q = calloc((size_t)rounds, sizeof(double));
	double *qs = calloc((size_t)rounds, sizeof(double));
	long r;

	if (!t || !sf || !nat || !q || !qs)
		return 1;
	if (time_table(table, 0) < 0 || time_table(table, 1) < 0 ||
	    time_native(pid) < 0) /* warm-up */
		return 1;
	for (r = 0; r < rounds; r++) {
		if (r % 2) {
			nat[r] = time_native(pid);
			sf[r] = time_table(table, 1);
			t[r] = time_table(table, 0);
		} else {
			t[r] = time_table(table, 0);
			sf[r] = time_table(table, 1);
			nat[r] = time_native(pid);
		}
		if (t[r] < 0 || sf[r] < 0 || nat[r] < 0)
			return 1;
		q[r] = t[r] / nat[r];
		qs[r] = sf[r] / t[r];
	}
	printf("table %.4f\n", median(t, rounds));
	printf("sendfile %.4f\n", median(sf, rounds));
	printf("native %.4f\n", median(nat, rounds));
	printf("table/native %.3f\n", median(q, rounds));
	printf("sendfile/table %.3f\n", median(qs, rounds));
	free(t);
	free(sf);
	free(nat);
	free(q);
	free(qs);
	return 0;
}

int main(int argc, char *argv[])
{
	long a, b;

	if (argc == 5 && strcmp(argv[1], "-t") == 0) {
		a = strtol(argv[2], NULL, 10);
		if (a < 1) {
			fprintf(stderr, "bench-threads: ROUNDS must be > 0\n");
			return 2;
		}
		return table_vs_native(a, argv[3], argv[4]);
	}
	if (argc != 3) {
		fprintf(stderr,
			"usage: %s PROCS THREADS\n"
			"       %s -t ROUNDS TABLE PID\n",
			argv[0], argv[0]);
		return 2;
	}
	a = strtol(argv[1], NULL, 10);
	b = strtol(argv[2], NULL, 10);
	if (a < 1 || b < 1) {
		fprintf(stderr,
			"bench-threads: PROCS and THREADS must be > 0\n");
		return 2;
	}
	return spawn(a, b);
}
