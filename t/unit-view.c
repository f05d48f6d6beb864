/*
 * unit-view: PID namespaces and the table of views, against the real
 * kernel: the daemon's own view, a reader it cannot place, one owner's
 * view, and a child made in a new PID namespace (as root), whose
 * numbers are translated both ways and compared with its NSpid line;
 * and the table of records of the nodes the kernel holds below proc/
 * (records.h), which keeps the task instance each was, holds the view
 * slots they are named in, and outlives a server in shared memory.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "records.h"
#include "tap.h"
#include "view.h"

static ino_t ns_ino(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	return stat(path, &st) == 0 ? st.st_ino : 0;
}

static void test_own(struct views *vs)
{
	struct view *v;
	bool shared;

	check(views_pinned(vs) == 0, "caller views: nothing pinned");
	v = views_caller(vs, getpid(), VIEW_ALL_UIDS, &shared);
	check(v->slot == VIEW_OWN && v->identity && !shared,
	      "the daemon's own namespace is VIEW_OWN, numbers unchanged");
	check_int(view_to_daemon(v, getpid()), getpid(),
		  "own view: a number is the daemon's");
	check(!views_shared(vs), "only the own view came: not shared");
	views_put(vs, v);

	v = views_caller(vs, 0, VIEW_ALL_UIDS, &shared);
	check(v->slot == VIEW_NOWHERE && v->nowhere && shared,
	      "a reader it cannot place: nowhere, and the mount is shared");
	check_int(view_to_daemon(v, 1), -ENOENT, "nowhere: no process 1");
	check(views_shared(vs), "shared after another view came");
	views_put(vs, v);

	v = views_caller(vs, getpid(), 1234, &shared);
	check(v->slot > VIEW_NOWHERE && v->identity && v->only_uid == 1234,
	      "one owner's view: a slot of its own, same numbers");
	check(view_shows_owner(v, 1234) && !view_shows_owner(v, 0),
	      "one owner's view shows that owner alone");
	check(views_slot(vs, v->slot) == v, "its slot names it");
	views_put(vs, v);
	views_put(vs, v);
	v = views_slot(vs, VIEW_SLOTS - 1);
	check(v->slot == VIEW_NOWHERE, "a slot never made is nowhere");
}

/*
 * A child in a new PID namespace, where it is 1: made by a process of
 * its own that unshares, so that this one's later children (a leak
 * checker's, say) stay in its namespace.
 */
static pid_t spawn_in_new_ns(const int hold[2])
{
	pid_t maker, child = -1;
	int fds[2];

	if (pipe(fds) < 0)
		return -1;
	maker = fork();
	if (maker == 0) {
		char c;

		close(fds[0]);
		close(hold[1]); /* the test's alone: its close ends the hold */
		if (unshare(CLONE_NEWPID) < 0)
			_exit(1);
		child = fork();
		if (child == 0) {
			(void)!read(hold[0], &c,
				    1); /* until the test is done */
			_exit(0);
		}
		(void)!write(fds[1], &child, sizeof(child));
		_exit(0);
	}
	close(fds[1]);
	if (maker < 0 || read(fds[0], &child, sizeof(child)) != sizeof(child))
		child = -1;
	close(fds[0]);
	if (maker > 0)
		waitpid(maker, NULL, 0);
	return child;
}

static void test_child(struct views *vs)
{
	pid_t child, inner;
	struct view *v;
	bool shared;
	int hold[2];

	if (getuid() != 0 || !views_can_translate(vs) || pipe(hold) < 0 ||
	    (child = spawn_in_new_ns(hold)) < 0) {
		tap_skip("a child in a new PID namespace",
			 "needs root and Linux 6.10");
		return;
	}
	close(hold[0]);
	v = views_caller(vs, child, VIEW_ALL_UIDS, &shared);
	check(v->slot > VIEW_NOWHERE && !v->identity && !v->nowhere,
	      "a child namespace gets a view of its own");
	check(v->ns_ino == ns_ino(child) && v->ns_ino != ns_ino(getpid()),
	      "its namespace is the child's");
	check_int(view_from_daemon(v, child), 1,
		  "the child is 1 in its namespace");
	check_int(view_to_daemon(v, 1), child, "and 1 there is the child here");
	check_int(view_from_daemon(v, getpid()), -ENOENT,
		  "the parent does not exist there");
	inner = view_to_daemon(v, 2);
	check_int(inner, -ENOENT, "nor does a 2");
	check(views_caller(vs, child, VIEW_ALL_UIDS, &shared) == v,
	      "the same namespace, the same view");
	views_put(vs, v);
	views_put(vs, v);
	close(hold[1]);
	/* The child is the maker's, reaped by init: wait for it to go. */
	while (kill(child, 0) == 0 && ns_ino(child) == v->ns_ino)
		usleep(1000);
}

