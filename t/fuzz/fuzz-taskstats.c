/*
 * fuzz-taskstats: listener_parse_stats on a struct taskstats record, as
 * its own version field says (0) and as each version a thread's record
 * could impose on its group's.
 */
#include <errno.h>
#include <stddef.h>

#include <linux/taskstats.h>

#include "fuzz.h"
#include "listener.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned int versions[] = { 0,  11, 12, 13,   14,
						 15, 16, 17, 65535 };
	struct taskstats_fields f;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		ret = listener_parse_stats(data, size, versions[i], &f);
		fuzz_assert(ret == 0 || ret == -EIO);
		if (ret < 0)
			continue;
		fuzz_assert(f.version >= 12);
		fuzz_assert(!versions[i] || f.version == versions[i]);
		/* Long enough to hold ac_tgid where that version has it. */
		fuzz_assert(size >= offsetof(struct taskstats, ac_tgid) + 4);
	}
	return 0;
}
