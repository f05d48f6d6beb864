/*
 * helper-exit: tasks that exit, for the tests of exited tasks.
 *
 *   child MS GO    fork a child that burns MS ms of CPU time; print its
 *                  pid; when the file GO exists, print the wall-clock ns
 *                  (CLOCK_REALTIME) before it is told to exit and after
 *                  it is reaped: "T1 T2"
 *   thread MS GO   the same with a second thread of this process, which
 *                  prints "PID TID" first; then it waits for the file
 *                  GO.end before it exits itself
 *   group MS GO    a process of two threads: the main thread burns MS
 *                  ms, a second one 2*MS ms and exits; prints "PID TID",
 *                  and exits when GO exists
 *   burst N        fork N children that exit at once, reap each; print
 *                  the first and the last child's pid
 *   threads N      make N threads, one after the other, that exit at
 *                  once; print this process's pid and the first and the
 *                  last thread's tid, and wait for stdin to close
 *   reuse PID      make a child with the number PID (clone3's set_tid,
 *                  root only), print it, and wait for it to be killed
 *   hold N GO      make N threads (small stacks) that each spend about
 *                  0.1 ms in the kernel and in user space, then wait;
 *                  print this process's pid; when GO exists, they exit
 *                  together; print "exited" once all are joined, and
 *                  wait for stdin to close
 */
#include <errno.h>
#include <linux/sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t ns_of(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Spin until this thread has run @ms ms of CPU time. */
static void burn(unsigned long ms)
{
	volatile unsigned long n = 0;

	while (ns_of(CLOCK_THREAD_CPUTIME_ID) < ms * 1000000ULL)
		n++;
}

static void wait_for(const char *path)
{
	while (access(path, F_OK) != 0)
		usleep(1000);
}

static int child(unsigned long ms, const char *go)
{
	int to_child[2], from_child[2];
	uint64_t t1, t2;
	char c;
	pid_t pid;

	if (pipe(to_child) < 0 || pipe(from_child) < 0)
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		burn(ms);
		if (write(from_child[1], "b", 1) != 1 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	if (read(from_child[0], &c, 1) != 1)
		return 1;
	printf("%d\n", pid);
	fflush(stdout);
	wait_for(go);
	t1 = ns_of(CLOCK_REALTIME);
	if (write(to_child[1], "x", 1) != 1 || waitpid(pid, NULL, 0) != pid)
		return 1;
	t2 = ns_of(CLOCK_REALTIME);
	printf("%llu %llu\n", (unsigned long long)t1, (unsigned long long)t2);
	return 0;
}

static unsigned long thread_ms;
static volatile int thread_stop;
static volatile pid_t thread_tid;

static void *burner(void *arg)
{
	(void)arg;
	thread_tid = (pid_t)syscall(SYS_gettid);
	burn(thread_ms);
	__atomic_store_n(&thread_ms, 0, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&thread_stop, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

static int thread(unsigned long ms, const char *go)
{
	char end[4096];
	uint64_t t1, t2;
	pthread_t t;

	thread_ms = ms;
	if (pthread_create(&t, NULL, burner, NULL))
		return 1;
	while (__atomic_load_n(&thread_ms, __ATOMIC_ACQUIRE))
		usleep(1000);
	printf("%d %d\n", getpid(), thread_tid);
	fflush(stdout);
	wait_for(go);
	t1 = ns_of(CLOCK_REALTIME);
	__atomic_store_n(&thread_stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	t2 = ns_of(CLOCK_REALTIME);
	printf("%llu %llu\n", (unsigned long long)t1, (unsigned long long)t2);
	fflush(stdout);
	snprintf(end, sizeof(end), "%s.end", go);
	wait_for(end);
	return 0;
}

static int group(unsigned long ms, const char *go)
{
	pthread_t t;

	thread_ms = 2 * ms;
	thread_stop = 1;
	if (pthread_create(&t, NULL, burner, NULL))
		return 1;
	burn(ms);
	pthread_join(t, NULL);
	printf("%d %d\n", getpid(), thread_tid);
	fflush(stdout);
	wait_for(go);
	return 0;
}

static int burst(long n)
{
	pid_t pid, first = 0, last = 0;
	long i;

	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(0);
		if (!first)
			first = pid;
		last = pid;
		if (waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	printf("%d %d\n", first, last);
	return 0;
}

static void *note_tid(void *arg)
{
	*(pid_t *)arg = (pid_t)syscall(SYS_gettid);
	return NULL;
}

static int threads(long n)
{
	pid_t tid, first = 0, last = 0;
	char c;
	long i;

	for (i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, note_tid, &tid) ||
		    pthread_join(t, NULL))
			return 1;
		if (!first)
			first = tid;
		last = tid;
	}
	printf("%d %d %d\n", getpid(), first, last);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_go = PTHREAD_COND_INITIALIZER;
static int hold_release;

static void *holder(void *arg)
{
	uint64_t until = ns_of(CLOCK_THREAD_CPUTIME_ID) + 200000;

	(void)arg;
	while (ns_of(CLOCK_THREAD_CPUTIME_ID) < until)
		(void)syscall(SYS_getppid);
	pthread_mutex_lock(&hold_lock);
	while (!hold_release)
		pthread_cond_wait(&hold_go, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
	return NULL;
}

static int hold(long n, const char *go)
{
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t attr;
	char c;
	long i;

	if (!t || pthread_attr_init(&attr) ||
	    pthread_attr_setstacksize(&attr, 64 * 1024))
		return 1;
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, holder, NULL))
			return 1;
	printf("%d\n", getpid());
	fflush(stdout);
	wait_for(go);
	pthread_mutex_lock(&hold_lock);
	hold_release = 1;
	pthread_cond_broadcast(&hold_go);
	pthread_mutex_unlock(&hold_lock);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("exited\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	free(t);
	return 0;
}

static int reuse(pid_t want)
{
	pid_t set_tid[1] = { want };
	struct clone_args args;
	long pid;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	args.set_tid = (uint64_t)(uintptr_t)set_tid;
	args.set_tid_size = 1;
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		fprintf(stderr, "clone3: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		for (;;)
			pause();
	}
	printf("%ld\n", pid);
	fflush(stdout);
	waitpid((pid_t)pid, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "child"))
		return child(strtoul(argv[2], NULL, 10), argv[3]);
	if (argc == 4 && !strcmp(argv[1], "thread"))
		return thread(strtoul(argv[2], NULL, 10), argv[3]);
	if (argc == 4 && !strcmp(argv[1], "group"))
		return group(strtoul(argv[2], NULL, 10), argv[3]);
	if (argc == 3 && !strcmp(argv[1], "burst"))
		return burst(strtol(argv[2], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "threads"))
		return threads(strtol(argv[2], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "reuse"))
		return reuse((pid_t)strtol(argv[2], NULL, 10));
	if (argc == 4 && !strcmp(argv[1], "hold"))
		return hold(strtol(argv[2], NULL, 10), argv[3]);
	fprintf(stderr, "usage: helper-exit child|thread|group MS GO | "
			"burst N | threads N | reuse PID | hold N GO\n");
	return 2;
}
