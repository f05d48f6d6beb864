/*
 * handles: the table of libtimingfs's HANDLEs. A handle is a slot of a
 * fixed table holding a task's directory descriptor and a generation,
 * spelled into the handle's value, so that a handle closed, never made
 * or forged names no slot and is refused, rather than reading whatever
 * descriptor now has its number. A handle in use by one thread may be
 * closed by another: the descriptor is closed when the last use ends.
 * Every function is thread-safe (one mutex, held for a few instructions).
 */
#ifndef TIMINGFS_LIB_HANDLES_H
#define TIMINGFS_LIB_HANDLES_H

enum handle_kind {
	HANDLE_PROCESS = 1,
	HANDLE_THREAD = 2,
};

/* handle_new - a handle of @kind owning @fd: 0 and *@h, or -EMFILE when
 * the table is full (@fd then stays the caller's). */
int handle_new(int fd, enum handle_kind kind, void **h);

/* handle_get - the descriptor of @h, a handle of @kind, held for use
 * until handle_put(): 0 and *@fd, or -EBADF. */
int handle_get(void *h, enum handle_kind kind, int *fd);

/* handle_put - the end of a use that handle_get() began. */
void handle_put(void *h);

/* handle_close - @h closed (of any kind): 0, or -EBADF. */
int handle_close(void *h);

#endif