static void test_pinned(void)
{
	char err[256], path[64];
	struct views *vs = NULL;
	struct view *v;
	bool shared;

	check_int(views_new("/etc/passwd", &vs, err, sizeof(err)), -EINVAL,
		  "pinned to a regular file: EINVAL");
	check_str(err,
		  "pidns=/etc/passwd: not a PID namespace "
		  "(want /proc/PID/ns/pid)",
		  "and it says so");
	check_int(views_new("/proc/self/ns/net", &vs, err, sizeof(err)),
		  -EINVAL, "pinned to a network namespace: EINVAL");
	check_int(views_new("/nonexistent", &vs, err, sizeof(err)), -ENOENT,
		  "pinned to nothing: ENOENT");
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)getpid());
	check_int(views_new(path, &vs, err, sizeof(err)), 0,
		  "pinned to the daemon's own namespace");
	check(views_pinned(vs) == ns_ino(getpid()), "pinned: its inode");
	v = views_caller(vs, 0, VIEW_ALL_UIDS, &shared);
	check(v->slot == VIEW_OWN && v->identity,
	      "pinned: every reader, placed or not, gets the pinned view");
	views_free(vs);
}

/* records_gone()'s question, of this machine: no thread @tid in @pid. */
static bool proc_gone(void *ctx, pid_t pid, pid_t tid)
{
	char path[64];

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid,
		 (int)(tid ? tid : pid));
	return access(path, F_OK) != 0 && errno == ENOENT;
}

