/*
 * helper-hold: a reader that makes the daemon hold what it can, for the
 * tests of the budgets of memory.
 *
 * usage: helper-hold PATH N
 *
 * Opens PATH N times (each open a path walk) and keeps every open that
 * succeeds. Then prints one line,
 *
 *	ok K enomem E other O errno ERR slowest_ms MS
 *
 * how many opens succeeded, failed with ENOMEM, failed otherwise (ERR:
 * the errno of the last such failure, 0 if none), and the longest that
 * any refusal (ENOMEM) after the first took, in ms (the first may have
 * made the snapshot it was refused); and sleeps, holding them, until it
 * is killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	long n, i, ok = 0, enomem = 0, other = 0;
	int last_errno = 0, fd;
	double slowest = 0, t;
	struct rlimit rl;

	if (argc != 3)
		return 2;
	n = atol(argv[2]);
	/* Room for N descriptors: up to the hard limit. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (i = 0; i < n; i++) {
		t = now_ms();
		fd = open(argv[1], O_RDONLY | O_CLOEXEC);
		t = now_ms() - t;
		if (fd >= 0) {
			ok++;
		} else if (errno == ENOMEM) {
			if (enomem++ && t > slowest)
				slowest = t;
		} else {
			other++;
			last_errno = errno;
		}
	}
	printf("ok %ld enomem %ld other %ld errno %d slowest_ms %.0f\n", ok,
	       enomem, other, last_errno, slowest);
	fflush(stdout);
	for (;;)
		pause();
}
