/*
 * nodes-internal: what nodes.c gives tables.c (nodes.h is what the
 * tree's table sees): the numbers a listing or a table met alive, and
 * the lookups of tasks kept since they exited. For one request, on its
 * thread.
 */
#ifndef TIMINGFS_NODES_INTERNAL_H
#define TIMINGFS_NODES_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "nodes.h"

/* The numbers a listing or a table met alive, to leave out kept ones. */
struct seen {
	pid_t *nr;
	size_t count, cap;
	bool sorted;
};

/* seen_add - @nr met: 0 or -ENOMEM. seen_has - whether it was met.
 * seen_free - free what @s holds. */
int seen_add(struct seen *s, pid_t nr);
bool seen_has(struct seen *s, pid_t nr);
void seen_free(struct seen *s);

/* exited_lookup - the kept record of thread @vtid (0: the process) of
 * process @vpid of @r's view, if the access rules show its owner. */
int exited_lookup(struct request *r, pid_t vpid, pid_t vtid,
		  struct exited_task *x);
/* process_pid - the daemon's number of process @vpid of @r's view, or
 * -ENOENT. */
int process_pid(struct request *r, pid_t vpid);
/* process_creation - when process @vpid of @r's view was made. */
int process_creation(struct request *r, pid_t vpid, uint64_t *ns);
/* thread_of - whether kept thread @x belongs to the process born at
 * @born (its times in *@t). */
bool thread_of(struct request *r, const struct exited_task *x, uint64_t born,
	       struct task_times *t);

#endif
