/*
 * timingfs.h: libtimingfs, the values of a timingfs mount for C
 * programs, in the Windows API's units.
 *
 * A struct tfs is one mount, opened by path (else $TIMINGFS_MOUNT,
 * else /run/timingfs); it reads the mount's files, never the daemon's
 * code, so it works wherever the mount is visible, containers included.
 * Values come back as Windows gives them whatever the mount's `units`:
 * cycles, durations in 100-ns intervals, timestamps as FILETIME
 * (100-ns intervals since 1601-01-01 UTC; 0 for a task still running).
 *
 * Every call returns 0 or -errno. After tfs_open() a struct tfs is
 * never changed, so any number of threads may use it at once. The read
 * calls allocate nothing: each opens the file it needs (openat below the
 * mount or below a task's directory), reads it into a stack buffer and
 * closes it.
 *
 * A task's directory descriptor (tfs_process_open, tfs_thread_open) names
 * one task instance, as a Windows handle does: after the task exits it
 * gives the final values and the exit time for as long as the daemon
 * keeps them ([exited] keep), then -ENOENT, never the values of a task
 * that took the number.
 */
#ifndef TIMINGFS_H
#define TIMINGFS_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(TIMINGFS_BUILDING)
#define TFS_API __attribute__((visibility("default")))
#else
#define TFS_API
#endif

/* The mount, opened by tfs_open(). */
struct tfs;

/* A task's five values, one consistent snapshot (its `times` file). */
struct tfs_times {
	uint64_t cycles; /* timestamp counter ticks, user and kernel */
	uint64_t kernel_100ns; /* time in kernel mode */
	uint64_t user_100ns; /* time in user mode */
	uint64_t creation_filetime; /* when it started */
	uint64_t exit_filetime; /* when it exited; 0 while it runs */
};

/* The caller's own process or thread, as a pid or tid argument. */
#define TFS_SELF 0

/*
 * tfs_open - open the mount at @path (NULL: $TIMINGFS_MOUNT if set and
 * not empty, else /run/timingfs), reading its `info`. 0 and *@out, or
 * -errno: -ENOENT no such path, -ENOTDIR, -EPROTO where it is not a
 * timingfs mount (no `info` with `units`), -ENOMEM.
 */
TFS_API int tfs_open(const char *path, struct tfs **out);

/* tfs_close - release @tfs (NULL is allowed). Descriptors that
 * tfs_process_open() and tfs_thread_open() gave stay the caller's. */
TFS_API void tfs_close(struct tfs *tfs);

/* tfs_units_unix - 1 when the mount shows unix units (and the library
 * converts), 0 for windows units. */
TFS_API int tfs_units_unix(const struct tfs *tfs);

/*
 * tfs_process_open / tfs_thread_open - a descriptor of the task's
 * directory (O_DIRECTORY|O_CLOEXEC), which pins the task instance; the
 * caller closes it with close(2). @pid TFS_SELF is the caller's process
 * (`proc/self`); @tid TFS_SELF the calling thread (with @pid TFS_SELF).
 * Numbers are the caller's PID namespace's. -ENOENT where no such task
 * is visible (gone, or hidden by hidepid=invisible), -EACCES under
 * hidepid=noaccess, -EMFILE.
 */
TFS_API int tfs_process_open(const struct tfs *tfs, pid_t pid, int *dirfd);
TFS_API int tfs_thread_open(const struct tfs *tfs, pid_t pid, pid_t tid,
			    int *dirfd);

/*
 * tfs_task_times / tfs_task_cycles - the values of the task whose
 * directory is @dirfd (from tfs_process_open or tfs_thread_open).
 * -ENOENT once the task is gone and no longer kept; -EIO on content
 * that is not what timingfs writes.
 */
TFS_API int tfs_task_times(const struct tfs *tfs, int dirfd,
			   struct tfs_times *out);
TFS_API int tfs_task_cycles(const struct tfs *tfs, int dirfd, uint64_t *cycles);

/*
 * tfs_process_times / tfs_thread_times / tfs_process_cycles /
 * tfs_thread_cycles - the same by number, in one open of one file (no
 * directory kept): @pid and @tid as for tfs_thread_open().
 */
TFS_API int tfs_process_times(const struct tfs *tfs, pid_t pid,
			      struct tfs_times *out);
TFS_API int tfs_thread_times(const struct tfs *tfs, pid_t pid, pid_t tid,
			     struct tfs_times *out);
TFS_API int tfs_process_cycles(const struct tfs *tfs, pid_t pid,
			       uint64_t *cycles);
TFS_API int tfs_thread_cycles(const struct tfs *tfs, pid_t pid, pid_t tid,
			      uint64_t *cycles);

/*
 * tfs_group_count - the number of processor groups (fixed while the
 * mount lives). tfs_group_size - the processors of @group (those its
 * `cpus` lists; -EINVAL for a group out of range). tfs_current_group -
 * the group of the processor the calling thread last ran on.
 */
TFS_API int tfs_group_count(const struct tfs *tfs, unsigned int *count);
TFS_API int tfs_group_size(const struct tfs *tfs, unsigned int group,
			   unsigned int *count);
TFS_API int tfs_current_group(const struct tfs *tfs, unsigned int *group);

/*
 * tfs_group_idle_cycles - each processor's idle cycles in @group, one
 * snapshot, processor M at @cycles[M]. *@count is the room in @cycles
 * on entry and the number of processors on return; -ENOBUFS (nothing
 * written but *@count) when the room is less, -EINVAL for a group out
 * of range.
 */
TFS_API int tfs_group_idle_cycles(const struct tfs *tfs, unsigned int group,
				  uint64_t *cycles, unsigned int *count);

#ifdef __cplusplus
}
#endif

#endif
