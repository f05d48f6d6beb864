/*
 * snapshot: the kernel's inodes of timingfs's files, each one snapshot
 * of a file's content, made when a path walk looks the file up.
 *
 * Why. Since Linux 6.5 the kernel serves sendfile(2), splice(2) and
 * copy_file_range(2)'s fallback of a FUSE file through its page cache,
 * up to the inode's size, direct_io or not; so does mmap(2). Those
 * readers (busybox cat and cp, Python's shutil.copyfile, splicing cats)
 * get exactly what the page cache holds up to i_size: nothing at size
 * 0, a truncated value at a size too small, and pages of two snapshots
 * mixed when two opens of one inode share its page cache. The page
 * cache and the size belong to the inode, not to the open file: so
 * each snapshot gets an inode of its own, of its exact size.
 *
 * How. A LOOKUP of a file renders its content then and there, and
 * answers with an inode whose attributes carry the content's exact
 * length. The entry timeout of a file is 0, so the kernel looks the
 * name up again at every path walk. The answer is the same inode, its
 * content made anew, while no open file holds it and no other thread's
 * lookup of it waits for its open; otherwise a new inode, never given
 * before, which the kernel puts in place of the old in its dentry. The
 * OPEN that follows on the same thread takes the content made at its
 * lookup as the open file's snapshot; the open drops whatever pages an
 * earlier snapshot left in the inode's cache, and, as no other open
 * holds the inode, its page cache holds this snapshot alone: read(2),
 * pread, sendfile, splice and mmap all see the same bytes, the size is
 * exact (stat, ls -l, du, find -size, tail -c agree with cat), and two
 * readers of one path never share a page cache. A walk costs one
 * LOOKUP more than a cached dentry does, and the content's end is known
 * to the kernel, which saves the READ at the end of the file.
 *
 * A second open of an inode after one lookup, which comes only without
 * a path walk (a file bind-mounted on its own, /proc/self/fd/N opened
 * again, an O_PATH descriptor passed on), renders the content afresh:
 * the FUSE layer serves it with direct_io, for read(2) the kernel's
 * size does not matter, and grows the inode's size first when the
 * content is now longer (a notification that touches no page), so that
 * a page-cache reader meets the end of the content in a short read,
 * which shrinks the size to it.
 *
 * Node IDs of snapshots have bit 63 set, which no node of inode.h's
 * encoding (62 bits) has; below it, a slot of this table and the
 * slot's generation. The attributes keep the node's own inode number
 * (st_ino), the same at every lookup, as readdir gives it.
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef TIMINGFS_SNAPSHOT_H
#define TIMINGFS_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "inode.h"
#include "render.h"

#define SNAPSHOT_INO_BIT (1ULL << 63)

/*
 * A lookup's content waits this long for its thread's open, which comes
 * within the same system call; a lookup never opened (a stat) holds its
 * inode no longer.
 */
#define SNAPSHOT_PENDING_S 1

/*
 * A lookup that checked a file's path (every numbered directory on it
 * exists for the reader) vouches for it this long, as the kernel's
 * dentry of a file did when it was cached for FS_TIMEOUT_S: a lookup
 * in between only renders, which itself fails when the task is gone.
 */
#define SNAPSHOT_CHECKED_MS 1000

struct snapshots;

/* snapshot_ino - whether node ID @ino names a snapshot. */
static inline bool snapshot_ino(uint64_t ino)
{
	return (ino & SNAPSHOT_INO_BIT) != 0;
}

/* snapshots_new - an empty table: 0, or -ENOMEM. */
int snapshots_new(struct snapshots **out);

/* snapshots_free - release @s and every snapshot in it; NULL allowed. */
void snapshots_free(struct snapshots *s);

/*
 * snapshots_checked - whether a lookup of the node of inode number
 * @node_ino checked its path less than SNAPSHOT_CHECKED_MS ago; if so,
 * its attributes as then, in *@st.
 */
bool snapshots_checked(struct snapshots *s, uint64_t node_ino, struct stat *st);

/*
 * snapshots_add - a lookup of node @n made @text, which it takes on
 * success (the caller keeps it on failure), for thread @pid, whose open
 * takes it; @st are its attributes (st_ino the node's inode number,
 * st_size set to the length of @text), @checked whether this lookup
 * checked its path. Sets *@ino: the inode of @n's last lookup when no open holds
 * it and no other thread's lookup waits for its open (pending less
 * than SNAPSHOT_PENDING_S seconds), else a new one; looked up once
 * more either way. 0, or -ENOMEM.
 */
int snapshots_add(struct snapshots *s, const struct node *n,
		  const struct stat *st, pid_t pid, struct rbuf *text,
		  bool checked, uint64_t *ino);

/*
 * snapshots_get - the node and attributes of snapshot @ino, st_size
 * the size the kernel was last given. -ENOENT when @ino names none.
 */
int snapshots_get(struct snapshots *s, uint64_t ino, struct node *n,
		  struct stat *st);

/*
 * snapshots_open - an open of snapshot @ino by thread @pid, to be
 * snapshots_release()d. The first open after a lookup, by the thread
 * that looked it up, takes the content made then: *@text, now the
 * caller's, and 0. Any other open gets *@text NULL and 1: the caller
 * renders the content afresh (and snapshots_resize()s). -ENOENT when
 * @ino names none.
 */
int snapshots_open(struct snapshots *s, uint64_t ino, pid_t pid,
		   struct rbuf **text);

/* snapshots_release - an open of @ino is closed. */
void snapshots_release(struct snapshots *s, uint64_t ino);

/*
 * snapshots_resize - snapshot @ino's content is now @size bytes long:
 * whether that is more than the kernel was last told (then the caller
 * grows the inode's size). The size recorded is @size either way.
 */
bool snapshots_resize(struct snapshots *s, uint64_t ino, uint64_t size);

/*
 * snapshots_forget - the kernel forgets @nlookup lookups of @ino; at
 * none left, the snapshot goes. Unknown IDs are ignored.
 */
void snapshots_forget(struct snapshots *s, uint64_t ino, uint64_t nlookup);

/* snapshots_count - how many snapshots the kernel holds now. */
size_t snapshots_count(struct snapshots *s);

#endif
