/*
 * fuzz-task-status: task_parse_status and task_parse_creds on a
 * /proc/PID/task/TID/status file.
 */
#include <errno.h>

#include "fuzz.h"
#include "procfile.h"
#include "task.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	pid_t tgid;
	struct task_creds creds;
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
	ret = task_parse_creds(text, &creds);
	fuzz_assert(ret == 0 || ret == -EIO);
	/* The effective ids are the second of their lines, both ways. */
	if (ret == 0 && task_parse_status(text, &tgid, &uid, &gid) == 0)
		fuzz_assert(creds.uid[1] == uid && creds.gid[1] == gid);
	fuzz_assert(memcmp(text, data, size) == 0);
	free(text);
	return 0;
}
