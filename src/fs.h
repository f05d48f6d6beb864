/*
 * fs: the FUSE layer, mapping the paths of the mounted tree to engine
 * calls and rendering their results.
 *
 * It never opens /proc or /sys itself: every value, every task and
 * every processor comes from the engine.
 */
#ifndef TIMINGFS_FS_H
#define TIMINGFS_FS_H

#define FUSE_USE_VERSION 312
#include <fuse.h>

#include "engine.h"

/* Entry and attribute timeout, s: a vanished task disappears within it. */
#define FS_TIMEOUT_S 1.0

/*
 * fs_operations - the operations of a timingfs mount. Pass the engine
 * as fuse_new()'s user_data; it must outlive the mount. Every handler
 * is safe to call from several threads at once.
 */
const struct fuse_operations *fs_operations(void);

#endif
