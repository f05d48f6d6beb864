/*
 * helper-busy: a process with a busy thread and a sleeping one, for the
 * live tests. Prints "PID BUSY_TID SLEEPING_TID" and runs until stdin
 * reaches end of file (or it is killed).
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile pid_t busy_tid, sleeping_tid;

static void *busy(void *arg)
{
	volatile unsigned long n = 0;

	(void)arg;
	busy_tid = (pid_t)syscall(SYS_gettid);
	for (;;)
		n++;
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	sleeping_tid = (pid_t)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	char buf[64];

	if (pthread_create(&a, NULL, busy, NULL) ||
	    pthread_create(&b, NULL, sleeper, NULL))
		return 1;
	while (!busy_tid || !sleeping_tid)
		usleep(1000);
	printf("%d %d %d\n", (int)getpid(), (int)busy_tid, (int)sleeping_tid);
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
