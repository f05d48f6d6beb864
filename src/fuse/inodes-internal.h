/*
 * inodes-internal: the table of the inodes the kernel holds (inodes.h),
 * as its two files share it: records.c holds the records, inodes.c the
 * entries of the inodes in use and the table's functions for lookups
 * and opens.
 *
 * Two arrays under one lock. The records: an array of RECORD_BYTES
 * records in the shared area, record 0 its header (its magic, and the
 * highest record ever used, so that a successor reads no further: the
 * pages above were never touched); indexed in the process by a hash of
 * each live record's instance (its directory's number and its start),
 * for lookups, and of its task in the daemon's numbers, for exits; a
 * stack of free records, the lowest on top, and the never used ones
 * above the high-water mark. The entries of the inodes in use: an
 * array of slots with a chain of free ones, and a map of open
 * addressing from a node ID to its slot. A file's own entry (its ID its
 * inode number) holds which inode its last lookup gave (its own, or an
 * extra one), the content waiting for its open, its opens; a
 * directory's entry records when a lookup of one of its files last
 * checked the path, and the owner found. An entry not in use goes at
 * the release that ends its use, at its record's end, or else when the
 * sweep, four slots round the array at each lookup, comes by.
 */
#ifndef TIMINGFS_INODES_INTERNAL_H
#define TIMINGFS_INODES_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hash.h"
#include "inodes.h"
#include "tree.h"

/* ---- the records -------------------------------------------------------- */

enum { RECORD_FREE = 0, RECORD_LIVE = 1 };

/* In the shared area; every field written under the table's lock. */
struct record {
	uint64_t state; /* RECORD_FREE or RECORD_LIVE (stored last) */
	uint64_t node; /* node_ino() of its directory */
	uint64_t parent;
	uint64_t start;
	uint64_t nlookup;
	int32_t pid, tid;
	uint32_t dir; /* an extra inode's: its file's directory's record */
	uint32_t uid; /* who made it (a successor charges it again) */
	uint64_t ns; /* and in which view's namespace */
};

_Static_assert(sizeof(struct record) == RECORD_BYTES, "a record's size");

/* Record 0: the area's header. */
struct records_header {
	uint64_t magic;
	uint64_t high; /* the highest record ever live */
	uint64_t shape; /* tree_shape() of the server that wrote them */
	uint64_t spare[5];
};

_Static_assert(sizeof(struct records_header) == RECORD_BYTES, "a header");

/* A record's place in the process: its indexes, its payer and charge. */
struct rindex {
	struct hash_node by_key, by_task;
	struct payer *payer;
	uint32_t prev, next; /* in its payer's ring, oldest first */
	struct budget_charge charge;
	/* What its directory's files were last told: their owner, as a
	 * lookup's path check found it then, and each file's size + 1
	 * (0: none), by tree_file_slot(). */
	struct owner owner;
	long long checked_ms;
	uint16_t told[TREE_DIR_FILES];
};

/*
 * Whom records are counted against: a uid across views, but root per
 * view (budget.h's readers, as they are keyed); the host's root is
 * counted, never bounded. Freed at its last record.
 */
struct payer {
	struct hash_node node;
	uint64_t ns; /* 0 but for root */
	uid_t uid;
	bool host_root;
	uint32_t records;
	uint32_t oldest; /* its ring's head, 0 when empty */
	long long logged_ms; /* its last refusal logged */
};

/*
 * What a record costs: its bytes in the shared area, its place in the
 * process (its index, its place on the stack of free ones) and what the
 * kernel keeps for its name.
 */
#define RECORD_CHARGE_BYTES                                        \
	(RECORD_BYTES + sizeof(struct rindex) + sizeof(uint32_t) + \
	 RECORD_KERNEL_BYTES)

/* ---- the entries of the inodes in use ----------------------------------- */

#define NO_SLOT UINT32_MAX

/* The entry of an inode in use (its node ID's): a slot of the entries. */
struct inode_use {
	uint64_t id; /* 0: a free slot */
	struct node node;
	struct owner owner; /* as the path's last check found it */
	uint64_t size; /* what the kernel was last told */
	bool told; /* whether it was told anything yet */
	bool grew; /* the last lookup told more than the one before it */
	unsigned int opens;
	struct rbuf *text; /* the last lookup's content, until opened */
	pid_t pid; /* which thread looked it up */
	long long pending_ms; /* and when */
	uint64_t nlookup; /* an extra inode's */
	long long forget_ms; /* an extra's: when its forgetting was asked */
	uint64_t last; /* a node's own: the inode of its last lookup */
	struct budget_charge charge; /* its cost, to the reader that made it */
	uint32_t index; /* its slot's */
	uint32_t next_free;
};

/*
 * Entries are slots of chunks that never move (a pointer to an entry
 * stays good while it lives), ENTRY_CHUNK a chunk, found by node ID
 * through an open-addressed map of slot indices.
 */
#define ENTRY_CHUNK 256

/*
 * What an entry costs: its slot, and two places in the map twice over,
 * as the map grows by doubling.
 */
#define ENTRY_BYTES (sizeof(struct inode_use) + 4 * sizeof(uint32_t))

struct inodes {
	pthread_mutex_t lock;
	/* The records. */
	struct views *vs;
	struct records_header *head;
	struct record *rec; /* rec[0] is the header */
	uint32_t cap; /* records 1 .. cap - 1 */
	void *anon; /* the area, when it is this process's alone */
	size_t anon_bytes;
	struct rindex *ix;
	struct hash_table by_key, by_task;
	struct hash_table payers;
	uint32_t *free; /* a stack, the lowest on top */
	uint32_t nfree;
	size_t nrecords;
	uint32_t cursor; /* where the next sweep of exits starts */
	/* The entries. */
	struct inode_use **chunk; /* nslots / ENTRY_CHUNK chunks */
	uint32_t nslots, free_head, sweep;
	uint32_t *map; /* mapcap slot indices, NO_SLOT where empty */
	uint32_t mapcap;
	size_t nentries;
	void (*free_text)(struct rbuf *text);
};

/* ---- records.c, for inodes.c: every one called locked ------------------- */

/* records_rebuild - take the records a dead server left (inodes_new()). */
void records_rebuild(struct inodes *in);
/* payer_unlink - record @i goes from its payer (inodes_free()). */
void payer_unlink(struct inodes *in, uint32_t i);
/* live_record - record @i if it is live, or NULL. */
struct record *live_record(struct inodes *in, uint32_t i);
/* hold_locked - one more lookup of node ID @id's record: 0, -ENOENT. */
int hold_locked(struct inodes *in, uint64_t id);
/* record_node - record node ID @id's node (inodes_node()). */
int record_node(struct inodes *in, uint64_t id, struct node *n);
/* record_task - the task of record @i (0: none, zeros), in *@t. */
int record_task(struct inodes *in, uint32_t i, struct record_task *t);
/* extra_make - a new extra inode of file @n: its node ID, or 0. */
uint64_t extra_make(struct inodes *in, const struct node *n,
		    const struct record_payer *who);
/* record_forget - @nlookup lookups of record node ID @id forgotten:
 * true when the record went. */
bool record_forget(struct inodes *in, uint64_t id, uint64_t nlookup);

#endif
