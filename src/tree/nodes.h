/*
 * nodes: what each kind of node of the tree does, for one reader.
 *
 * The tree's table (tree.c) names these callbacks, one per file, link
 * or family of numbered directories. Below proc/ every number is the
 * reader's view's: a callback translates it into the daemon's number
 * before it asks the engine, and a task that is not in the reader's
 * view does not exist (-ENOENT). The access rules are the numbered
 * directories' check callbacks' alone (check_pid, check_tid, below),
 * which tree_check() asks for every directory on a node's path: a
 * value, link or listing callback checks no owner itself, and its
 * caller must have asked tree_check() (or know its answer) first. The
 * tables are the exception: a line per thread the rules let the reader
 * see. They return 0 (or a length) or -errno, and are thread safe.
 */
#ifndef TIMINGFS_NODES_H
#define TIMINGFS_NODES_H

#include <stdbool.h>
#include <stddef.h>

#include "request.h"
#include "render.h"

/* A listing being made: a sink for entries, and the numbered child. */
typedef int (*listing_add_fn)(void *sink, const char *name, uint64_t ino,
			      mode_t mode);

struct listing {
	listing_add_fn add;
	void *sink;
	struct node child; /* the numbered child being added */
	unsigned int slot; /* which of its numbers */
	mode_t mode;
};

/* Add the numbered child @v, named PREFIX@v, to the listing. */
int listing_number(struct listing *l, const char *prefix, unsigned long v);

/* Files. */
int show_info(struct request *r, const struct node *n, struct rbuf *b);
int show_group_cpus(struct request *r, const struct node *n, struct rbuf *b);
int show_group_idle(struct request *r, const struct node *n, struct rbuf *b);
int show_cpu_idle(struct request *r, const struct node *n, struct rbuf *b);
int show_cpu_number(struct request *r, const struct node *n, struct rbuf *b);

/*
 * task_of - the daemon's numbers of the task @n names in @r's view:
 * *@pid, and *@tid (0 for the process itself). -ENOENT when @r's view
 * has no such task. What it found is kept in @r for the rest of the
 * request: the same numbers asked again are not translated again.
 */
int task_of(struct request *r, const struct node *n, pid_t *pid, pid_t *tid);

/*
 * request_caps - the reader's effective capabilities and user namespace
 * into r->cap_eff and r->userns, read once a request (access.h's
 * access_reader_caps()). 0, or -errno when they cannot be read.
 */
int request_caps(struct request *r);

/*
 * request_ptrace_all - whether the reader has CAP_SYS_PTRACE in the
 * daemon's user namespace: it may see every process.
 */
bool request_ptrace_all(struct request *r);

/*
 * task_visible - whether the access rules let the reader of @r see the
 * live process the daemon numbers @pid, whose status said @id: as
 * procfs decides it (access.h). A reader who may see every process
 * sees those its view shows (view_shows_owner()). The reader's
 * capabilities are read only when the ids do not decide; a task whose
 * ids are the reader's costs one stat (is it dumpable?).
 */
bool task_visible(struct request *r, pid_t pid, const struct task_ident *id);

/*
 * node_times - the times of the task @n names, as @need asks (enum
 * task_need): alive, or, when it exited, kept (exited.h).
 */
int node_times(struct request *r, const struct node *n, unsigned int need,
	       struct task_times *t);

/*
 * task_start - the identity of the task node @n names, now, in @r's
 * view: its start (creation time, ns), alive or kept; 0 for a node
 * below proc/ that names no task (proc/ itself, proc/self, proc/table).
 * A process's directory and what is in it (threads/ too) are the
 * process's; a thread's directory and its files, the thread's. What a
 * read earlier in the request met of the task (engine.h: a kept file's
 * task at no cost), else one read of the task's stat (its main
 * thread's for a process). -ENOENT when
 * the task is gone; when its stat cannot be read otherwise (a broken
 * source, out of descriptors), 0 and a start of 0: not known.
 */
int task_start(struct request *r, const struct node *n, uint64_t *start);

/*
 * task_identity - which task node @n names, now, in @r's view, as a
 * record keeps it (engine.h): its pidfs identity where the engine has
 * them (alive: the number's task now; kept since it exited: the one it
 * was met alive with, else its start), else task_start()'s start; out
 * of descriptors, its start too. 0 for a node that names no task,
 * -ENOENT when the task is gone.
 */
int task_identity(struct request *r, const struct node *n, uint64_t *ident);

/*
 * task_vouch - after the content of node @n was made for @r: -ENOENT
 * when @n is of the task of a record with a pidfs identity
 * (r->task_ident) and its number names another task now, so that what
 * was read by number may be the other's; else 0. A task that holds its
 * number after a read held it throughout (a number is never given back
 * to a task that lost it).
 */
int task_vouch(struct request *r, const struct node *n);

/*
 * Tables: a header line, then a line of each thread the reader may see
 * (its view's numbers, and the access rules), all of a thread's values
 * from one engine call. show_threads_table: the threads of the process
 * @n; show_table: those of every process.
 */
int show_threads_table(struct request *r, const struct node *n, struct rbuf *b);
int show_table(struct request *r, const struct node *n, struct rbuf *b);

/* Links: the target, for the reader. */
int link_self(struct request *r, char *buf, size_t size);
int link_current_group(struct request *r, char *buf, size_t size);

/*
 * Numbered directories: check_* says whether the number exists now for
 * the reader (and may set the owner); list_* adds every one it may see.
 * check_pid, for a process the access rules hide from the reader:
 * -ENOENT under invisible; under noaccess the directory itself is
 * there, but entering it (r->entering, or any node below it) is
 * -EACCES.
 */
int check_group(struct request *r, const struct node *n, struct owner *o);
int list_groups(struct request *r, const struct node *dir, struct listing *l);
int check_cpu(struct request *r, const struct node *n, struct owner *o);
int list_cpus(struct request *r, const struct node *dir, struct listing *l);
int check_pid(struct request *r, const struct node *n, struct owner *o);
int list_pids(struct request *r, const struct node *dir, struct listing *l);
int check_tid(struct request *r, const struct node *n, struct owner *o);
int list_tids(struct request *r, const struct node *dir, struct listing *l);

/*
 * jobs/ (jobs.c): a cgroup at or below the cgroup of the reader's
 * view's first process (PID 1 of its namespace; the hierarchy's root
 * for the daemon's own view), checked at every request, named by its
 * id (node_job()). check_job: whether @n's cgroup is one; list_jobs:
 * the cgroups in @dir (in the root: jobs/ itself, where a hierarchy
 * accounts the CPU); render_job: value @v of @n's cgroup, or with @v
 * NULL its times file. check_job_link and link_job: proc/PID/job, the
 * process's cgroup below the reader's jobs/ (else -ENOENT) as a
 * relative link.
 */
struct job_value;
int check_job(struct request *r, const struct node *n, struct owner *o);
int list_jobs(struct request *r, const struct node *dir, struct listing *l);
int render_job(struct request *r, const struct node *n,
	       const struct job_value *v, struct rbuf *b);
int check_job_link(struct request *r, const struct node *n, struct owner *o);
int link_job(struct request *r, const struct node *n, char *buf, size_t size);

#endif
