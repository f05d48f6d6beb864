/*
 * helper-named: a process of threads that name themselves, for the tests
 * of names (t1140).
 *
 * usage: helper-named N NAME...
 *
 * Starts N threads beside the main one; thread i names itself with
 * prctl(PR_SET_NAME) the i-th NAME, the names taken in turn, and
 * sleeps. Once all are named it prints "PID TID..." (the first
 * thread of each NAME, in order) on one line. Then, for each line it
 * reads on its standard input, "exit TID" ends that thread (which
 * exits; the line "exited TID" follows once it is joined), "name TID
 * NAME" has it rename itself (the line "named TID" follows once it
 * has), and at end of file the process exits.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

struct named {
	pthread_t thread;
	const char *name;
	pid_t tid;
	int stop; /* set to end it */
	char rename[16]; /* set to have it take this name */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t change = PTHREAD_COND_INITIALIZER;
static long named; /* threads that have named themselves */

static void *run(void *arg)
{
	struct named *n = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (prctl(PR_SET_NAME, n->name, 0, 0, 0) < 0)
		tid = -1;
	pthread_mutex_lock(&lock);
	n->tid = tid;
	named++;
	pthread_cond_broadcast(&change);
	while (!n->stop) {
		if (n->rename[0]) {
			prctl(PR_SET_NAME, n->rename, 0, 0, 0);
			n->rename[0] = '\0';
			pthread_cond_broadcast(&change);
		}
		pthread_cond_wait(&change, &lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* Start @count threads named @names in turn; 0 or -1. */
static int start(struct named *t, long count, char **names, int nnames)
{
	pthread_attr_t attr;
	long i;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (i = 0; i < count; i++) {
		t[i].name = names[i % nnames];
		if (pthread_create(&t[i].thread, &attr, run, &t[i]))
			return -1;
	}
	pthread_mutex_lock(&lock);
	while (named < count)
		pthread_cond_wait(&change, &lock);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < count; i++)
		if (t[i].tid <= 0)
			return -1;
	return 0;
}

/* Have thread @tid of @t take @name, and say so once it has. */
static void rename_thread(struct named *t, long count, int tid,
			  const char *name)
{
	long i;

	for (i = 0; i < count && t[i].tid != tid; i++)
		;
	if (i == count || t[i].stop)
		return;
	pthread_mutex_lock(&lock);
	snprintf(t[i].rename, sizeof(t[i].rename), "%s", name);
	pthread_cond_broadcast(&change);
	while (t[i].rename[0])
		pthread_cond_wait(&change, &lock);
	pthread_mutex_unlock(&lock);
	printf("named %d\n", tid);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	long count = argc > 2 ? atol(argv[1]) : 0, i;
	struct named *t;
	char line[64], name[16];
	int tid;

	if (count < argc - 2) {
		fprintf(stderr, "usage: helper-named N NAME... (N >= NAMEs)\n");
		return 2;
	}
	t = calloc((size_t)count, sizeof(*t));
	if (!t || start(t, count, argv + 2, argc - 2) < 0) {
		perror("helper-named");
		return 1;
	}
	printf("%d", (int)getpid());
	for (i = 0; i < argc - 2; i++)
		printf(" %d", (int)t[i].tid);
	printf("\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "name %d %15[^\n]", &tid, name) == 2) {
			rename_thread(t, count, tid, name);
			continue;
		}
		if (sscanf(line, "exit %d", &tid) != 1)
			continue;
		for (i = 0; i < count && t[i].tid != tid; i++)
			;
		if (i == count || t[i].stop)
			continue;
		pthread_mutex_lock(&lock);
		t[i].stop = 1;
		pthread_cond_broadcast(&change);
		pthread_mutex_unlock(&lock);
		pthread_join(t[i].thread, NULL);
		printf("exited %d\n", tid);
		fflush(stdout);
	}
	return 0;
}
