/*
 * nspid: parsing the NSpid and NStgid lines of a status file, and the
 * walk up a PID namespace's parents.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/nsfs.h>

#include "nspid.h"
#include "procfile.h"

/* A pid is at most the kernel's PID_MAX_LIMIT, 2^22. */
#define PID_MAX (1ULL << 22)

int nspid_parse(const char *status, const char *key, pid_t *out,
		unsigned int max)
{
	const char *p = procfile_field(status, key);
	unsigned int n = 0;
	uint64_t v;

	if (!p)
		return -ENOENT;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\n' || *p == '\0')
			break;
		if (n == max || procfile_u64(&p, &v) < 0 || v == 0 ||
		    v > PID_MAX)
			return -EIO;
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\0')
			return -EIO;
		out[n++] = (pid_t)v;
	}
	return n ? (int)n : -EIO;
}

unsigned int nspid_chain(int fd, ino_t top, ino_t *ino, unsigned int max,
			 int *err)
{
	int cur = fd, parent;
	unsigned int n = 0;
	struct stat st;

	*err = -ENOENT;
	while (n < max) {
		if (fstat(cur, &st) < 0) {
			*err = -errno;
			break;
		}
		ino[n++] = st.st_ino;
		if (top && st.st_ino == top) {
			*err = 0;
			break;
		}
		if (n == max)
			break;
		parent = ioctl(cur, NS_GET_PARENT);
		if (parent < 0 && errno != EPERM)
			*err = -errno;
		if (cur != fd)
			close(cur);
		cur = parent;
		if (cur < 0)
			break;
	}
	if (cur >= 0 && cur != fd)
		close(cur);
	return n;
}
