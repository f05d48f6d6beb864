/*
 * helper-many: a process of many sleeping threads, for the tests of big
 * processes.
 *
 * usage: helper-many N
 *
 * Starts N - 1 threads beside the main one, each sleeping until the
 * process is killed, then prints its pid and "ready" on one line and
 * sleeps too.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t t;
	long i, n = argc > 1 ? atol(argv[1]) : 0;

	if (n < 1) {
		fprintf(stderr, "usage: helper-many N\n");
		return 2;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 1; i < n; i++)
		if (pthread_create(&t, &attr, sleeper, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	printf("%d ready\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
