/*
 * keep: the contents of the files the kernel has open, in memory that
 * outlives the server that made them.
 *
 * Why. An open file's FUSE handle (fh) names its content, the snapshot
 * made at its open, which every READ of that open file serves. The
 * supervisor holds the /dev/fuse descriptors; when the server that
 * serves them dies, a successor takes over, and the kernel still has
 * files open whose handles the dead server gave. A handle that pointed
 * into the dead server's heap names nothing now. So the contents live
 * in a memfd that the supervisor holds and each server maps: a
 * successor serves the READs of a file opened before the crash with
 * exactly the same bytes.
 *
 * Layout of the memfd, sized once (ftruncate: sparse, a page is used
 * only when touched), in the host's byte order:
 *   a header page: magic, version, the sizes below;
 *   the slot table at KEEP_PAGE: @slots slots of 64 bytes, each a
 *     state word (a sequence number of 31 bits in the high half, the
 *     state in the low one: free, claimed, committed), the inode
 *     number, the caller's node, the content's length, and either the
 *     content itself (KEEP_INLINE bytes or less: a value file needs no
 *     data page) or where its pages are;
 *   the data area at a multiple of KEEP_CHUNK: contents longer than
 *     KEEP_INLINE, each in whole pages of KEEP_PAGE bytes, contiguous;
 *   the record area after it (version 2): bytes that the caller lays
 *     out and writes itself (keep_records()), zero until written.
 * A handle is the slot's sequence number in bits 32 to 62 and the
 * slot's index + 1 in its low 32 bits: nonzero, and never again the
 * name of another content (until a slot has been reused 2^31 times).
 * Bit 63 is always 0: the caller may tag handles of its own with it
 * (KEEP_HANDLE_TAG), which keep_get() refuses.
 *
 * Crash consistency. A process may die at any instruction. A slot is
 * claimed before its content is written, and its state word is stored
 * again (a release) once it is written; it is committed when the kernel
 * has (or is about to have) the handle; a drop frees it before its data
 * is freed. Where the free slots and pages are is kept in the process
 * alone: keep_map() rebuilds it from the slot table, so whatever the
 * dead process was doing, the successor has every committed content as
 * it was committed and loses only what was claimed and not committed.
 * A committed content's bytes are never written again until it is
 * dropped.
 *
 * Memory. A data page is allocated lowest first; when a drop leaves an
 * aligned chunk of KEEP_CHUNK bytes of the data area wholly free, the
 * chunk's pages are given back to the system (MADV_REMOVE), but for
 * the first KEEP_WARM_BYTES of the area, which the next small contents
 * take again without a page fault. So the memfd holds what is open
 * now, that warm area, and the slot table's pages up to the most slots
 * ever used at once; keep_map() gives back the free chunks a dead
 * server left.
 *
 * Writers. Only one process writes a store at a time: the supervisor
 * only holds the descriptor, and a successor maps it once the previous
 * server is dead. Two processes that map one store and write it at once
 * corrupt each other's free space.
 *
 * Thread safety: every function may be called from any thread of the
 * process that mapped the store. keep_put() and keep_drop() take a lock
 * of the process while they find or free space (never while copying a
 * content or giving memory back); keep_get(), keep_commit() and
 * keep_each() take none.
 */
#ifndef TIMINGFS_KEEP_H
#define TIMINGFS_KEEP_H

#include <stddef.h>
#include <stdint.h>

/* A data page; the slot table's page. */
#define KEEP_PAGE 4096
/* The content that a slot holds itself, bytes. */
#define KEEP_INLINE 32
/* A free chunk of the data area this large (and aligned) is given back. */
#define KEEP_CHUNK (64 * 1024)
/*
 * The start of the data area that is never given back at a drop: the
 * small contents that come and go there never fault a page in. A chunk
 * given back costs a TLB flush, and its next use page faults: a 300 KiB
 * content's put+commit+get+drop takes 11 us where its pages stay, 130
 * us where they go (a 2-CPU VM that shadows page tables).
 */
#define KEEP_WARM_BYTES (256 * 1024)
/* The bit that no handle of a store has set (above). */
#define KEEP_HANDLE_TAG (1ULL << 63)
/* The most slots a store has: a handle's low 32 bits hold index + 1. */
#define KEEP_SLOTS_MAX 0xfffffffeU

/* One process's mapping of a store. */
struct keep;

/*
 * keep_create - a new, empty store in a memfd, able to hold @slots
 * contents (1 to KEEP_SLOTS_MAX) and @data_bytes of contents longer
 * than KEEP_INLINE in all (rounded up to whole KEEP_CHUNKs; a content
 * takes whole pages), with a record area of @records_bytes (rounded up
 * likewise; 0: none): the header is written, the rest is a hole. The
 * descriptor has FD_CLOEXEC set (the caller clears it to pass it
 * through exec), and its size is sealed. Returns the descriptor, or
 * -EINVAL (@slots out of range, or a size that overflows), or -errno
 * of memfd_create(2), ftruncate(2), pwrite(2), fcntl(2).
 */
