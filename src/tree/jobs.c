/*
 * jobs: what jobs/ and proc/PID/job do for one reader (nodes.h): the
 * cgroups at and below the cgroup of the reader's view's first process,
 * each a directory of K_JOB named by its cgroup id (the engine's
 * jobs.h), checked at every request to be at or below that cgroup.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "tree.h"
#include "values.h"

/*
 * The daemon's number of the first process of the reader's view (PID 1
 * of its namespace), 0 for the daemon's own view (the hierarchy's
 * root stands for it). -ENOENT for a reader the daemon cannot place.
 */
static int view_first(struct request *r, pid_t *pid)
{
	int ret;

	if (!r->view || r->view->nowhere)
		return -ENOENT;
	if (r->view->identity) {
		*pid = 0;
		return 0;
	}
	ret = view_to_daemon(r->view, 1);
	if (ret < 0)
		return -ENOENT;
	*pid = ret;
	return 0;
}

/* The id of the reader's jobs/: its view's first process's cgroup. */
static int job_root(struct request *r, uint64_t *root)
{
	pid_t first;
	int ret = view_first(r, &first);

	if (ret < 0)
		return ret;
	return jobs_view_root(engine_jobs(r->env->engine), first, root);
}

int tree_job_child(struct request *r, const struct node *dir, const char *name,
		   struct node *child)
{
	uint64_t root, id;
	int ret;

	if (child->kind != K_JOB)
		return 0;
	ret = job_root(r, &root);
	if (ret == 0 && dir->kind == K_JOB)
		ret = jobs_child(engine_jobs(r->env->engine), root,
				 node_job(dir), name, &id);
	else
		id = root;
	if (ret < 0)
		return ret;
	node_set_job(child, id);
	return 0;
}

int check_job(struct request *r, const struct node *n, struct owner *o)
{
	uint64_t root;
	int ret = job_root(r, &root);

	(void)o;
	return ret < 0 ? ret :
			 jobs_check(engine_jobs(r->env->engine), root,
				    node_job(n));
}

/* A listing of the cgroups in directory @dir. */
struct job_listing {
	struct listing *l;
	const struct node *dir;
};

/* A cgroup of a listing: its node in the reader's view; not one that a
 * file of the directory hides (a cgroup named "cycles"). */
static int list_one(void *arg, const char *name, uint64_t id)
{
	struct job_listing *jl = arg;
	struct listing *l = jl->l;
	struct node c;

	if (tree_child(jl->dir, name, &c) < 0 || c.kind != K_JOB)
		return 0;
	node_set_job(&l->child, id);
	return l->add(l->sink, name, node_ino(&l->child), l->mode);
}

int list_jobs(struct request *r, const struct node *dir, struct listing *l)
{
	struct jobs *j = engine_jobs(r->env->engine);
	uint64_t root;

	if (jobs_source(j) == JOBS_NONE)
		return 0; /* no jobs/ at all */
	if (dir->kind != K_JOB) {
		/* jobs/ itself, its node the reader's own (a lookup's) */
		if (job_root(r, &root) < 0)
			root = 0;
		node_set_job(&l->child, root);
		return l->add(l->sink, "jobs", node_ino(&l->child), l->mode);
	}
	if (job_root(r, &root) < 0)
		return -ENOENT;
	l->child.kind = K_JOB;
	return jobs_list(j, root, node_job(dir), list_one,
			 &(struct job_listing){ l, dir });
}

int render_job(struct request *r, const struct node *n,
	       const struct job_value *v, struct rbuf *b)
{
	enum units units = engine_units(r->env->engine);
	struct job_times t;
	uint64_t root;
	unsigned int i;
	int ret;

	ret = job_root(r, &root);
	if (ret == 0)
		ret = jobs_times(engine_jobs(r->env->engine), root, node_job(n),
				 &t);
	if (ret < 0)
		return ret;
	if (v)
		return render_value(b, job_value(v, units, &t));
	for (i = 0; i < JOB_VALUE_COUNT && ret == 0; i++)
		ret = rbuf_printf(b, "%s %" PRIu64 "\n", job_values[i].name,
				  job_value(&job_values[i], units, &t));
	return ret;
}

/* Where process @n's cgroup lies below the reader's jobs/, into @rel. */
static int job_path(struct request *r, const struct node *n, char *rel,
		    size_t size)
{
	pid_t first = 0, pid, tid;
	int ret;

	ret = task_of(r, n, &pid, &tid);
	if (ret == 0)
		ret = view_first(r, &first);
	if (ret < 0)
		return ret;
	return jobs_path_below(engine_jobs(r->env->engine), first, pid, rel,
			       size);
}

int check_job_link(struct request *r, const struct node *n, struct owner *o)
{
	char rel[PATH_MAX];

	(void)o;
	return job_path(r, n, rel, sizeof(rel));
}

int link_job(struct request *r, const struct node *n, char *buf, size_t size)
{
	char rel[PATH_MAX];
	int ret = job_path(r, n, rel, sizeof(rel));

	if (ret < 0)
		return ret;
	ret = snprintf(buf, size, "../../jobs%s%s", rel[0] ? "/" : "", rel);
	return ret < (int)size ? 0 : -ENAMETOOLONG;
}
