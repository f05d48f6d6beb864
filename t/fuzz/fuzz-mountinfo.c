/*
 * fuzz-mountinfo: mountinfo_parse_access on a mountinfo file, for the
 * usual proc root, the root itself and one deeper down.
 */
#include <errno.h>

#include "fuzz.h"
#include "access.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const roots[] = { "/proc", "/", "/srv/a b/proc" };
	enum hidepid hidepid;
	char *text;
	size_t i;
	gid_t gid;
	int ret;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		text = fuzz_text(data, size); /* cut in place each time */
		hidepid = HIDEPID_AUTO;
		gid = 42;
		ret = mountinfo_parse_access(text, roots[i], &hidepid, &gid);
		fuzz_assert(ret == 0 || ret == -EIO);
		if (ret == 0) {
			fuzz_assert(hidepid == HIDEPID_OFF ||
				    hidepid == HIDEPID_NOACCESS ||
				    hidepid == HIDEPID_INVISIBLE);
			fuzz_assert(gid <= ACCESS_GID_MAX ||
				    gid == ACCESS_GID_NONE);
		} else {
			/* Written only on success. */
			fuzz_assert(hidepid == HIDEPID_AUTO && gid == 42);
		}
		free(text);
	}
	return 0;
}
