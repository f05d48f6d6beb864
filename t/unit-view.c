/*
 * unit-view: PID namespaces and the table of views, against the real
 * kernel: the daemon's own view, a reader it cannot place, one owner's
 * view, and a child made in a new PID namespace (as root), whose
 * numbers are translated both ways and compared with its NSpid line;
 * and the table of inodes the kernel holds (inode.h), which keeps the
 * task each was and holds the view slots they are named in.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "held.h"
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

/* held_gone()'s question, of this machine: no thread @tid in @pid. */
static bool proc_gone(void *ctx, pid_t pid, pid_t tid)
{
	char path[64];

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid,
		 (int)(tid ? tid : pid));
	return access(path, F_OK) != 0 && errno == ENOENT;
}

static void test_held(struct views *vs)
{
	struct held *h = NULL;
	uint64_t start = 0;
	bool replaced = true;
	unsigned int i;

	check_int(held_new(vs, &h), 0, "held: a table");
	check_int(held_start(h, 1234, &start, NULL), -ENOENT,
		  "held: unknown: ENOENT");
	check_int(held_add(h, 1234, 7, 100, 0, 0, 0, &replaced), 0,
		  "held: a lookup");
	check(!replaced, "held: a first lookup replaces nothing");
	check_int(held_add(h, 1234, 7, 100, 0, 0, 0, &replaced), 0,
		  "held: another");
	check(!replaced, "held: the same task replaces nothing");
	check(views_held(vs, 7) == 1, "held: one inode holds its slot");
	check_int(held_start(h, 1234, &start, NULL), 0, "held: known");
	check(start == 100, "held: its start");
	check_int(held_add(h, 1234, 7, 200, 0, 0, 0, &replaced), 0,
		  "held: a new task");
	check(replaced, "held: another start replaces the inode");
	held_forget(h, 1234, 2);
	check_int(held_start(h, 1234, &start, NULL), 0,
		  "held: held while one lookup is left");
	check(start == 200 && views_held(vs, 7) == 1,
	      "held: the new start, the slot still held");
	held_forget(h, 1234, 1);
	check_int(held_start(h, 1234, &start, NULL), -ENOENT,
		  "held: the last lookup forgotten: gone");
	check(views_held(vs, 7) == 0, "held: and its slot is free");
	held_forget(h, 999, 1); /* unknown: ignored */
	for (i = 0; i < 5000; i++)
		held_add(h, 1000000 + i, 9, i + 1, 0, 0, 0, NULL);
	check(held_count(h) == 5000 && views_held(vs, 9) == 5000,
	      "held: 5000 inodes, all counted in their slot");
	for (i = 0; i < 5000; i++)
		held_forget(h, 1000000 + i, 1);
	check(held_count(h) == 0 && views_held(vs, 9) == 0,
	      "held: all forgotten, the slot free");
	{
		struct node n = { .kind = K_TGID, .view = 9, .num = { 41 } };
		struct node gone[4];
		pid_t child = fork();

		if (child == 0)
			_exit(0);
		waitpid(child, NULL, 0);
		held_add(h, node_ino(&n), 9, 1, child, 0, 0, NULL);
		n.num[0] = 42;
		held_add(h, node_ino(&n), 9, 1, getpid(), 0, 0, NULL);
		n.num[0] = 43;
		held_add(h, node_ino(&n), 9, 1, 0, 0, 0, NULL);
		check(held_gone(h, proc_gone, NULL, gone, 4) == 1 &&
			      gone[0].kind == K_TGID && gone[0].num[0] == 41 &&
			      gone[0].view == 9,
		      "held: the directory of an exited task is found gone, "
		      "a live one's and an unknown one's not");
		for (i = 41; i <= 43; i++) {
			n.num[0] = i;
			held_forget(h, node_ino(&n), 1);
		}
	}
	{
		bool cached = false;

		held_add(h, 77, 9, 5, 0, 0, 60000, NULL);
		held_add(h, 78, 9, 5, 0, 0, 0, NULL);
		usleep((HELD_CACHE_SLACK_MS + 20) * 1000);
		check(held_start(h, 77, &start, &cached) == 0 && cached,
		      "held: a name the kernel may still walk through: cached");
		check(held_start(h, 78, &start, &cached) == 0 && !cached,
		      "held: one of entry timeout 0, past the slack: not");
		held_forget(h, 77, 1);
		held_forget(h, 78, 1);
	}
	check(held_generation(100, 0) != held_generation(200, 0) &&
		      held_generation(100, 5) ==
			      (uint32_t)(held_generation(100, 0) + 5) &&
		      held_generation(0, 5) == 5,
	      "held: generations differ by start, add the extra");
	held_free(h);
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
	test_held(vs);
	views_free(vs);
	return tap_done();
}
