/*
 * procfile: reading and parsing the small text files of procfs and
 * sysfs (or of a captured tree laid out like them).
 *
 * Every reader maps "the task is gone" (ENOENT, ESRCH) to -ENOENT and
 * returns other failures as -errno; a file whose content does not parse
 * is -EIO. Thread safe: no state.
 */
#ifndef TIMINGFS_PROCFILE_H
#define TIMINGFS_PROCFILE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * procfile_read - read the whole file @path into @buf of @size bytes and
 * NUL-terminate it. Returns the length, -EFBIG when it does not fit, or
 * -errno.
 */
int procfile_read(const char *path, char *buf, size_t size);

/*
 * procfile_read_alloc - read the whole file @path, however large, into
 * a malloc'd NUL-terminated buffer at *@out (the caller frees it).
 * @hint is the size to try first. Returns the length or -errno.
 */
int procfile_read_alloc(const char *path, size_t hint, char **out);

/*
 * procfile_pread_alloc - read the whole of the open file @fd afresh,
 * from its start, with one pread() into a malloc'd NUL-terminated
 * buffer at *@out (the caller frees it). procfs and sysfs make their
 * content anew for a read at offset 0, so an fd kept open serves every
 * read without an open and a close. *@hint is the size to try first; it
 * grows to what the file needed (shared by threads, updated racily but
 * harmlessly). Returns the length or -errno.
 */
int procfile_pread_alloc(int fd, size_t *hint, char **out);

/*
 * procfile_u64 - parse an unsigned decimal at *@p, skipping leading
 * blanks, advance *@p past it. Returns 0, or -EIO when there is no
 * number or it overflows.
 */
int procfile_u64(const char **p, uint64_t *v);

/*
 * procfile_field - find the value of the line "@key<blanks>VALUE" in
 * @text (e.g. "Tgid:" in a status file): returns a pointer to VALUE or
 * NULL. @key must match at the start of a line.
 */
const char *procfile_field(const char *text, const char *key);

/*
 * procfile_ns_ino - the nsfs inode of the namespace of type @type
 * ("pid", "user") that the magic link @path (/proc/PID/ns/TYPE) names,
 * from its target "TYPE:[INODE]"; 0 when it cannot be read so.
 */
ino_t procfile_ns_ino(const char *path, const char *type);

/*
 * procfile_no_fds - whether errno @err says the daemon, or the system,
 * is out of descriptors: an error to give the reader as it is, never a
 * broken source (EIO) or a task that is not there (ENOENT).
 */
static inline bool procfile_no_fds(int err)
{
	return err == EMFILE || err == ENFILE;
}

#endif
