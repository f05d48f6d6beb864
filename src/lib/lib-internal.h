/*
 * lib-internal.h: what the files of libtimingfs share and export to no
 * one: the mount's struct, reading one small file into a caller's buffer,
 * parsing its numbers.
 */
#ifndef TIMINGFS_LIB_INTERNAL_H
#define TIMINGFS_LIB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "timingfs.h"

struct tfs {
	int root_fd; /* O_PATH descriptor of the mount's root */
	int unix_units; /* `units unix`: ns and ns since 1970 */
	unsigned int group_count;
};

/* Bytes for a file of a few lines (info, times); a group's idle_cycles
 * (64 lines of at most 26 bytes) fits in the larger one. */
#define LIB_SMALL_FILE 1024
#define LIB_GROUP_FILE 4096

/*
 * lib_read_at - the whole of the file @name below @dirfd, read into @buf
 * (of @size bytes) and NUL-terminated: its length or -errno (-EOVERFLOW
 * when it does not fit).
 */
int lib_read_at(int dirfd, const char *name, char *buf, size_t size);

/*
 * lib_parse_u64 - the decimal at *@p, up to a space or newline: 0 and *@v
 * with *@p past it, or -EIO (no digits, or more than 64 bits).
 */
int lib_parse_u64(const char **p, uint64_t *v);

/* lib_task_path - "proc/PID" or "proc/PID/threads/TID" (TFS_SELF: the
 * caller) and, with @file, "/FILE" after it, into @buf: 0 or -EINVAL. */
int lib_task_path(char *buf, size_t size, pid_t pid, pid_t tid, int thread,
		  const char *file);

/* lib_times_parse - a `times` file's content into @out, converted from
 * the mount's units: 0 or -EIO. */
int lib_times_parse(const struct tfs *tfs, const char *text,
		    struct tfs_times *out);

#endif
