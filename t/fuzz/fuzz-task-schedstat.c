/*
 * fuzz-task-schedstat: task_parse_schedstat on a schedstat line
 * ("RUNTIME_NS WAIT_NS TIMESLICES").
 */
#include <errno.h>

#include "fuzz.h"
#include "task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	const char *p = text;
	uint64_t runtime_ns;
	int ret;

	ret = task_parse_schedstat(text, &runtime_ns);
	fuzz_assert(ret == 0 || ret == -EIO);
	if (ret == 0) {
		/* Blanks, digits, then the blank before the next field. */
		p += strspn(p, " \t");
		fuzz_assert(*p >= '0' && *p <= '9');
		p += strspn(p, "0123456789");
		fuzz_assert(*p == ' ');
		fuzz_assert(runtime_ns == strtoull(text, NULL, 10));
	}
	fuzz_assert(memcmp(text, data, size) == 0);
	free(text);
	return 0;
}
