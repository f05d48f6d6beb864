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
 * the absolute path @proc_root, from the mountinfo file @mountinfo_path
 * (proc(5); read whole, however large). The mount that holds it is the
 * one with the longest mount point that is @proc_root or a directory
 * above it on a component boundary ("/" holds everything, "/pro" does
 * not hold "/proc"), its octal escapes (\040 ...) decoded; of several at
 * that point (mounted over each other), the last line, the topmost.
 * Not simply the last line that holds it: a procfs mounted before the
 * root file system and moved under it (an initramfs does that) comes
 * first, "/" after it.
 *
 * A mount that is not procfs (a captured tree in a directory) hides
 * nothing: HIDEPID_OFF and CONFIG_GID_NONE. For procfs, hidepid= by name
 * or number (0 off, 1 noaccess, 2 invisible; ptraceable, 4, is taken as
 * invisible, the nearest rule timingfs has), none: off; gid=N, none:
 * CONFIG_GID_NONE. @proc_root is compared as given, not resolved.
 *
 * Returns 0 and sets *@hidepid and *@gid; -errno when the file cannot be
 * read; -EIO for a line without its " - " separator or the fields around
 * it, or when the chosen procfs has no super options, an unknown hidepid=
 * or a gid= that is not a GID. The outputs are only written on success.
 */
int mountinfo_proc_access(const char *mountinfo_path, const char *proc_root,
			  enum hidepid *hidepid, gid_t *gid);

/*
 * mountinfo_type_at - the type ("proc", "fuse.timingfs", ...) of the
 * topmost mount whose mount point is exactly the absolute path @path
 * (octal escapes decoded, not resolved), from the mountinfo file
 * @mountinfo_path, copied into @type of @size bytes (cut to fit).
 * Returns 1, 0 when @path is no mount point, or -errno (-EIO for a
 * malformed line).
 */
int mountinfo_type_at(const char *mountinfo_path, const char *path, char *type,
		      size_t size);

/*
 * mountinfo_parse_access - mountinfo_proc_access() on the text of a
 * mountinfo file, @text, which it cuts into lines and fields in place.
 * The same results but for a file that cannot be read.
 */
int mountinfo_parse_access(char *text, const char *proc_root,
			   enum hidepid *hidepid, gid_t *gid);

/*
 * access_resolve - the access rules of @cfg into @out. hidepid: @cfg's,
 * or with auto that of the procfs holding @cfg->proc_root (symbolic
 * links in it resolved first, where it exists) by
 * mountinfo_proc_access() on @mountinfo_path. gid: @cfg's when
 * @cfg->access_gid_set, else with auto procfs's, else CONFIG_GID_NONE.
 * An explicit hidepid reads no file. Returns 0, or -errno with one line
 * "MOUNTINFO_PATH: why" in @err (cut to @errlen) and @out untouched.
 */
int access_resolve(const struct config *cfg, const char *mountinfo_path,
		   struct access_policy *out, char *err, size_t errlen);

#endif