int keep_create(unsigned int slots, size_t data_bytes, size_t records_bytes);

/*
 * keep_map - map the store in @fd for this process into *@out, and
 * rebuild its free space from the slot table: every committed content
 * is in use, served until keep_drop(); every slot claimed and not
 * committed (its server died between keep_put() and keep_commit()) is
 * freed, as is a committed slot whose pages are not within the data
 * area or overlap another's (which no server writes). The caller keeps
 * @fd (the supervisor's); the mapping does not need it afterwards. The
 * store's previous writer must be dead (above). 0; -EINVAL when @fd
 * holds no store (magic, version or sizes wrong); -ENOMEM; -errno of
 * fstat(2), pread(2), mmap(2).
 */
int keep_map(int fd, struct keep **out);

/*
 * keep_records - the record area of @k's store, its size in *@bytes:
 * memory of the caller's, shared by every process that maps the store
 * and kept with it, zero where never written; NULL and 0 for a store
 * made without one (or by a server of version 1, before there was one).
 * The keep never reads or writes it; its layout, its locking and its
 * crash consistency are the caller's.
 */
void *keep_records(const struct keep *k, size_t *bytes);

/*
 * keep_unmap - unmap @k and free this process's part of it; NULL is
 * allowed. The contents stay in the memfd, for the next keep_map().
 * No other call on @k may be under way, and no pointer that
 * keep_get() gave is valid afterwards.
 */
void keep_unmap(struct keep *k);

/*
 * keep_put - copy the @len bytes at @data (the content of a file being
 * opened; @len may be 0, @data then NULL) into the store, with two
 * numbers the caller wants back, which the keep never reads: for an
 * open (opens.h), @ino the inode number the kernel opens and @node its
 * node ID, what the caller needs to rebuild its attributes; for a
 * rewind's snapshot, @ino its thread's pid and the rewind's number
 * (opens.c, rewind_ino()) and @node the handle of the open it rewinds,
 * tagged KEEP_HANDLE_TAG.
 * The content is in a slot claimed and not yet committed (keep_commit()),
 * which *@handle names; this process's keep_get() serves it at once.
 * 0; -ENOSPC when no slot is free or no run of pages long enough is;
 * -ENOMEM when the system has no memory for a content's pages, as far
 * as the kernel says so before they are touched (Linux 5.14 and later;
 * else, or in the warm start, a fault meets the OOM killer as any
 * memory's does). The caller tells its reader ENOMEM either way.
 */
int keep_put(struct keep *k, uint64_t ino, uint64_t node, const void *data,
	     size_t len, uint64_t *handle);

/*
 * keep_commit - @handle (from keep_put()) was given to the kernel, or is
 * about to be: from now on a successor keeps it. Call it before the
 * reply that gives the handle; a server that dies after it and before
 * the reply leaves a content that only keep_each() names. A handle
 * that names no claimed content is ignored.
 */
void keep_commit(struct keep *k, uint64_t handle);

/*
 * keep_get - the content that @handle names: 0 with its bytes in
 * *@data and their count in *@len, and the numbers given to keep_put()
 * in *@ino and *@node (each of the four may be NULL); the bytes stay
 * valid and unchanged until keep_drop(@handle), in this process or a
 * successor. -ENOENT when @handle names no content in use, committed
 * or claimed by this process (never given, dropped, or any other
 * number: every 64-bit value is safe, as it comes from the kernel).
 * Takes no lock and writes nothing: the path of every READ.
 */
int keep_get(const struct keep *k, uint64_t handle, const char **data,
	     size_t *len, uint64_t *ino, uint64_t *node);

/*
 * keep_drop - the content of @handle is no longer needed (a RELEASE, or
 * an open whose reply failed): its slot and pages are free, and the
 * chunks of the data area it leaves wholly free are given back to the
 * system (above). A handle that names no content in use is ignored.
 * Calls of keep_get() for @handle must be over.
 */
void keep_drop(struct keep *k, uint64_t handle);

/*
 * keep_each - call @fn(@arg, handle, ino, node) for every committed
 * content, with the numbers given to keep_put() (a successor learns
 * which inodes the kernel has open, and which snapshots rewinds took), in
 * slot order, without a lock: @fn may call any keep function, and a
 * content put or dropped meanwhile by another thread may be left out.
 */
void keep_each(const struct keep *k,
	       void (*fn)(void *arg, uint64_t handle, uint64_t ino,
			  uint64_t node),
	       void *arg);

/*
 * keep_cost - the bytes of a store that a content of @len bytes takes:
 * its slot, and its whole data pages when longer than KEEP_INLINE.
 */
size_t keep_cost(size_t len);

#endif
