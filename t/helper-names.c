/*
 * helper-names: a reader that makes the kernel and the daemon keep as
 * many names under proc/ as it can, for the tests of the records'
 * bound (t2161).
 *
 * usage: helper-names MNT N [GIVEUP]
 *
 * Starts threads, BATCH at a time; while each lives, opens
 * MNT/proc/PID/threads/TID with O_PATH (a lookup of a new name: one
 * record); then the threads exit, and the descriptors are kept: each
 * holds the name of a thread that is gone. Stops at N descriptors held,
 * or after GIVEUP (default 64) refusals in a row (ENOMEM). Prints a
 * progress line every 10,000 held names,
 *
 *	held K
 *
 * then one line,
 *
 *	ok K enomem E other O errno ERR
 *
 * (names held, opens refused ENOMEM, opens failed otherwise, and the
 * errno of the last such failure), and sleeps, holding them, until it
 * reads a line or end of file on its standard input.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BATCH 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;
static unsigned long generation;

struct waiter {
	pid_t tid;
	int ready;
	unsigned long gen;
};

static void *thread_main(void *arg)
{
	struct waiter *w = arg;

	pthread_mutex_lock(&lock);
	w->tid = (pid_t)syscall(SYS_gettid);
	w->ready = 1;
	pthread_cond_broadcast(&go);
	while (generation == w->gen)
		pthread_cond_wait(&go, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long want, held = 0, enomem = 0, other = 0, row = 0, giveup;
	struct waiter w[BATCH];
	pthread_t th[BATCH];
	pthread_attr_t attr;
	char path[4096];
	int i, n, fd, err = 0;

	if (argc < 3)
		return 2;
	want = strtoul(argv[2], NULL, 10);
	giveup = argc > 3 ? strtoul(argv[3], NULL, 10) : 64;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 65536);
	while (held < want && row < giveup) {
		for (n = 0; n < BATCH; n++) {
			w[n] = (struct waiter){ .gen = generation };
			if (pthread_create(&th[n], &attr, thread_main, &w[n]))
				break;
		}
		pthread_mutex_lock(&lock);
		for (i = 0; i < n; i++)
			while (!w[i].ready)
				pthread_cond_wait(&go, &lock);
		pthread_mutex_unlock(&lock);
		for (i = 0; i < n && held < want && row < giveup; i++) {
			snprintf(path, sizeof(path), "%s/proc/%d/threads/%d",
				 argv[1], (int)getpid(), (int)w[i].tid);
			fd = open(path, O_PATH | O_DIRECTORY);
			if (fd >= 0) {
				held++;
				row = 0;
				if (held % 10000 == 0) {
					printf("held %lu\n", held);
					fflush(stdout);
				}
			} else if (errno == ENOMEM) {
				enomem++;
				row++;
			} else {
				other++;
				err = errno;
				if (errno == EMFILE)
					row = giveup;
			}
		}
		pthread_mutex_lock(&lock);
		generation++;
		pthread_cond_broadcast(&go);
		pthread_mutex_unlock(&lock);
		for (i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		if (!n)
			break;
	}
	printf("ok %lu enomem %lu other %lu errno %d\n", held, enomem, other,
	       err);
	fflush(stdout);
	while (read(0, path, 1) == 1 && path[0] != '\n')
		;
	return 0;
}
