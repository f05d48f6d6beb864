/*
 * rewinds: the snapshots that an open file took when read again from
 * offset 0 (docs/design.md, "Rewinds"), by reading thread.
 *
 * An open file's reads are served from the content its open took until
 * they read it from offset 0 to its end without a gap; a read at offset
 * 0 after that takes a new snapshot for the thread that reads (the FUSE
 * layer renders it and keeps it in the keep, keep.h), and that thread's
 * reads at other offsets continue it.
 * So two threads that rewind one descriptor at once each read a whole
 * snapshot of their own; a thread that never rewound continues the
 * open's last one. An open file holds at most REWINDS_PER_OPEN of them:
 * a new thread's rewind replaces the oldest thread's.
 *
 * A struct rewinds is one open file's (opens.h holds it with the open
 * file, from its first rewind on): its threads' snapshots, their
 * handles in the keep and what the caller keeps with each (its memory
 * charged to its reader, or NULL). The caller frees what it gives back
 * (a replaced snapshot, the open file's at rewinds_free()) once no call
 * serves it any more: rewinds_serve() holds the open file's lock while
 * it serves one, so a snapshot taken out is served by nobody once the
 * call that took it returns.
 *
 * Thread safety: every function but rewinds_free() may be called from
 * any thread; each struct rewinds has a lock of its own.
 */
#ifndef TIMINGFS_REWINDS_H
#define TIMINGFS_REWINDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define REWINDS_PER_OPEN 4

/* A snapshot of an open file, taken by a rewind. */
struct rewind {
	pid_t pid; /* the thread that took it */
	uint64_t handle; /* its content in the keep */
	void *owned; /* the caller's, freed with it; may be NULL */
};

struct rewinds;

/* rewinds_new - an open file's rewinds, none yet: 0, or -ENOMEM. */
int rewinds_new(struct rewinds **out);

/*
 * rewinds_free - release @rw, the open file is closed; what it still
 * holds is passed to @drop first. NULL allowed. No other call on @rw
 * may be under way.
 */
void rewinds_free(struct rewinds *rw,
		  void (*drop)(void *ctx, const struct rewind *w), void *ctx);

/*
 * rewinds_put - thread @w->pid took snapshot @w; the one it replaces
 * (the thread's last, or the oldest thread's when the open holds
 * REWINDS_PER_OPEN), if any, into *@old: 1, or 0 when none is replaced.
 */
int rewinds_put(struct rewinds *rw, const struct rewind *w, struct rewind *old);

/*
 * rewinds_serve - for a read by thread @pid at an offset other than 0:
 * @fn(@ctx, handle) with the handle of its last rewind's snapshot, else
 * of the open file's last rewind's, under @rw's lock; 1 when it called
 * @fn, 0 when @rw holds none.
 */
int rewinds_serve(struct rewinds *rw, pid_t pid,
		  void (*fn)(void *ctx, uint64_t handle), void *ctx);

#endif
