/*
 * view_int: what view.c (the table of views) and view_ns.c (the
 * translation of numbers) share, and no other file includes: the
 * tables' state, and the steps one of them takes for the other.
 *
 * Locking: a views' slots under vs->lock, its chains under
 * vs->chains_lock, the namespaces a pass met under vs->seen_lock; a
 * view's map under its own lock (and its scan_lock for a pass).
 */
#ifndef TIMINGFS_VIEW_INT_H
#define TIMINGFS_VIEW_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include <linux/nsfs.h>

#include "nspid.h"
#include "view.h"

/* Linux 6.10's nsfs ioctls, for headers that predate them. */
#ifndef NS_GET_PID_FROM_PIDNS
#define NS_GET_PID_FROM_PIDNS _IOR(NSIO, 0x6, int)
#endif
#ifndef NS_GET_PID_IN_PIDNS
#define NS_GET_PID_IN_PIDNS _IOR(NSIO, 0x8, int)
#endif

enum translate { TRANSLATE_NONE, TRANSLATE_IOCTL, TRANSLATE_NSPID };

/* A namespace and its ancestors up to the daemon's: up[depth] is it. */
struct ns_chain {
	ino_t ns;
	unsigned int depth;
	ino_t up[NSPID_LEVELS_MAX];
	/*
	 * In the table: the namespace, held open. A namespace's inode
	 * number is given to a new one once it is gone; held, it is not
	 * gone, and the number names no other namespace while its chain
	 * is kept (a container's namespace nested in another took the
	 * number of one that had just ended, and its processes were
	 * taken for the ended one's, outside the view they were in).
	 */
	int fd;
	long long used_s; /* when last met: unused VIEW_CHAIN_IDLE_S, closed */
};

/* A chain unused this long is closed (views_reap()): the daemon holds
 * no namespace long after the last pass that met it. */
#define VIEW_CHAIN_IDLE_S 10

/* A uid refused a slot is logged once in this many seconds at most. */
#define VIEW_LOG_S 60
/* How many uids' last refusals are remembered for that. */
#define VIEW_LOGGED 64

/* How many views whose keeper is gone a reap looks for process 1 of by
 * a pass over /proc (the nspid way). */
#define VIEW_REAP_SCANS 4

/* The chains of the namespaces met, replaced round the table. */
#define NS_CHAINS 64

/* A number of a view's, the daemon's, and the inode of /proc/PID. */
struct map_entry {
	pid_t nr; /* 0: an empty slot */
	pid_t pid;
	ino_t proc_ino;
};

/* How many numbers a view remembers that a pass did not find. */
#define VIEW_ABSENT 16

/* A view's map of its numbers to the daemon's, open addressing. */
struct view_map {
	pthread_mutex_t lock;
	struct map_entry *e; /* cap of them */
	unsigned int cap, count;
	pthread_mutex_t scan_lock; /* one pass over /proc at a time */
	long long scanned_ns; /* when the last pass began; 0: none yet */
	/* Numbers asked and not found by a pass, and when it began (under
	 * lock): asked again within VIEW_SCAN_MS, they are absent at once. */
	struct absent {
		pid_t nr;
		long long as_of_ns;
	} absent[VIEW_ABSENT];
	unsigned int absent_next;
};

/* Above any pid: the kernel's PID_MAX_LIMIT. */
#define PID_LIMIT (1ULL << 22)

/* A map forgets everything past this many numbers, and starts again. */
#define VIEW_MAP_MAX 65536

/*
 * The namespace of each task a pass over the machine's processes met,
 * kept NS_SEEN_MS, by pid (a slot a pid, the last one wins): a listing
 * of proc/ in a view then reads the link of a task not in it once in
 * NS_SEEN_MS, not at every listing. A task's namespace never changes;
 * a pid reused meanwhile, by a task of the view, could be missed from a
 * listing for that long, and from nothing else.
 */
#define NS_SEEN 8192
#define NS_SEEN_MS 1000

struct ns_seen {
	pid_t pid;
	ino_t ns;
	long long at_ms;
};

struct views {
	pthread_mutex_t lock;
	pthread_mutex_t seen_lock;
	struct ns_seen seen[NS_SEEN];
	ino_t own_ino; /* the daemon's namespace */
	ino_t pinned_ino; /* 0: each reader's own */
	int pinned_fd;
	enum translate how;
	unsigned int pinned_level; /* nspid: the pinned one's depth */
	pthread_mutex_t chains_lock;
	struct ns_chain chain[NS_CHAINS];
	unsigned int nchains, next_chain;
	unsigned int used; /* slots below this were made at least once */
	long long shared_until_s; /* atomic */
	unsigned long long scans; /* atomic: passes over /proc, for info */
	struct view slot[VIEW_SLOTS];
	/* What each slot was given, where a successor finds it (NULL:
	 * nowhere); and the slots a dead server gave, which only their
	 * own view takes again. */
	struct view_record *record;
	bool reserved[VIEW_SLOTS];
	/* The views of readers whose own could not be made: EAGAIN (no
	 * slot free), EMFILE (out of descriptors), ENOMEM. */
	struct view refused[3];
	bool crowded; /* a slot was reused since views_crowded() asked */
	/* The namespaces of views ended since views_ended() asked. */
	ino_t ended[VIEW_SLOTS];
	unsigned int nended;
	struct logged {
		uid_t uid;
		long long at_s;
	} logged[VIEW_LOGGED]; /* the last refusals logged, by uid */
};

/* ---- view_ns.c ---- */

/*
 * view_ns_of - the nsfs inode of the PID namespace of the thread the
 * daemon numbers @pid; 0 when it cannot be read.
 */
ino_t view_ns_of(pid_t pid);

/* view_probe_translate - how this kernel lets numbers be translated. */
enum translate view_probe_translate(void);

/*
 * view_chain_walk - the chain of the namespace of @fd, up to the
 * daemon's: 0, -ENOENT when it is not below it, -EMFILE.
 */
int view_chain_walk(const struct views *vs, int fd, struct ns_chain *c);

/* view_map_new, _free - a view's empty map (NULL: no memory); NULL ok. */
struct view_map *view_map_new(void);
void view_map_free(struct view_map *m);

/* view_map_get - the entry of number @nr, its nr 0 when there is none. */
struct map_entry view_map_get(struct view_map *m, pid_t nr);

/* view_proc_ino_of - the inode of /proc/@pid; 0 when it is gone. */
ino_t view_proc_ino_of(pid_t pid);

/*
 * view_chains_drop - close the chains met last before @idle_before, and
 * those of the @nended namespaces @ended and below them.
 */
void view_chains_drop(struct views *vs, const ino_t *ended, unsigned int nended,
		      long long idle_before);

#endif
