/*
 * unit-view: PID namespaces and the table of views, against the real
 * kernel: the daemon's own view, a reader it cannot place, one owner's
 * view, and a child made in a new PID namespace (as root), whose
 * numbers are translated both ways and compared with its NSpid line.
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
	views_free(vs);
	return tap_done();
}
