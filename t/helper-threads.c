/*
 * helper-threads: readlink a path from the main thread and from a second
 * thread, for the proc/self test. Prints "PID MAIN_TARGET THREAD_TARGET":
 * a link to the caller's process reads the same from both.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *path;

static void *read_link(void *arg)
{
	char *buf = arg;
	ssize_t n = readlink(path, buf, 63);

	buf[n < 0 ? 0 : n] = '\0';
	return NULL;
}

int main(int argc, char **argv)
{
	char main_target[64], thread_target[64];
	pthread_t t;

	if (argc != 2)
		return 2;
	path = argv[1];
	read_link(main_target);
	if (pthread_create(&t, NULL, read_link, thread_target) ||
	    pthread_join(t, NULL))
		return 1;
	printf("%d %s %s\n", (int)getpid(), main_target, thread_target);
	return !main_target[0] || !thread_target[0];
}
