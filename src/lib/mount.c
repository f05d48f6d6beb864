/*
 * mount.c: opening a timingfs mount for libtimingfs. The mount is named
 * by path, $TIMINGFS_MOUNT or /run/timingfs, and known by its `info`,
 * which says its units and how many processor groups it has. What is
 * read at open never changes, so a struct tfs is shared by every thread
 * without a lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib-internal.h"

#define DEFAULT_MOUNT "/run/timingfs"

/* The value of @key in `info` lines, as a pointer into @text, or NULL. */
static const char *info_value(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, key, len) == 0 && p[len] == ' ')
			return p + len + 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* The groups, where `info` does not say: groups/0, groups/1, ... */
static unsigned int probe_groups(int root_fd)
{
	char name[32];
	struct stat st;
	unsigned int n = 0;

	for (;;) {
		snprintf(name, sizeof(name), "groups/%u", n);
		if (fstatat(root_fd, name, &st, 0) < 0)
			return n;
		n++;
	}
}

static int read_info(struct tfs *tfs)
{
	char text[LIB_SMALL_FILE * 4];
	const char *units, *groups;
	uint64_t v;
	int len;

	len = lib_read_at(tfs->root_fd, "info", text, sizeof(text));
	if (len < 0)
		return len == -ENOENT ? -EPROTO : len;
	units = info_value(text, "units");
	if (!units)
		return -EPROTO;
	if (strncmp(units, "unix\n", 5) == 0)
		tfs->unix_units = 1;
	else if (strncmp(units, "windows\n", 8) != 0)
		return -EPROTO;
	groups = info_value(text, "group_count");
	if (groups && lib_parse_u64(&groups, &v) == 0 && v <= 65536)
		tfs->group_count = (unsigned int)v;
	else
		tfs->group_count = probe_groups(tfs->root_fd);
	return 0;
}

int tfs_open(const char *path, struct tfs **out)
{
	struct tfs *tfs;
	int ret;

	if (!path) {
		path = getenv("TIMINGFS_MOUNT");
		if (!path || !*path)
			path = DEFAULT_MOUNT;
	}
	tfs = calloc(1, sizeof(*tfs));
	if (!tfs)
		return -ENOMEM;
	tfs->root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (tfs->root_fd < 0) {
		ret = -errno;
		goto out_free;
	}
	ret = read_info(tfs);
	if (ret < 0)
		goto out_close;
	*out = tfs;
	return 0;

out_close:
	close(tfs->root_fd);
out_free:
	free(tfs);
	return ret;
}

void tfs_close(struct tfs *tfs)
{
	if (!tfs)
		return;
	close(tfs->root_fd);
	free(tfs);
}

int tfs_units_unix(const struct tfs *tfs)
{
	return tfs->unix_units;
}
