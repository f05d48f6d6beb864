/*
 * helper-dirseek: reads a directory from every offset, as lseek() then
 * getdents64() (telldir/seekdir underneath) do, and checks that each
 * offset lands on an entry boundary or at the end.
 *
 * usage: helper-dirseek DIR
 *
 * Lists DIR whole from offset 0, then for every offset 0..N+2 (N the
 * number of entries) and a few far beyond, seeks there and reads: the
 * first entry read must be the N-th of the whole listing, or nothing at
 * or past the end, and every entry read must be one of the listing's.
 * Prints "N entries" and exits 0, or says what went wrong and exits 1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_ENTRIES 100000

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static char *names[MAX_ENTRIES];
static int count;

static int known(const char *name)
{
	int i;

	for (i = 0; i < count; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

/* One getdents64 at @off: the first name into @first ("" if none). */
static int read_at(int fd, off_t off, char *first, size_t size)
{
	char buf[4096];
	long n, pos;
	struct linux_dirent64 *d;

	first[0] = '\0';
	if (lseek(fd, off, SEEK_SET) != off) {
		fprintf(stderr, "lseek %lld: %s\n", (long long)off,
			strerror(errno));
		return -1;
	}
	n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
	if (n < 0) {
		fprintf(stderr, "getdents64 at %lld: %s\n", (long long)off,
			strerror(errno));
		return -1;
	}
	for (pos = 0; pos < n; pos += d->d_reclen) {
		d = (struct linux_dirent64 *)(buf + pos);
		if (pos == 0)
			snprintf(first, size, "%s", d->d_name);
		if (!known(d->d_name)) {
			fprintf(stderr, "at %lld: an entry never listed: %s\n",
				(long long)off, d->d_name);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const off_t far[] = { 1000, 65537, 123456789, INT32_MAX };
	char buf[4096], first[512];
	struct linux_dirent64 *d;
	long n, pos;
	int fd, i;
	size_t k;

	if (argc != 2) {
		fprintf(stderr, "usage: helper-dirseek DIR\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (pos = 0; pos < n; pos += d->d_reclen) {
			d = (struct linux_dirent64 *)(buf + pos);
			if (count == MAX_ENTRIES)
				return 1;
			names[count++] = strdup(d->d_name);
		}
	}
	if (n < 0) {
		perror("getdents64");
		return 1;
	}
	for (i = 0; i <= count + 2; i++) {
		if (read_at(fd, i, first, sizeof(first)) < 0)
			return 1;
		if (strcmp(first, i < count ? names[i] : "") != 0) {
			fprintf(stderr, "at %d: read '%s', want '%s'\n", i,
				first, i < count ? names[i] : "");
			return 1;
		}
	}
	for (k = 0; k < sizeof(far) / sizeof(far[0]); k++) {
		if (read_at(fd, far[k], first, sizeof(first)) < 0)
			return 1;
		if (first[0] && far[k] >= count) {
			fprintf(stderr, "at %lld: read '%s' past the end\n",
				(long long)far[k], first);
			return 1;
		}
	}
	printf("%d entries\n", count);
	return 0;
}
