/*
 * helper-born: make threads one at a time, each between two readings of
 * CLOCK_REALTIME, and keep them alive, for the tests of creation times.
 *
 *   helper-born N GAP_US OUT
 *
 * Makes N threads GAP_US microseconds apart. For each it writes a line
 * "TID BEFORE AFTER" to OUT: the thread's id, CLOCK_REALTIME in ns just
 * before pthread_create() and just after it returned (the thread's start
 * lies between them). Then it writes "ready PID" and waits, its threads
 * blocked, until it is killed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pid_t last_tid;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *thread_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	last_tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	struct timespec gap;
	uint64_t before, after;
	long n, i, gap_us;
	pthread_t t;
	FILE *out;

	if (argc != 4)
		return 2;
	n = atol(argv[1]);
	gap_us = atol(argv[2]);
	out = fopen(argv[3], "w");
	if (n < 1 || gap_us < 0 || !out)
		return 2;
	gap.tv_sec = gap_us / 1000000;
	gap.tv_nsec = (gap_us % 1000000) * 1000;
	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		last_tid = 0;
		before = now_ns();
		if (pthread_create(&t, NULL, thread_main, NULL))
			return 1;
		after = now_ns();
		while (!last_tid)
			pthread_cond_wait(&cond, &lock);
		fprintf(out, "%d %llu %llu\n", (int)last_tid,
			(unsigned long long)before, (unsigned long long)after);
		pthread_mutex_unlock(&lock);
		nanosleep(&gap, NULL);
	}
	fprintf(out, "ready %d\n", (int)getpid());
	fclose(out);
	for (;;)
		pause();
	return 0;
}
