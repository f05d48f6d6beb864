/*
 * budget: how much memory each reader may make the daemon hold, and all
 * of them together.
 *
 * A reader is one uid, in whatever views it reads (a user's own PID
 * namespaces, unshare -Urp, never multiply its budget); uid 0 is a
 * reader per view (its PID namespace, view.h), the root of each
 * container a tenant of its own. The snapshots of files it has open or
 * has just looked up, the listings of directories it has open, and the
 * records of the inodes it made (inodes.h) are charged to it, at what
 * they take (the keep's slot and pages too: keep_cost()), until they
 * are freed. A charge that
 * would take a reader past its budget (reader_snapshots), or all
 * readers together past theirs (total_snapshots), is refused: the
 * caller answers ENOMEM, as procfs does when it cannot allocate. The
 * host's root (uid 0 in the daemon's own PID namespace) is held to its
 * own budget only, not the total, so that tenants who fill the total
 * never lock the administrator out: the daemon then holds at most
 * total_snapshots plus one reader's budget.
 *
 * Cost. The readers are records in a small hash table under one lock,
 * looked up once per lookup, open or opendir (a reader holds a
 * reference while it has anything charged); a charge and its release
 * are atomic additions on the reader and on the total. Nothing happens
 * at a read.
 *
 * Fairness. A reader refused a snapshot of some size remembers which
 * node it was and how large (BUDGET_REFUSED nodes): the next lookup of
 * that node is refused before it is rendered while the snapshot still
 * would not fit, so that a reader at its budget that asks again and
 * again costs the daemon a table lookup each time, not a table's
 * rendering.
 *
 * The budget is the process's: every mount of one daemon shares it.
 * Refusals are logged, at most one line per reader per BUDGET_LOG_S.
 *
 * Thread safety: every function may be called from any thread.
 */
#ifndef TIMINGFS_BUDGET_H
#define TIMINGFS_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Defaults and bounds of the budgets, in MiB ([limits] in the config). */
#define BUDGET_READER_MIB_DEFAULT 32
#define BUDGET_TOTAL_MIB_DEFAULT 128
#define BUDGET_MIB_MAX 65536 /* 64 GiB */

/* How many refused nodes a reader remembers. */
#define BUDGET_REFUSED 4

/* At most one log line per reader in this many seconds. */
#define BUDGET_LOG_S 10

struct budget_reader;

/* A charge: what it holds against whom; all zero when none. */
struct budget_charge {
	struct budget_reader *reader;
	size_t bytes;
};

/*
 * budget_set_limits - the budgets from now on, in bytes: of one reader,
 * and of all readers together (both at least 1). Charges already made
 * stay. Until called: the defaults above.
 */
void budget_set_limits(size_t reader_bytes, size_t total_bytes);

/* The namespace of a reader of what every view shows alike (req.c). */
#define BUDGET_NS_ANY UINT64_MAX

/*
 * budget_reader_get - the reader that uid @uid in the PID namespace of
 * nsfs inode @ns (0: a reader the daemon cannot place; BUDGET_NS_ANY:
 * the uid in any namespace, for files outside proc/; ignored but for
 * uid 0) is, referenced;
 * @host_root: it is the host's root, held to its own budget only. NULL
 * when out of memory. Release with budget_reader_put().
 */
struct budget_reader *budget_reader_get(uint64_t ns, uid_t uid, bool host_root);

/* budget_reader_put - release a reference of budget_reader_get(); NULL
 * allowed. */
void budget_reader_put(struct budget_reader *r);

/*
 * budget_admit - before @r is given a snapshot of node @id (an inode
 * number): 0 when it may be rendered, -ENOMEM when @r is at its budget,
 * or was refused @id's snapshot and that size still would not fit
 * (then the refusal is logged, rate-limited). Two atomic loads and a
 * look at @r's few remembered refusals.
 */
int budget_admit(struct budget_reader *r, uint64_t id);

/*
 * budget_charge - charge @bytes, held for node @id (0: none to be
 * remembered), to @r in *@c (which
 * then holds a reference of @r until budget_uncharge()). 0; or -ENOMEM
 * when that would take @r past its budget, or (unless @r is the host's
 * root) every reader past the total: nothing is charged, *@c is left
 * empty, @id and @bytes are remembered for budget_admit(), and the
 * refusal is logged, rate-limited. @r NULL: nothing charged, 0.
 */
int budget_charge(struct budget_reader *r, uint64_t id, size_t bytes,
		  struct budget_charge *c);

/*
 * budget_charge_held - charge @bytes to @r in *@c whatever its budget
 * says: memory that is held already (what a dead server's readers kept
 * open, which a successor takes over), so that what they hold next is
 * judged by all they hold. @r NULL: nothing charged.
 */
void budget_charge_held(struct budget_reader *r, size_t bytes,
			struct budget_charge *c);

/*
 * budget_reader_id - who @r is: what budget_reader_get() was given for
 * it (@ns BUDGET_NS_ANY for a uid other than 0), for a successor to
 * find it again.
 */
void budget_reader_id(const struct budget_reader *r, uint64_t *ns, uid_t *uid,
		      bool *host_root);

/* budget_uncharge - give back what *@c holds, and empty it; an empty
 * charge is allowed. */
void budget_uncharge(struct budget_charge *c);

/*
 * budget_block_bytes - what the heap block at @p (from malloc()) costs
 * a charge: its usable size and malloc's header; 0 for NULL.
 */
size_t budget_block_bytes(void *p);

#endif
