/*
 * request: who asks, and what every request of a mount shares.
 *
 * A request is the reader's thread as the daemon numbers it, its ids,
 * its view, and the mount's environment: the engine, the views, the
 * access rules, the exited tasks. Nothing here knows FUSE; the FUSE
 * layer fills a request in for every operation, and the tree's
 * callbacks (nodes.h) answer it.
 */
#ifndef TIMINGFS_REQUEST_H
#define TIMINGFS_REQUEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "engine.h"
#include "exited.h"
#include "node.h"
#include "listener.h"
#include "policy.h"
#include "view.h"

/* What every request shares: set up once, read-only while serving. */
struct tree_env {
	struct engine *engine;
	struct views *views;
	struct access_policy access;
	uid_t uid, gid; /* the daemon's: the owner outside proc/PID */
	struct timespec mount_time;
	/* The exited tasks kept, and who files them; NULL when none are. */
	struct exited *exited;
	struct listener *listener;
};

/* Who asks. */
struct request {
	const struct tree_env *env;
	struct view *view; /* the reader's view, for nodes below proc/ */
	pid_t pid; /* the reader's thread as the daemon numbers it, or 0 */
	uid_t uid; /* its filesystem ids */
	gid_t gid;
	/*
	 * Whether the access rules let it see every process (then
	 * VIEW_ALL_UIDS), else its own uid, the key of its views under
	 * invisible. A function, asked only where it matters and once a
	 * request (request_only_uid()), since the answer may need the
	 * reader's groups and capabilities; NULL for a reader to whom no
	 * rule applies.
	 */
	uid_t (*only_uid)(struct request *r);
	void *ctx; /* the layer that asked: only_uid's */
	bool entering; /* an opendir: a process's directory is entered */
	/* Read once a request, when first needed (nodes.h): */
	bool only_known;
	uid_t only_memo;
	int caps_state; /* 0: not read; 1: read; -errno: unreadable */
	uint64_t cap_eff; /* the reader's CapEff */
	ino_t userns; /* and its user namespace */
	/* The last task task_of() found, in the daemon's numbers, for
	 * the numbers task_nr of view task_view (task_pid 0: none yet). */
	const struct view *task_view;
	uint32_t task_nr[2];
	pid_t task_pid, task_tid;
	/* The identity the FUSE layer's record keeps of that task (its
	 * start, or a pidfs identity: engine.h), 0: none. */
	uint64_t task_ident;
	/* The creation time of task (seen_pid, seen_tid) in the daemon's
	 * numbers, as a read of this request met it (0: none yet). */
	uint64_t seen_start;
	pid_t seen_pid, seen_tid;
};

/* request_only_uid - whether @r's reader may see every process
 * (VIEW_ALL_UIDS), else its uid (struct request's only_uid). */
static inline uid_t request_only_uid(struct request *r)
{
	if (!r->only_known) {
		r->only_memo = r->only_uid ? r->only_uid(r) : VIEW_ALL_UIDS;
		r->only_known = true;
	}
	return r->only_memo;
}

#endif
