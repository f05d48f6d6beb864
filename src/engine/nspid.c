/*
 * nspid: parsing the NSpid and NStgid lines of a status file.
 */
#include <errno.h>
#include <stdint.h>

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
