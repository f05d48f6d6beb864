/*
 * fs: the FUSE layer, mapping the mounted tree to engine calls and
 * rendering their results.
 *
 * It uses libfuse's low-level API. Every node of the tree is named by
 * its inode number alone: the kind of node (an index into one
 * declarative table) and the numbers met on its path (group and
 * processor, or pid and tid) are packed into the 64 bits, so the layer
 * keeps no table of nodes and no path strings, a getattr or open needs
 * no path walk, an open file's inode answers fstat() after its task
 * exited, and each entry gets its own cache timeout.
 *
 * It never opens /proc or /sys itself: every value, every task and
 * every processor comes from the engine.
 */
#ifndef TIMINGFS_FS_H
#define TIMINGFS_FS_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "engine.h"

/*
 * Entry and attribute timeout, s: lookups are cached this long, so a
 * task that exits disappears from the tree within it. The entries of
 * proc/self and groups/current are not cached, nor are negative
 * lookups (a new process is there at once).
 */
#define FS_TIMEOUT_S 1.0

/*
 * fs_operations - the operations of a timingfs mount. Pass the engine
 * as fuse_session_new()'s userdata; it must outlive the session. Every
 * handler is safe to call from several threads at once. Files are
 * opened with direct_io.
 */
const struct fuse_lowlevel_ops *fs_operations(void);

#endif
