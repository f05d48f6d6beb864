/*
 * fuzz-config: config_load on a configuration file.
 *
 * config_load reads a path through inih and a line reader of its own,
 * and that reader is much of what is fuzzed, so the input is written to
 * a memfd (made once, rewritten each time) and loaded as
 * /proc/self/fd/N: the same code as for /etc/timingfs.conf.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"

/* The path of a memfd holding exactly @data. */
static const char *as_file(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz-config", MFD_CLOEXEC);
		fuzz_assert(fd >= 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	fuzz_assert(ftruncate(fd, 0) == 0);
	fuzz_assert(size == 0 || pwrite(fd, data, size, 0) == (ssize_t)size);
	return path;
}

static void check_config(const struct config *cfg)
{
	fuzz_assert(cfg->group_max_size >= 1 &&
		    cfg->group_max_size <= CONFIG_GROUP_MAX);
	fuzz_assert(cfg->units == UNITS_WINDOWS || cfg->units == UNITS_UNIX);
	fuzz_assert(cfg->proc_root[0] == '/' && cfg->sys_root[0] == '/');
	fuzz_assert(strlen(cfg->proc_root) < CONFIG_ROOT_MAX &&
		    strlen(cfg->sys_root) < CONFIG_ROOT_MAX);
	fuzz_assert(cfg->hidepid <= HIDEPID_INVISIBLE);
	fuzz_assert(cfg->access_gid_set ? cfg->access_gid <= ACCESS_GID_MAX :
					  cfg->access_gid == ACCESS_GID_NONE);
	fuzz_assert(cfg->exited_keep_s <= CONFIG_KEEP_MAX);
	fuzz_assert(cfg->exited_max_tasks >= 1 &&
		    cfg->exited_max_tasks <= CONFIG_MAX_TASKS_MAX);
}

/* "PATH:LINE: why" with LINE one of the file's, for bad content. */
static void check_error(const char *path, const char *err, const uint8_t *data,
			size_t size)
{
	size_t len = strlen(path), lines = 1, i;
	unsigned long line;
	char *end;

	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	fuzz_assert(strncmp(err, path, len) == 0 && err[len] == ':');
	line = strtoul(err + len + 1, &end, 10);
	fuzz_assert(end > err + len + 1 && *end == ':');
	fuzz_assert(line >= 1 && line <= lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = as_file(data, size);
	struct config cfg;
	char err[512];
	int ret;

	config_defaults(&cfg);
	cfg.group_max_size = 7; /* a failed load must not touch it */
	err[0] = '\0';
	ret = config_load(&cfg, path, err, sizeof(err));
	fuzz_assert(ret == 0 || ret == -EINVAL || ret == -ENOMEM);
	if (ret == 0) {
		check_config(&cfg);
	} else {
		fuzz_assert(cfg.group_max_size == 7);
		if (ret == -EINVAL)
			check_error(path, err, data, size);
	}
	return 0;
}
