/*
 * records: the table of inode records below proc/, one object per
 * name the kernel holds there.
 *
 * Why. A name under proc/ is one task instance, not one number
 * (interface.md, "Names and identities"): procfs's inode holds its task
 * (get_proc_task) and answers ESRCH once it is gone. A FUSE request
 * carries a node ID and nothing else, so the node ID must name the
 * instance: here it names a record (inode.h: bit 62, the record's index,
 * the kind), and the record holds what the node is: the view it was
 * named in and the numbers that view gave it, the task in the daemon's
 * numbers and its start (creation time, ns), the node ID of the
 * directory its name is in, and how many lookups of it the kernel
 * holds. proc/ of each view is a record of its own (start 0, no task),
 * each process and each thread in each view another; a task's files,
 * its threads/ and threads.table, and proc/'s self and table, are
 * nodes of their directory's record. An extra inode of a file (a
 * snapshot's, snapshot.h) is a record of its own too, with its file's
 * task, so that a restarted server knows what it is (its ID has
 * NODE_EXTRA_BIT set). A reused number is a new record
 * (another start); the old one's requests are the FUSE layer's to
 * refuse.
 *
 * Lifetime. A record is made by the first lookup of its directory
 * (records_name()), counted up by each entry reply of any of its nodes
 * (records_name(), records_hold()) and down by FORGET
 * (records_forget()); at none left it is freed. While it lives, it
 * holds its view's slot (views_hold()): a slot the kernel still holds a
 * name of is never given to another view.
 *
 * Restarts. The records live in memory that outlives the server: the
 * keep's record area (keep_records()), which the supervisor holds and
 * every server maps; a successor finds each record as it was, and
 * rebuilds its indexes from them. A record is written whole before its
 * state says it is live (a release store), and a record's fields change
 * only under the table's lock, by the one process that serves; so a
 * server that dies at any instruction leaves records that are either
 * free or whole. A server that dies between a record's making and the
 * entry reply that would give it to the kernel leaves one record the
 * kernel never learned of, counted once too many; so does a lookup the
 * kernel sends again after a takeover (FUSE_NOTIFY_RESEND) that the
 * dead server had counted. Such a record is never freed: one per
 * restart at most per lookup under way, within RECORDS_MAX.
 *
 * Memory: RECORD_BYTES each in the shared area (touched only as used,
 * lowest first), and an index entry in the process. Where the store has
 * no record area (a store of a server older than the records), the
 * table lives in anonymous memory of this server alone and a successor
 * starts afresh.
 *
 * Thread safety: every function may be called from any thread; one
 * lock guards the table.
 */
#ifndef TIMINGFS_RECORDS_H
#define TIMINGFS_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inode.h"
#include "view.h"

/* A record's bytes in the shared area. */
#define RECORD_BYTES 64

/* The most records a table holds: a lookup past them gets ENOMEM. */
#define RECORDS_MAX (1U << 20)

/* The bytes of a record area of RECORDS_MAX records (keep_create()). */
#define RECORDS_AREA_BYTES ((size_t)RECORDS_MAX * RECORD_BYTES)

/* What a record says of its node's task. */
struct record_task {
	pid_t pid, tid; /* the daemon's numbers; tid 0: the process */
	uint64_t start; /* its creation time, ns; 0: no task (proc/) */
	uint64_t parent; /* the node ID of the directory its name is in */
};

struct records;

/*
 * records_new - the table in @area of @bytes (keep_records()), or, @area
 * NULL, in anonymous memory of this process; the records a dead server
 * left there are taken over, and each holds its view slot in @vs again.
 * 0, or -ENOMEM.
 */
int records_new(struct views *vs, void *area, size_t bytes,
		struct records **out);

/* records_free - release @rs (the shared area stays); NULL allowed. */
void records_free(struct records *rs);

/*
 * records_name - an entry reply gives the kernel one more lookup of
 * directory @n (K_PROC, K_TGID or K_TID: its kind, view and numbers),
 * the task @t (@t->start 0 for proc/) in the directory of node ID
 * @t->parent: the record of that instance, found or made, counts it.
 * Sets n->rec. 0, or -ENOMEM (out of records).
 */
int records_name(struct records *rs, struct node *n,
		 const struct record_task *t);

/*
 * records_hold - one more lookup of node @n of a record it already has
 * (n->rec: a file, threads/, self or table): 0, or -ENOENT when the
 * record is gone (the caller's node came from a request on it, which
 * the kernel's lookups still hold: never, but it answers the reader).
 */
int records_hold(struct records *rs, const struct node *n);

/*
 * records_extra - a new extra inode of file @n (n->rec its directory's
 * record, or 0 outside proc/): its node ID, counted by no lookup until
 * records_hold_id(); 0 when out of records.
 */
uint64_t records_extra(struct records *rs, const struct node *n);

/* records_hold_id - one more lookup of node ID @id: 0, or -ENOENT. */
int records_hold_id(struct records *rs, uint64_t id);

/*
 * records_get - the node of node ID @id (its kind from the ID, the rest
 * from the record; n->rec set: the record's, or, for an extra inode,
 * its file's directory's) and, @t not NULL, the record's task.
 * -ENOENT when @id names no live record or a kind it cannot have.
 */
int records_get(struct records *rs, uint64_t id, struct node *n,
		struct record_task *t);

/*
 * records_forget - the kernel forgets @nlookup lookups of node ID @id:
 * at none left of any node of its record, the record goes and gives
 * its slot's hold back, and its index is the next record's (the
 * lowest free first): true then. An ID that names no live record is
 * ignored (false).
 */
bool records_forget(struct records *rs, uint64_t id, uint64_t nlookup);

/* A name to drop from the kernel's cache: a record's directory. */
struct record_name {
	uint64_t parent; /* the node ID of the directory it is in */
	struct node node; /* the record's directory (rec set) */
};

/*
 * records_of_task - the names of the records of task (@pid, @tid) in
 * the daemon's numbers (@tid 0: the process; a process's main thread
 * is both), in every view, up to @max into @out: their count.
 */
size_t records_of_task(struct records *rs, pid_t pid, pid_t tid,
		       struct record_name *out, size_t max);

/*
 * records_in_slots - the names of up to @max records named in any of
 * the @nslots view slots @slot, into @out: their count.
 */
size_t records_in_slots(struct records *rs, const unsigned int *slot,
			unsigned int nslots, struct record_name *out,
			size_t max);

/*
 * records_gone - the names of up to @max records of tasks that have
 * exited (@gone, asked without the lock, says so of a task in the
 * daemon's numbers), into @out: their count. A sweep looks at up to
 * RECORDS_SWEEP_MAX records, from where the last one stopped.
 */
#define RECORDS_SWEEP_MAX 4096
size_t records_gone(struct records *rs,
		    bool (*gone)(void *ctx, pid_t pid, pid_t tid), void *ctx,
		    struct record_name *out, size_t max);

/* records_count - how many records are live. */
size_t records_count(struct records *rs);

#endif
