/*
 * helper-io: system calls the shell cannot make exactly, for the tests.
 *
 *   helper-io errno OP PATH [PATH2]  make one call; print OK or the
 *                                    errno name (ENOENT, EROFS, ...)
 *   helper-io pread PATH OFF LEN     open, and as the very first read,
 *                                    pread LEN bytes at OFF; print them
 *   helper-io bytewise PATH          read one byte per read(); print all
 *   helper-io hold PATH              open; print "open"; wait for a line
 *                                    on stdin; then fstat (print
 *                                    "mode MODE uid UID") and read and
 *                                    print all of it
 *
 * Exit status: 0, 1 when a call of pread, bytewise or hold fails (its
 * errno name printed on stderr), 2 for bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>

static int open_read(const char *path)
{
	char buf[64];
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
		return -1;
	return close(fd);
}

static int open_write(const char *path)
{
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	return write(fd, "1\n", 2) < 0 ? -1 : close(fd);
}

static int make_call(const char *op, const char *path, const char *path2)
{
	struct stat st;
	char buf[256];

	if (!strcmp(op, "read"))
		return open_read(path);
	if (!strcmp(op, "write"))
		return open_write(path);
	if (!strcmp(op, "rdwr"))
		return open(path, O_RDWR) < 0 ? -1 : 0;
	if (!strcmp(op, "trunc"))
		return open(path, O_RDONLY | O_TRUNC) < 0 ? -1 : 0;
	if (!strcmp(op, "create"))
		return open(path, O_WRONLY | O_CREAT | O_EXCL, 0644) < 0 ? -1 :
									   0;
	if (!strcmp(op, "creat"))
		return creat(path, 0644) < 0 ? -1 : 0;
	if (!strcmp(op, "mkdir"))
		return mkdir(path, 0755);
	if (!strcmp(op, "mknod"))
		return mknod(path, S_IFIFO | 0644, 0);
	if (!strcmp(op, "unlink"))
		return unlink(path);
	if (!strcmp(op, "rmdir"))
		return rmdir(path);
	if (!strcmp(op, "rename"))
		return rename(path, path2);
	if (!strcmp(op, "link"))
		return link(path, path2);
	if (!strcmp(op, "symlink"))
		return symlink("x", path);
	if (!strcmp(op, "chmod"))
		return chmod(path, 0644);
	if (!strcmp(op, "chown"))
		return chown(path, 1, 1);
	if (!strcmp(op, "truncate"))
		return truncate(path, 0);
	if (!strcmp(op, "utimes"))
		return utimes(path, NULL);
	if (!strcmp(op, "setxattr"))
		return setxattr(path, "user.x", "1", 1, 0);
	if (!strcmp(op, "removexattr"))
		return removexattr(path, "user.x");
	if (!strcmp(op, "stat"))
		return stat(path, &st);
	if (!strcmp(op, "lstat"))
		return lstat(path, &st);
	if (!strcmp(op, "readlink"))
		return readlink(path, buf, sizeof(buf)) < 0 ? -1 : 0;
	if (!strcmp(op, "opendir"))
		return open(path, O_RDONLY | O_DIRECTORY) < 0 ? -1 : 0;
	fprintf(stderr, "helper-io: unknown call %s\n", op);
	exit(2);
}

static int fail(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, strerrorname_np(errno));
	return 1;
}

static int print_all(int fd, size_t chunk)
{
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, chunk)) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	return n < 0 ? fail("read") : 0;
}

static int first_pread(int fd, const char *off, const char *len)
{
	char buf[4096];
	size_t size = (size_t)atoi(len);
	ssize_t n;

	if (size > sizeof(buf))
		size = sizeof(buf);
	n = pread(fd, buf, size, atoi(off));
	if (n < 0)
		return fail("pread");
	fwrite(buf, 1, (size_t)n, stdout);
	return 0;
}

static int hold(int fd)
{
	char line[16];
	struct stat st;

	puts("open");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (fstat(fd, &st) < 0)
		return fail("fstat");
	printf("mode %o uid %u\n", (unsigned int)st.st_mode,
	       (unsigned int)st.st_uid);
	return print_all(fd, 4096);
}

int main(int argc, char **argv)
{
	int fd;

	if (argc >= 4 && !strcmp(argv[1], "errno")) {
		if (make_call(argv[2], argv[3], argc > 4 ? argv[4] : "") == 0)
			puts("OK");
		else
			puts(strerrorname_np(errno));
		return 0;
	}
	if (argc < 3)
		return 2;
	fd = open(argv[2], O_RDONLY);
	if (fd < 0)
		return fail("open");
	if (!strcmp(argv[1], "pread") && argc == 5)
		return first_pread(fd, argv[3], argv[4]);
	if (!strcmp(argv[1], "bytewise"))
		return print_all(fd, 1);
	if (!strcmp(argv[1], "hold"))
		return hold(fd);
	return 2;
}
