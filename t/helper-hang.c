/*
 * helper-hang: a FUSE file system that never answers, as a hostile
 * container could mount one.
 *
 *   helper-hang DIR
 *                  mount a FUSE file system at DIR (as root) and never
 *                  read its device: every request to it, the kernel's
 *                  INIT first, waits until this process is killed.
 *                  Prints "mounted" once it is, then sleeps.
 *
 * Exit status: 1 when it cannot mount (why on stderr), 2 for bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
	char opts[128];
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: helper-hang DIR\n");
		return 2;
	}
	fd = open("/dev/fuse", O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "helper-hang: /dev/fuse: %s\n",
			strerror(errno));
		return 1;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
	if (mount("hang", argv[1], "fuse.hang", MS_NOSUID | MS_NODEV, opts) <
	    0) {
		fprintf(stderr, "helper-hang: mount %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	printf("mounted\n");
	fflush(stdout);
	for (;;)
		pause();
}
