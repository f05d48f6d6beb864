/*
 * unit-view: PID namespaces and the table of views, against the real
 * kernel: the daemon's own view, a reader it cannot place, one owner's
 * view, and a child made in a new PID namespace (as root), whose
 * numbers are translated both ways and compared with its NSpid line;
 * and the table of records of the nodes the kernel holds below proc/
 * (inodes.h), which keeps the task instance each was, holds the view
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

#include "inodes-internal.h"
#include "inodes.h"
#include "tap.h"
#include "tree.h"
#include "view.h"
#include "view_int.h"

/* How many inodes named in slot @slot the kernel holds. */
static unsigned long views_held(struct views *vs, unsigned int slot)
{
	unsigned long n;

	pthread_mutex_lock(&vs->lock);
	n = vs->slot[slot].held;
	pthread_mutex_unlock(&vs->lock);
	return n;
}

/* How many inodes in use the table holds entries of. */
static size_t inodes_in_use(struct inodes *in)
{
	size_t n;

	pthread_mutex_lock(&in->lock);
	n = in->nentries;
	pthread_mutex_unlock(&in->lock);
	return n;
}

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
	v = views_caller(vs, getpid(), VIEW_ALL_UIDS, 0, &shared);
	check(v->slot == VIEW_OWN && v->identity && !shared,
	      "the daemon's own namespace is VIEW_OWN, numbers unchanged");
	check_int(view_to_daemon(v, getpid()), getpid(),
		  "own view: a number is the daemon's");
	check(!views_shared(vs), "only the own view came: not shared");
	views_put(vs, v);

	v = views_caller(vs, 0, VIEW_ALL_UIDS, 0, &shared);
	check(v->slot == VIEW_NOWHERE && v->nowhere && shared,
	      "a reader it cannot place: nowhere, and the mount is shared");
	check_int(view_to_daemon(v, 1), -ENOENT, "nowhere: no process 1");
	check(views_shared(vs), "shared after another view came");
	views_put(vs, v);

	v = views_caller(vs, getpid(), 1234, 0, &shared);
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
	v = views_caller(vs, child, VIEW_ALL_UIDS, 0, &shared);
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
	check(views_caller(vs, child, VIEW_ALL_UIDS, 0, &shared) == v,
	      "the same namespace, the same view");
	views_put(vs, v);
	views_put(vs, v);
	close(hold[1]);
	/* The child is the maker's, reaped by init: wait for it to go. */
	while (kill(child, 0) == 0 && ns_ino(child) == v->ns_ino)
		usleep(1000);
}

/* Whether this process holds a descriptor of PID namespace @ino. */
static bool holds_ns(ino_t ino)
{
	char path[64], link[64], want[64];
	int fd;

	snprintf(want, sizeof(want), "pid:[%llu]", (unsigned long long)ino);
	for (fd = 0; fd < 1024; fd++) {
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = 0;
		if (strcmp(link, want) == 0)
			return true;
	}
	return false;
}

/*
 * A view of a namespace whose last process went: views_reap() ends it,
 * closes its descriptor and frees its slot (the kernel holds none of
 * its names here).
 */
static void test_reap(struct views *vs)
{
	unsigned int slot[4], n, s;
	pid_t child;
	struct view *v;
	bool shared;
	int hold[2];
	ino_t ns;

	if (getuid() != 0 || !views_can_translate(vs) || pipe(hold) < 0 ||
	    (child = spawn_in_new_ns(hold)) < 0) {
		tap_skip("a view of a namespace that ends",
			 "needs root and Linux 6.10");
		return;
	}
	close(hold[0]);
	v = views_caller(vs, child, VIEW_ALL_UIDS, 1000, &shared);
	s = v->slot;
	ns = v->ns_ino;
	check(s > VIEW_NOWHERE && v->holder == 1000 && holds_ns(ns),
	      "a namespace's view: charged to its holder, its namespace held");
	views_put(vs, v);
	check_int(views_reap(vs, slot, 4), 0,
		  "a reap while its process lives: nothing to drop");
	check(views_slot(vs, s) == v && !v->gone && holds_ns(ns),
	      "and the view stays");
	views_put(vs, v);
	close(hold[1]);
	while (kill(child, 0) == 0 && ns_ino(child) == ns)
		usleep(1000);
	n = views_reap(vs, slot, 4);
	check_int(n, 0, "its process gone, a reap: no names to drop");
	check(!holds_ns(ns), "its namespace's descriptor is closed");
	v = views_slot(vs, s);
	check(v->slot == VIEW_NOWHERE, "its slot is free: nowhere");
	views_put(vs, v);
}

