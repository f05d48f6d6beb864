/*
 * fs: the FUSE layer: the operations of a timingfs mount, on libfuse's
 * low-level API.
 *
 * Every operation is served from the node its inode number names
 * (node.h) by the tree (tree.h), for a request that says who asks:
 * the reader's thread, its ids and, for nodes below proc/, its view
 * (view.h). It never opens /proc or /sys itself.
 *
 * The kernel caches names and attributes per mount, for every reader at
 * once. Below proc/ every inode number holds the view it was named in,
 * so the names of two views never meet in those caches, as long as the
 * kernel asks which proc/ a reader's path walk enters: the entry of
 * proc/ itself is then looked up afresh at every walk (entry timeout
 * 0). That lookup is a round trip to the daemon, a fifth of the cost
 * of reading a file. So while only readers of the daemon's own view
 * have come for VIEW_SHARED_S seconds (and hidepid is not invisible,
 * which gives every owner a view), proc/ is kept for the shortest time
 * the kernel keeps anything, one clock tick: the own view's walks then
 * pay one lookup a tick, not one each; the first request from another
 * view makes every walk ask, and drops proc/ from the kernel's cache at
 * once. Whatever the kernel cached, every answer the daemon gives is in
 * the view of the reader who asks. What the kernel answers alone, a
 * stat of a name cached for the own view, reaches a reader of another
 * view only if its walk comes within that tick of the own view's last
 * one and before any request of its own.
 */
#ifndef TIMINGFS_FS_H
#define TIMINGFS_FS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "engine.h"
#include "exited.h"
#include "listener.h"
#include "access.h"
#include "view.h"

/*
 * Entry and attribute timeout, s: lookups are cached this long. A
 * task's directory is kept this long only where the exit listener
 * tells the daemon when the task exits (fs_set_exited()), which then
 * has the kernel drop its names; else, and for a task kept since it
 * exited, its name is not cached (a live task that takes its number
 * is found at the next walk). The entries of proc/self and
 * groups/current are not cached, nor are negative lookups (a new
 * process is there at once).
 */
#define FS_TIMEOUT_S 1.0

/*
 * The entry timeout of proc/ while only the daemon's own view reads:
 * the kernel rounds any timeout up to a whole clock tick (1 to 10 ms),
 * and keeps the entry for that tick.
 */
#define FS_PROC_TIMEOUT_S 1e-9

struct fs;
struct fs_dropper;

/*
 * fs_dropper_new - the thread, shared by every mount of the daemon,
 * that tells the kernel to forget names (started at its first use,
 * from a request). fs_dropper_free() stops it, after every mount's
 * fs_free(). 0 or -ENOMEM.
 */
int fs_dropper_new(struct fs_dropper **out);
void fs_dropper_free(struct fs_dropper *d);

/*
 * fs_new - the state of a mount serving @engine with @views and the
 * access rules @access, its names dropped by @dropper; all must outlive
 * it. Pass it as fuse_session_new()'s userdata, and fs_set_session()
 * the session before serving. 0 or -ENOMEM.
 */
int fs_new(struct engine *engine, struct views *views,
	   const struct access_policy *access, struct fs_dropper *dropper,
	   struct fs **out);

/* fs_set_session - the session that serves @fs, for notifications. */
void fs_set_session(struct fs *fs, struct fuse_session *se);

/*
 * fs_set_exited - serve the exited tasks kept in @x, which @l files,
 * and have the kernel drop the names of every task @l says exited
 * (listener_watch(), until the session's destroy, fs_free() or
 * another fs_set_exited(): NULLs stop it, before @l stops). Call it
 * before serving; both outlive @fs, or its watch of @l.
 */
void fs_set_exited(struct fs *fs, struct exited *x, struct listener *l);

/*
 * The keep of a mount (keep.h): FS_KEEP_SLOTS contents open at once
 * at most, as the budgets bound their bytes.
 */
#define FS_KEEP_SLOTS (1U << 20)

/*
 * fs_keep_create - a new keep for a mount, for @data_bytes of contents
 * (the budget of every reader's snapshots, and the host root's, which
 * the total does not bound), and a record area for the inode records
 * and who each content is charged to: its memfd, which the supervisor
 * holds for the mount's life, or -errno.
 */
int fs_keep_create(size_t data_bytes);

/*
 * fs_set_keep - serve every open's content from the keep in @fd, which
 * the caller holds, and keep the inode records in its record area
 * (inodes.h): before the session serves. What a dead server had open
 * there stays open, served as it was (a rewound open's snapshots too),
 * and its inodes are never handed out to another lookup; every record
 * it made, extra inodes' included, is found again. 0 or -errno.
 */
int fs_set_keep(struct fs *fs, int fd);

/*
 * fs_set_view_record - keep which view each slot of the mount's views
 * was given in @record, memory that outlives the server (view.h): a
 * successor's readers never get a slot a dead server gave another
 * view. Before the session serves.
 */
void fs_set_view_record(struct fs *fs, struct view_record *record);

/* fs_free - release @fs after its session is destroyed; NULL allowed. */
void fs_free(struct fs *fs);

/*
 * fs_operations - the operations of a timingfs mount. Every handler is
 * safe to call from several threads at once. An open serves the content
 * its lookup made, and one that came without a lookup (inodes.h)
 * content made afresh, both with direct_io: read(2) comes to the daemon
 * (a read at offset 0 after the first takes a new snapshot, rewinds.h),
 * page-cache readers (sendfile, splice, mmap) read the open's content
 * through the inode's page cache, up to the size the lookup told.
 * Below proc/ a node ID names a record (inodes.h): requests on a name
 * whose task is gone, or whose number another task took, are ENOENT.
 */
const struct fuse_lowlevel_ops *fs_operations(void);

#endif
