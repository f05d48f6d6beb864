/*
 * fuzz-task-stat: task_parse_stat on a /proc/PID/task/TID/stat line.
 */
#include <errno.h>

#include "fuzz.h"
#include "task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct task_stat st;
	int ret;

	ret = task_parse_stat(text, &st);
	fuzz_assert(ret == 0 || ret == -EIO);
	if (ret == 0) {
		/* The fields follow the name, which ends at the last ")". */
		fuzz_assert(strrchr(text, ')') != NULL);
		fuzz_assert(st.cpu >= 0);
	}
	fuzz_assert(memcmp(text, data, size) == 0);
	free(text);
	return 0;
}