/*
 * The bounds of slots: a uid but root holds at most views_set_uid_max()
 * slots, and none of the last VIEW_ROOT_RESERVE; root is never refused
 * so. Identity views (one owner's of the daemon's own namespace) take
 * slots as any view does.
 */
static void test_bounds(void)
{
	unsigned int i, made = 0, refused = 0;
	struct views *vs;
	struct view *v;
	char err[256];
	bool shared;

	if (views_new(NULL, &vs, err, sizeof(err)) < 0) {
		tap_skip("the bounds of slots", err);
		return;
	}
	views_set_uid_max(2);
	for (i = 0; i < 3; i++) {
		v = views_caller(vs, getpid(), 100 + i, 1000, &shared);
		made += v->error == 0;
		refused += v->error == -EAGAIN;
		views_put(vs, v);
	}
	check(made == 2 && refused == 1,
	      "uid 1000, bound 2: two views, the third EAGAIN");
	v = views_caller(vs, getpid(), 103, 1001, &shared);
	check_int(v->error, 0, "another uid still gets one");
	views_put(vs, v);
	v = views_caller(vs, getpid(), 100, 1000, &shared);
	check(v->error == 0 && v->slot > VIEW_NOWHERE,
	      "a view the uid holds already: no new slot, served");
	views_put(vs, v);
	views_set_uid_max(VIEW_UID_MAX);
	made = refused = 0;
	/* 15 uids asking 64 views each, 960: the 958 slots that are not
	 * root's, less the 3 above, are given; the rest EAGAIN. */
	for (i = 0; i < 15 * VIEW_UID_MAX; i++) {
		v = views_caller(vs, getpid(), 10000 + i, 2000 + i / 64,
				 &shared);
		made += v->error == 0;
		refused += v->error == -EAGAIN;
		views_put(vs, v);
	}
	check(made == VIEW_UID_MAX_LIMIT - 3 && refused == 15 * 64 - made,
	      "every uid's views but root's reserve, then EAGAIN");
	for (i = 0; i < 3; i++) {
		v = views_caller(vs, getpid(), 20000 + i, 0, &shared);
		check_int(v->error, 0, "root still gets a view");
		views_put(vs, v);
	}
	views_free(vs);
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
	v = views_caller(vs, 0, VIEW_ALL_UIDS, 0, &shared);
	check(v->slot == VIEW_OWN && v->identity,
	      "pinned: every reader, placed or not, gets the pinned view");
	views_free(vs);
}

/* The table's contents: a file's text, freed with the table. */
static void free_text(struct rbuf *text)
{
	rbuf_free(text);
	free(text);
}

static struct rbuf *text_of(const char *s)
{
	struct rbuf *b = calloc(1, sizeof(*b));

	if (b) {
		rbuf_init(b);
		rbuf_printf(b, "%s", s);
	}
	return b;
}

