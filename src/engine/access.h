/*
 * access: who may see a task, as procfs decides it, and how the procfs
 * the engine reads hides processes.
 *
 * procfs's mount options hidepid= and gid= decide which processes a
 * reader may see; [access] hidepid = auto takes them from the mount of
 * the procfs that [sources] proc names, as /proc/self/mountinfo shows
 * it, so that timingfs never shows a reader more than that procfs would.
 * Thread safe: no state.
 */
#ifndef TIMINGFS_ACCESS_H
#define TIMINGFS_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"

/*
 * Who may see a task, as procfs decides it (fs/proc/base.c
 * has_pid_permissions, kernel/ptrace.c __ptrace_may_access with
 * PTRACE_MODE_READ_FSCREDS): a member of gid= sees every task; a
 * reader sees a task of its own thread group; else its fsuid must be
 * the task's real, effective and saved uid and its fsgid the three
 * gids, its effective capabilities must hold the task's permitted
 * ones, and the task must be dumpable (procfs then owns /proc/PID by
 * the task's effective uid, not by root); failing which the reader
 * needs CAP_SYS_PTRACE over the task. The functions below are the
 * pieces; nodes.c puts them together, reading only what a decision
 * needs (the reader's capabilities when the ids do not decide).
 *
 * A reader's capabilities are valid in its own user namespace: one in
 * the daemon's sees every task with CAP_SYS_PTRACE; one in another
 * only the tasks of that very namespace (not those of namespaces
 * nested in it: stricter than the kernel, never looser). A task's
 * permitted capabilities are compared with the reader's effective
 * ones as if both were in one user namespace.
 */
#define ACCESS_CAP_SYS_PTRACE 19

/* access_ids_match - whether @fsuid and @fsgid are all three of the
 * task's uids (@uid: real, effective, saved) and gids. */
bool access_ids_match(const uid_t uid[3], const gid_t gid[3], uid_t fsuid,
		      gid_t fsgid);

/* access_caps_cover - whether effective capabilities @eff hold every
 * one of permitted set @prm. */
bool access_caps_cover(uint64_t eff, uint64_t prm);

/*
 * access_reader_caps - the effective capabilities (CapEff) of thread
 * @tid of the real /proc (the daemon's numbers) into *@eff, and the
 * nsfs inode of its user namespace into *@userns. 0, -ENOENT when the
 * thread is gone, -EIO when its status has no CapEff line.
 */
int access_reader_caps(pid_t tid, uint64_t *eff, ino_t *userns);

/* access_userns_of - the nsfs inode of the user namespace of task
 * @pid of the real /proc; 0 when it cannot be read. The daemon's:
 * access_userns_of(0). */
ino_t access_userns_of(pid_t pid);

/* access_same_process - whether thread @tid is a thread of process
 * @pid, in the real /proc. */
bool access_same_process(pid_t pid, pid_t tid);

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
 * nothing: HIDEPID_OFF and ACCESS_GID_NONE. For procfs, hidepid= by name
 * or number (0 off, 1 noaccess, 2 invisible; ptraceable, 4, is taken as
 * invisible, the nearest rule timingfs has), none: off; gid=N, none:
 * ACCESS_GID_NONE. @proc_root is compared as given, not resolved.
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
 * access_resolve - the access rules into @out: @hidepid, or with
 * HIDEPID_AUTO that of the procfs holding @proc_root (symbolic links in
 * it resolved first, where it exists) by mountinfo_proc_access() on
 * @mountinfo_path; the gid *@gid where given (not NULL), else with auto
 * procfs's, else ACCESS_GID_NONE. An explicit hidepid reads no file.
 * Returns 0, or -errno with one line "MOUNTINFO_PATH: why" in @err (cut
 * to @errlen) and @out untouched.
 */
int access_resolve(enum hidepid hidepid, const gid_t *gid,
		   const char *proc_root, const char *mountinfo_path,
		   struct access_policy *out, char *err, size_t errlen);

#endif
