/*
 * fuzz-task-status: task_parse_status on a /proc/PID/task/TID/status file.
 */
#include <errno.h>

#include "fuzz.h"
#include "procfile.h"
#include "task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	pid_t tgid;
	uid_t uid;
	gid_t gid;
	int ret;

	ret = task_parse_status(text, &tgid, &uid, &gid);
	fuzz_assert(ret == 0 || ret == -EIO);
	if (ret == 0) {
		fuzz_assert(tgid > 0);
		fuzz_assert(procfile_field(text, "Tgid:") &&
			    procfile_field(text, "Uid:") &&
			    procfile_field(text, "Gid:"));
	}
	fuzz_assert(memcmp(text, data, size) == 0);
	free(text);
	return 0;
}