/* inodes_gone()'s question, of this machine: no thread @tid in @pid. */
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
	struct inodes *rs = NULL, *next = NULL, *other;
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
	check_int(inodes_new(vs, area, bytes, free_text, &rs), 0,
		  "records: a table");
	check_int(inodes_node(rs, NODE_REC_BIT | 1 << NODE_KIND_BITS | K_TGID,
			      &g, NULL),
		  -ENOENT, "records: unknown: ENOENT");
	t = (struct record_task){ .pid = 1041, .start = 100, .parent = 5 };
	check_int(inodes_name(rs, &n, &t, NULL, NULL), 0, "records: a lookup");
	first = n.rec;
	check(first != 0 && node_id(&n) != node_ino(&n),
	      "records: the node ID is the record's");
	check_int(inodes_name(rs, &n, &t, NULL, NULL), 0, "records: another");
	check(n.rec == first, "records: the same instance, the same record");
	check(views_held(vs, 7) == 1, "records: one record holds its slot");
	m = n;
	m.kind = K_THREADS;
	check_int(inodes_hold(rs, &m), 0,
		  "records: threads/ is a node of its process's record");
	check_int(inodes_node(rs, node_id(&m), &g, &got), 0,
		  "records: threads/ by its ID");
	check(g.kind == K_THREADS && g.num[0] == 41 && g.view == 7 &&
		      g.rec == first && got.pid == 1041 && got.start == 100 &&
		      got.parent == 5,
	      "records: its node and task, from the record");
	m.kind = K_TID; /* a thread is a record of its own, never a node */
	check_int(inodes_node(rs, node_id(&m), &g, NULL), -ENOENT,
		  "records: a kind the record cannot have: ENOENT");
	t.start = 200; /* the number taken by another task */
	m = n;
	check_int(inodes_name(rs, &m, &t, NULL, NULL), 0,
		  "records: a new instance");
	check(m.rec != first, "records: another start, another record");
	check(views_held(vs, 7) == 2, "records: each holds the slot");
	check(inodes_of_task(rs, 1041, 0, names, 4) == 2 &&
		      names[0].parent == 5 && names[0].node.num[0] == 41,
	      "records: both found by their task, with their names");
	inodes_forget(rs, node_id(&m), 1);
	check(views_held(vs, 7) == 1,
	      "records: forgotten, the slot's hold back");
	check_int(inodes_node(rs, node_id(&m), &g, NULL), -ENOENT,
		  "records: a forgotten record names nothing");
	/* A successor finds the record as it was. */
	next = NULL;
	check_int(inodes_new(vs, area, bytes, free_text, &next), 0,
		  "records: a successor maps the same area");
	check(inodes_node(next, node_id(&n), &g, &got) == 0 && g.rec == first &&
		      got.start == 100 && inodes_records(next) == 1,
	      "records: and finds the live record, whole");
	check(views_held(vs, 7) == 2, "records: which holds its slot again");
	inodes_forget(next, node_id(&n), 2);
	check_int(inodes_node(next, node_id(&n), &g, NULL), 0,
		  "records: its nodes' lookups, all counted (threads/ too)");
	inodes_forget(next, node_id(&n) + 0, 1);
	check_int(inodes_node(next, node_id(&n), &g, NULL), -ENOENT,
		  "records: the last forgotten: gone");
	/* A successor whose tree has another shape takes none over. */
	t.start = 300;
	n.rec = 0;
	check_int(inodes_name(next, &n, &t, NULL, NULL), 0,
		  "records: a live record for the next successor");
	check(((struct records_header *)area)->shape == tree_shape(),
	      "records: the area says whose tree's shape they are");
	other = NULL;
	check_int(inodes_new(vs, area, bytes, free_text, &other), 0,
		  "records: a successor of the same shape");
	check(inodes_records(other) == 1 &&
		      inodes_node(other, node_id(&n), &g, NULL) == 0,
	      "records: takes the live record over");
	inodes_free(other);
	views_hold(vs, 7, -1); /* its hold of the slot, as it died */
	((struct records_header *)area)->shape ^= 1;
	other = NULL;
	check_int(inodes_new(vs, area, bytes, free_text, &other), 0,
		  "records: a successor of another shape");
	check(inodes_records(other) == 0 &&
		      inodes_node(other, node_id(&n), &g, NULL) == -ENOENT &&
		      ((struct records_header *)area)->shape == tree_shape(),
	      "records: takes none over: its IDs are ENOENT");
	inodes_free(other);
	inodes_free(next);
	views_hold(vs, 7, -1); /* next's last record's, which it kept */
	views_hold(vs, 7, -1); /* the first table's hold, which it kept */
	check(views_held(vs, 7) == 0, "records: every hold of the slot back");
	inodes_free(rs);
	munmap(area, bytes);

	/* IDs that spread over the kernel's inode hash. */
	check_int(inodes_new(vs, NULL, 0, free_text, &rs), 0,
		  "records: anonymous");
	for (i = 0; i < 5000; i++) {
		n = (struct node){ .kind = K_TID, .view = 9, .num = { 1, i } };
		t = (struct record_task){ .pid = 1,
					  .tid = (pid_t)i,
					  .start = i + 1 };
		inodes_name(rs, &n, &t, NULL, NULL);
		id = node_id(&n);
		if (i == 4999)
			check(id >> 40 == NODE_REC_BIT >> 40 &&
				      (id & ((1ULL << 40) - 1)) ==
					      ((uint64_t)n.rec << 8 | K_TID),
			      "records: 5000 threads' IDs differ below bit 40");
	}
	check(inodes_records(rs) == 5000 && views_held(vs, 9) == 5000,
	      "records: 5000 records, all counted in their slot");
	for (i = 1; i <= 5000; i++)
		inodes_forget(rs, NODE_REC_BIT | (uint64_t)i << 8 | K_TID, 1);
	check(inodes_records(rs) == 0 && views_held(vs, 9) == 0,
	      "records: all forgotten, the slot free");
	{
		pid_t child = fork();

		if (child == 0)
			_exit(0);
		waitpid(child, NULL, 0);
		n = (struct node){ .kind = K_TGID, .view = 9, .num = { 41 } };
		t = (struct record_task){ .pid = child, .start = 1 };
		inodes_name(rs, &n, &t, NULL, NULL);
		n.num[0] = 42;
		t.pid = getpid();
		inodes_name(rs, &n, &t, NULL, NULL);
		n.num[0] = 43;
		t.pid = 0;
		inodes_name(rs, &n, &t, NULL, NULL);
		check(inodes_gone(rs, proc_gone, NULL, names, 4) == 1 &&
			      names[0].node.kind == K_TGID &&
			      names[0].node.num[0] == 41 &&
			      names[0].node.view == 9,
		      "records: the directory of an exited task is found "
		      "gone, a live one's and an unknown one's not");
	}
	inodes_free(rs);
}

