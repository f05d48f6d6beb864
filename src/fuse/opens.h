/*
 * opens: the files and directories a mount has open, one struct
 * open_file each, found by the handle the kernel was given (fi->fh).
 *
 * An open file holds its content (a file's text, a directory's listing)
 * in the keep (keep.h) under that handle, where a successor of this
 * server finds it; the charge of all the daemon holds for it, to its
 * reader (budget.h); the inode it holds open (inodes_open()); and its
 * reads' state: how far they read, and its threads' rewinds
 * (rewinds.h), each snapshot an open_file of its own that no handle
 * names. opens_add() makes it whole or not at all; opens_close()
 * undoes all of it. A new member of an open file's state is a line
 * of struct open_file, set by opens_add() and undone by opens_close().
 *
 * A content not yet opened (a lookup's, which inodes.h holds as its
 * struct rbuf) is an open_file too, its handle 0: open_file_new()
 * makes it empty, open_file_free() frees one that was never kept.
 *
 * Restarts. The keep holds each content with its inode and node (a
 * rewind's: its open's handle, its thread, its number), and the area
 * given to opens_new() who it is charged to: opens_new() adopts what a
 * dead server had open, as it was (docs/design.md, "Open files").
 *
 * Locking. An open file is found by its handle without a lock, and
 * freed by its opens_close() alone: the kernel sends no READ of a
 * handle after its RELEASE. Its rewinds have a lock of their own.
 * Every function may be called from any thread, but opens_new() and
 * opens_free(), while no other call is under way.
 */
#ifndef TIMINGFS_OPENS_H
#define TIMINGFS_OPENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "hash.h"
#include "render.h"

/* What the area given to opens_new() holds of each of @slots contents. */
#define OPENS_AREA_BYTES(slots) (16 * (size_t)(slots))

struct open_file {
	struct rbuf text; /* its content until kept (inodes.h holds it) */
	struct budget_charge charge; /* all the daemon holds for it */
	uint64_t fh; /* its content's handle in the keep; 0: not kept */
	uint64_t ino; /* the inode it holds open; 0: none (a directory) */
	/* Atomic: how far its reads went from offset 0 on without a gap
	 * since its open or its last rewind; UINT64_MAX at its end. */
	uint64_t read_to;
	struct rewinds *rewinds; /* atomic: from its first rewind on */
};

struct inodes;
struct keep;
struct opens;

/* open_file_of - the content whose text is @text. */
static inline struct open_file *open_file_of(struct rbuf *text)
{
	return container_of(text, struct open_file, text);
}

/* open_file_new - an empty content, charged to nobody; NULL: no memory. */
struct open_file *open_file_new(void);

/* open_file_free - free @of, never kept: its text, its charge. NULL
 * allowed. */
void open_file_free(struct open_file *of);

/*
 * opens_new - the open files of a mount whose contents are in @k, of
 * @slots slots, with the inodes @ins, who each content is charged to
 * in @area (OPENS_AREA_BYTES(@slots), shared with successors; NULL:
 * none, a successor charges nobody). What a dead server had open in
 * @k is adopted: served as it was, its inodes held open, charged to
 * its readers again. 0, or -ENOMEM.
 */
int opens_new(struct keep *k, unsigned int slots, struct inodes *ins,
	      void *area, struct opens **out);

/*
 * opens_free - free @o and every open file in it; their contents stay
 * in the keep, for a successor. NULL allowed.
 */
void opens_free(struct opens *o);

/*
 * opens_add - @of is open: as file inode @ino of node ID @node (held
 * open by the caller's inodes_open()), or, @ino 0, a directory. Its
 * text is kept and emptied, and its handle is *@fh. Takes @of and the
 * inode's open either way: 0, or -ENOMEM (the keep is full) with both
 * undone.
 */
int opens_add(struct opens *o, struct open_file *of, uint64_t ino,
	      uint64_t node, uint64_t *fh);

/*
 * opens_close - the open file of @fh is closed (a RELEASE, or an open
 * whose reply failed): its content and its rewinds leave the keep, its
 * inode is released, its charge given back. Any handle is allowed.
 */
void opens_close(struct opens *o, uint64_t fh);

/*
 * opens_is_rewind - whether a read at offset 0 of @fh takes a new
 * snapshot (rewinds.h): once it was read from offset 0 to its end
 * without a gap, which this answer resets; always for an open that
 * this server could not adopt.
 */
bool opens_is_rewind(struct opens *o, uint64_t fh);

/* opens_rewind_again - @fh's next read at offset 0 is a rewind again
 * (this one was refused). */
void opens_rewind_again(struct opens *o, uint64_t fh);

/*
 * opens_rewind - thread @pid of open @fh took @snap, a content charged
 * to its reader: kept, and served to that thread's reads from now on
 * (the one it replaces goes). Takes @snap either way: 0, or -ENOMEM.
 */
int opens_rewind(struct opens *o, uint64_t fh, pid_t pid,
		 struct open_file *snap);

/*
 * opens_read - serve a read by thread @pid of @fh of @size bytes at
 * @off: @reply(@ctx, data, len) with the snapshot it reads (its
 * thread's last rewind's, else the open's last one's, else its open's
 * content), under the lock of its rewinds. 0, or -EIO when @fh names
 * no content (@reply not called).
 */
int opens_read(struct opens *o, uint64_t fh, pid_t pid, off_t off, size_t size,
	       void (*reply)(void *ctx, const char *data, size_t len),
	       void *ctx);

#endif
