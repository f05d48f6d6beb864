/*
 * procfile: reading and parsing small procfs and sysfs files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfile.h"

/* A task that exits between open and read shows up as ESRCH. */
static int gone_as_enoent(int err)
{
	return (err == ENOENT || err == ESRCH) ? -ENOENT : -err;
}

/*
 * Read into @buf from *@len up to @size. The files read here are made
 * whole by the kernel at a read from their start (procfs files of one
 * record, sysfs attributes) or are regular files, so a read shorter than
 * asked is the end: no read only to see end of file. Returns 0 at the
 * end, 1 when @buf is full and there may be more, or -errno.
 */
static int read_fd(int fd, char *buf, size_t size, size_t *len)
{
	ssize_t n;

	while (*len < size) {
		n = read(fd, buf + *len, size - *len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return gone_as_enoent(errno);
		}
		*len += (size_t)n;
		if (*len < size)
			return 0;
	}
	return 1;
}

int procfile_read(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd, ret;

	if (size < 2)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gone_as_enoent(errno);
	ret = read_fd(fd, buf, size - 1, &len);
	close(fd);
	if (ret < 0)
		return ret;
	if (ret > 0)
		return -EFBIG;
	buf[len] = '\0';
	return (int)len;
}

int procfile_read_alloc(const char *path, size_t hint, char **out)
{
	size_t len = 0, size = hint < 64 ? 64 : hint;
	char *buf = NULL, *bigger;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gone_as_enoent(errno);
	for (;;) {
		bigger = realloc(buf, size);
		if (!bigger) {
			ret = -ENOMEM;
			goto out_free;
		}
		buf = bigger;
		ret = read_fd(fd, buf, size - 1, &len);
		if (ret < 0)
			goto out_free;
		if (ret == 0)
			break;
		if (size > (size_t)1 << 30) {
			ret = -EFBIG;
			goto out_free;
		}
		size *= 2;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	return (int)len;

out_free:
	free(buf);
	close(fd);
	return ret;
}

int procfile_pread_alloc(int fd, size_t *hint, char **out)
{
	size_t size = __atomic_load_n(hint, __ATOMIC_RELAXED);
	ssize_t n;
	char *buf;

	if (size < 64)
		size = 64;
	for (;;) {
		buf = malloc(size);
		if (!buf)
			return -ENOMEM;
		do
			n = pread(fd, buf, size - 1, 0);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			free(buf);
			return gone_as_enoent(errno);
		}
		if ((size_t)n < size - 1)
			break;
		/* Full: read it all again, anew, into a larger buffer. */
		free(buf);
		if (size > (size_t)1 << 30)
			return -EFBIG;
		size *= 2;
	}
	if (size > __atomic_load_n(hint, __ATOMIC_RELAXED))
		__atomic_store_n(hint, size, __ATOMIC_RELAXED);
	buf[n] = '\0';
	*out = buf;
	return (int)n;
}

int procfile_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t acc = 0;
	unsigned int digit;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EIO;
	for (; *s >= '0' && *s <= '9'; s++) {
		digit = (unsigned int)(*s - '0');
		if (acc > (UINT64_MAX - digit) / 10)
			return -EIO;
		acc = acc * 10 + digit;
	}
	*v = acc;
	*p = s;
	return 0;
}

const char *procfile_field(const char *text, const char *key)
{
	size_t klen = strlen(key);
	const char *line = text;

	while (line && *line) {
		if (strncmp(line, key, klen) == 0) {
			line += klen;
			while (*line == ' ' || *line == '\t')
				line++;
			return line;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

ino_t procfile_ns_ino(const char *path, const char *type)
{
	size_t len = strlen(type);
	char link[64], *end;
	unsigned long long ino;
	ssize_t n;

	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	if (strncmp(link, type, len) != 0 || link[len] != ':' ||
	    link[len + 1] != '[')
		return 0;
	errno = 0;
	ino = strtoull(link + len + 2, &end, 10);
	if (errno || end == link + len + 2 || strcmp(end, "]") != 0)
		return 0;
	return (ino_t)ino;
}