/*
 * What an inode in use holds is its record's: it goes with the record,
 * and nothing of it reaches the next record at the same index.
 */
static void test_inode_files(struct views *vs)
{
	struct node p = { .kind = K_TGID, .view = 7, .num = { 51 } }, q, f, g;
	struct record_task t = { .pid = 1051, .start = 300, .parent = 5 };
	struct inodes *in = NULL;
	struct extras_idle idle;
	struct owner o = { 0, 0 }, og;
	struct rbuf *text;
	uint64_t ino = 0, again = 0, size = 0;

	if (inodes_new(vs, NULL, 0, free_text, &in) < 0) {
		check(false, "inodes: a table");
		return;
	}
	check_int(inodes_name(in, &p, &t, NULL, NULL), 0,
		  "inodes: a process named");
	check_int(tree_child(&p, "cycles", &f), 0, "inodes: its cycles");
	check_int(inodes_lookup(in, &f, &o, 100, text_of("12\n"), &p, NULL,
				&ino, &size, &idle),
		  0, "inodes: cycles looked up");
	check(ino == node_id(&f) && node_id_rec(ino) == p.rec,
	      "inodes: its own inode, of the process's record");
	check(inodes_attr(in, ino, &g, &og, &size) == 0 && size == 3 &&
		      g.kind == f.kind && g.rec == p.rec,
	      "inodes: its node and the size told");
	check_int(inodes_lookup(in, &f, &o, 100, text_of("123\n"), NULL, NULL,
				&again, &size, &idle),
		  0, "inodes: looked up again");
	check(again == ino && size == 4 && inodes_in_use(in) == 1,
	      "inodes: the same inode, its new size; one entry in use, the "
	      "file's (its directory's path check is in the record)");
	/* An open rendering afresh keeps the owner told, or asks for one. */
	o = (struct owner){ 1000, 1000 };
	check_int(inodes_resize(in, ino, &o, 4, true), 1,
		  "inodes: resized with an owner, past the least the kernel "
		  "may hold (3): grown");
	check_int(inodes_resize(in, ino, NULL, 6, true), 1,
		  "inodes: resized longer, keeping the owner: grown");
	check(inodes_attr(in, ino, &g, &og, &size) == 0 && size == 6 &&
		      og.uid == 1000 && og.gid == 1000,
	      "inodes: the owner told is kept, the size grown");
	check_int(inodes_resize(in, ino, NULL, 5, false), 0,
		  "inodes: shorter: not grown");
	check(inodes_attr(in, ino, &g, &og, &size) == 0 && size == 5 &&
		      og.uid == 1000,
	      "inodes: the least the kernel may hold, the shorter, its owner");
	o = (struct owner){ 0, 0 };
	inodes_resize(in, ino, &o, 4, false);
	/* Opened with no lookup, nothing told: the owner is asked for. */
	check_int(tree_child(&p, "user_time", &q), 0, "inodes: its user_time");
	check_int(inodes_open(in, node_id(&q), &q, 100, &text), 1,
		  "inodes: opened with no lookup: rendered afresh");
	check(text == NULL &&
		      inodes_resize(in, node_id(&q), NULL, 3, true) ==
			      -ENOENT &&
		      inodes_attr(in, node_id(&q), &g, &og, &size) == -ENOENT,
	      "inodes: no owner told: -ENOENT, and nothing recorded");
	check_int(inodes_resize(in, node_id(&q), &o, 3, true), 1,
		  "inodes: with the owner asked: recorded, grown");
	inodes_release(in, node_id(&q));
	/* Held open by thread 100, looked up by thread 101: the same
	 * inode still, its size never shrunk under the open. */
	check_int(
		inodes_open(in, ino, &f, 100, &text), 2,
		"inodes: opened, taking its lookup's content, longer than told before");
	free_text(text);
	check_int(inodes_lookup(in, &f, &o, 101, text_of("9\n"), NULL, NULL,
				&again, &size, &idle),
		  0, "inodes: looked up while open");
	check(again == ino && size == 4,
	      "inodes: the same inode, told no less than its open's size");
	inodes_release(in, ino);
	check_int(inodes_lookup(in, &f, &o, 101, text_of("9\n"), NULL, NULL,
				&again, &size, &idle),
		  0, "inodes: looked up once closed");
	check(again == ino && size == 2, "inodes: now told its own size");
	inodes_forget(in, node_id(&p), 1);
	check_int(inodes_node(in, node_id(&p), &g, NULL), 0,
		  "inodes: the file's lookups hold the record");
	inodes_forget(in, ino, 4);
	check_int(inodes_node(in, node_id(&p), &g, NULL), -ENOENT,
		  "inodes: the last forgotten, the record goes");
	check(inodes_in_use(in) == 0 &&
		      inodes_attr(in, ino, &g, &og, &size) == -ENOENT,
	      "inodes: and every entry of its nodes with it");
	/* Another task takes the index: none of the first reaches it. */
	q = (struct node){ .kind = K_TGID, .view = 7, .num = { 52 } };
	t.start = 400;
	check_int(inodes_name(in, &q, &t, NULL, NULL), 0,
		  "inodes: another process");
	check(q.rec == p.rec, "inodes: at the freed index");
	check_int(tree_child(&q, "cycles", &f), 0, "inodes: its cycles");
	check(!inodes_checked(in, &q, &og) && !inodes_retake(in, &f, 100),
	      "inodes: no checked path, no content of the first");
	/* A file of a record that went: ENOENT, its content the caller's. */
	inodes_forget(in, node_id(&q), 1);
	text = text_of("7\n");
	check_int(inodes_lookup(in, &f, &o, 100, text, NULL, NULL, &ino, &size,
				&idle),
		  -ENOENT, "inodes: a file of a gone record: ENOENT");
	free_text(text);
	check(inodes_records(in) == 0 && inodes_in_use(in) == 0,
	      "inodes: nothing left");
	inodes_free(in);
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
	test_reap(vs);
	test_bounds();
	test_records(vs);
	test_inode_files(vs);
	views_free(vs);
	return tap_done();
}
