/*
 * fuzz-netlink: what the listener makes of a received buffer: the walk
 * over its netlink messages (listener_next_msg), and each message read
 * both as a taskstats exit message and as a proc connector fork record.
 */
#include <errno.h>

#include "fuzz.h"
#include "listener.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A received buffer is aligned; the input may not be. */
	uint8_t *buf = malloc(size ? size : 1);
	const struct nlmsghdr *nlh;
	struct listener_exit x;
	struct listener_fork f;
	size_t off = 0, at;
	int ret;

	if (!buf)
		abort();
	if (size)
		memcpy(buf, data, size);
	for (at = off; (nlh = listener_next_msg(buf, size, &off)); at = off) {
		/* The whole message is in the buffer. */
		fuzz_assert((const uint8_t *)nlh == buf + at);
		fuzz_assert(nlh->nlmsg_len >= sizeof(*nlh) &&
			    nlh->nlmsg_len <= size - at);
		fuzz_assert(off > at);
		ret = listener_decode_exit(nlh, &x);
		fuzz_assert(ret == 0 || ret == -EIO);
		if (ret == 0) {
			fuzz_assert(x.thread.tgid != 0 &&
				    x.thread.version >= 12);
			fuzz_assert(!x.has_group ||
				    x.group.version == x.thread.version);
			fuzz_assert(!(x.whole && x.has_group));
		}
		ret = listener_decode_fork(nlh, &f);
		fuzz_assert(ret == 0 || ret == -EIO);
	}
	free(buf);
	return 0;
}
