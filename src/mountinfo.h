/*
 * mountinfo: which procfs the engine reads, and how it hides processes.
 *
 * procfs's mount options hidepid= and gid= decide which processes a
 * reader may see; [access] hidepid = auto takes them from the mount of
 * the procfs that [sources] proc names, as /proc/self/mountinfo shows
 * it, so that timingfs never shows a reader more than that procfs would.
 * Thread safe: no state.
 */
#ifndef TIMINGFS_MOUNTINFO_H
#define TIMINGFS_MOUNTINFO_H

#include <stddef.h>
#include <sys/types.h>

#include "config.h"

/* The access rules in force: never HIDEPID_AUTO. */
struct access_policy {
	enum hidepid hidepid;
	gid_t gid; /* exempt from hidepid; CONFIG_GID_NONE for none */
};

/*
 * mountinfo_proc_access - the hidepid= and gid= of the mount that holds
 * @path, from the mountinfo file @mountinfo_path: the last (topmost)
 * mount whose mount point is @path or a directory above it. A mount that
 * is not procfs (a captured tree in a directory) hides nothing: OFF and
 * CONFIG_GID_NONE. procfs's hidepid values are taken by name or number
 * (0 off, 1 noaccess, 2 invisible); ptraceable (4) is taken as
 * invisible, the nearest rule timingfs has. Returns 0, -errno when the
 * file cannot be read, -EIO for a line or an option that is not what the
 * kernel writes.
 */
int mountinfo_proc_access(const char *mountinfo_path, const char *path,
			  enum hidepid *hidepid, gid_t *gid);

/*
 * access_resolve - the access rules of @cfg: its hidepid, or with auto
 * those of the procfs @cfg->proc_root names (mountinfo_proc_access());
 * its gid when given, else with auto procfs's, else none. On failure
 * writes "MOUNTINFO_PATH: why" into @err and returns -errno.
 */
int access_resolve(const struct config *cfg, const char *mountinfo_path,
		   struct access_policy *out, char *err, size_t errlen);

#endif
