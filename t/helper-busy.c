/*
 * helper-busy: a process with a busy thread and a sleeping one, for the
 * live tests. Prints "PID BUSY_TID SLEEPING_TID" once both threads run,
 * then runs until stdin reaches end of file, or with -k until it is
 * killed (SIGTERM ends it).
 *
 * The busy thread alternates between spinning in user mode and reading
 * /dev/zero (copying zeroes in kernel mode), so that its time has both
 * a user and a kernel share: about half each, since the kernel counts
 * the split in clock ticks, and a share of a few percent was seen to get
 * no tick at all in 72.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile pid_t busy_tid, sleeping_tid;

static void *busy(void *arg)
{
	static char buf[1 << 16];
	volatile unsigned long n;
	int fd, i;

	(void)arg;
	fd = open("/dev/zero", O_RDONLY);
	busy_tid = (pid_t)syscall(SYS_gettid);
	for (;;) {
		for (n = 0; n < 2000000; n++)
			;
		for (i = 0; fd >= 0 && i < 500; i++)
			if (read(fd, buf, sizeof(buf)) < 0)
				break;
	}
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

int main(int argc, char **argv)
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
	if (argc > 1 && !strcmp(argv[1], "-k"))
		for (;;)
			pause();
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