static void test_records(struct views *vs)
{
	struct records *rs = NULL, *next = NULL;
	struct record_task t = { 0 }, got;
	struct node n = { .kind = K_TGID, .view = 7, .num = { 41 } }, m, g;
	struct record_name names[4];
	size_t bytes = 64 * RECORD_BYTES;
	void *area;
	uint64_t id;
	uint32_t first;
	unsigned int i;

	area = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!check(area != MAP_FAILED, "records: an area"))
		return;
	check_int(records_new(vs, area, bytes, &rs), 0, "records: a table");
	check_int(records_get(rs, NODE_REC_BIT | 1 << NODE_KIND_BITS | K_TGID,
			      &g, NULL),
		  -ENOENT, "records: unknown: ENOENT");
	t = (struct record_task){ .pid = 1041, .start = 100, .parent = 5 };
	check_int(records_name(rs, &n, &t), 0, "records: a lookup");
	first = n.rec;
	check(first != 0 && node_id(&n) != node_ino(&n),
	      "records: the node ID is the record's");
	check_int(records_name(rs, &n, &t), 0, "records: another");
	check(n.rec == first, "records: the same instance, the same record");
	check(views_held(vs, 7) == 1, "records: one record holds its slot");
	m = n;
	m.kind = K_THREADS;
	check_int(records_hold(rs, &m), 0,
		  "records: threads/ is a node of its process's record");
	check_int(records_get(rs, node_id(&m), &g, &got), 0,
		  "records: threads/ by its ID");
	check(g.kind == K_THREADS && g.num[0] == 41 && g.view == 7 &&
		      g.rec == first && got.pid == 1041 && got.start == 100 &&
		      got.parent == 5,
	      "records: its node and task, from the record");
	m.kind = K_TID; /* a thread is a record of its own, never a node */
	check_int(records_get(rs, node_id(&m), &g, NULL), -ENOENT,
		  "records: a kind the record cannot have: ENOENT");
	t.start = 200; /* the number taken by another task */
	m = n;
	check_int(records_name(rs, &m, &t), 0, "records: a new instance");
	check(m.rec != first, "records: another start, another record");
	check(views_held(vs, 7) == 2, "records: each holds the slot");
	check(records_of_task(rs, 1041, 0, names, 4) == 2 &&
		      names[0].parent == 5 && names[0].node.num[0] == 41,
	      "records: both found by their task, with their names");
	records_forget(rs, node_id(&m), 1);
	check(views_held(vs, 7) == 1,
	      "records: forgotten, the slot's hold back");
	check_int(records_get(rs, node_id(&m), &g, NULL), -ENOENT,
		  "records: a forgotten record names nothing");
	/* A successor finds the record as it was. */
	next = NULL;
	check_int(records_new(vs, area, bytes, &next), 0,
		  "records: a successor maps the same area");
	check(records_get(next, node_id(&n), &g, &got) == 0 && g.rec == first &&
		      got.start == 100 && records_count(next) == 1,
	      "records: and finds the live record, whole");
	check(views_held(vs, 7) == 2, "records: which holds its slot again");
	records_forget(next, node_id(&n), 2);
	check_int(records_get(next, node_id(&n), &g, NULL), 0,
		  "records: its nodes' lookups, all counted (threads/ too)");
	records_forget(next, node_id(&n) + 0, 1);
	check_int(records_get(next, node_id(&n), &g, NULL), -ENOENT,
		  "records: the last forgotten: gone");
	records_free(next);
	views_hold(vs, 7, -1); /* the first table's hold, which it kept */
	records_free(rs);
	munmap(area, bytes);

	/* IDs that spread over the kernel's inode hash. */
	check_int(records_new(vs, NULL, 0, &rs), 0, "records: anonymous");
	for (i = 0; i < 5000; i++) {
		n = (struct node){ .kind = K_TID, .view = 9, .num = { 1, i } };
		t = (struct record_task){ .pid = 1,
					  .tid = (pid_t)i,
					  .start = i + 1 };
		records_name(rs, &n, &t);
		id = node_id(&n);
		if (i == 4999)
			check(id >> 40 == NODE_REC_BIT >> 40 &&
				      (id & ((1ULL << 40) - 1)) ==
					      ((uint64_t)n.rec << 8 | K_TID),
			      "records: 5000 threads' IDs differ below bit 40");
	}
	check(records_count(rs) == 5000 && views_held(vs, 9) == 5000,
	      "records: 5000 records, all counted in their slot");
	for (i = 1; i <= 5000; i++)
		records_forget(rs, NODE_REC_BIT | (uint64_t)i << 8 | K_TID, 1);
	check(records_count(rs) == 0 && views_held(vs, 9) == 0,
	      "records: all forgotten, the slot free");
	{
		pid_t child = fork();

		if (child == 0)
			_exit(0);
		waitpid(child, NULL, 0);
		n = (struct node){ .kind = K_TGID, .view = 9, .num = { 41 } };
		t = (struct record_task){ .pid = child, .start = 1 };
		records_name(rs, &n, &t);
		n.num[0] = 42;
		t.pid = getpid();
		records_name(rs, &n, &t);
		n.num[0] = 43;
		t.pid = 0;
		records_name(rs, &n, &t);
		check(records_gone(rs, proc_gone, NULL, names, 4) == 1 &&
			      names[0].node.kind == K_TGID &&
			      names[0].node.num[0] == 41 &&
			      names[0].node.view == 9,
		      "records: the directory of an exited task is found "
		      "gone, a live one's and an unknown one's not");
	}
	records_free(rs);
}

int main(void)
{
	struct views *vs;
	char err[256];

	if (views_new(NULL, &vs, err, sizeof(err)) < 0) {
		printf("Bail out! views_new: %s\n", err);
		return 1;
	}
	test_own(vs);
	test_pinned();
	test_child(vs);
	test_records(vs);
	views_free(vs);
	return tap_done();
}
