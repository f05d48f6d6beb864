/*
 * unit-tree: the tree without a mount: inode numbers, naming, checking,
 * listing and rendering of nodes, for readers in different views, on
 * the fixture m2 (processes 100, threads 100-102, owner uid 1001 gid
 * 101; process 200 of root). argv[1] is t/fixtures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "tree.h"

static struct tree_env env;

static void open_env(const char *fixtures)
{
	char proc[PATH_MAX], sys[PATH_MAX], err[256];
	struct engine_opts o = { .group_max_size = 64,
				 .units = UNITS_WINDOWS,
				 .tsc_hz = 3000000000ULL,
				 .proc_root = proc,
				 .sys_root = sys };

	snprintf(proc, sizeof(proc), "%s/m2/proc", fixtures);
	snprintf(sys, sizeof(sys), "%s/m2/sys", fixtures);
	if (engine_new(&o, &env.engine, err, sizeof(err)) < 0 ||
	    views_new(NULL, &env.views, err, sizeof(err)) < 0) {
		printf("# setup: %s\n", err);
		exit(99);
	}
	env.access.hidepid = HIDEPID_OFF;
	env.access.gid = ACCESS_GID_NONE;
	env.uid = 7;
	env.gid = 8;
}

/* A view of the daemon's numbers that shows everything, or one owner. */
static struct view view_all = { .slot = VIEW_OWN,
				.only_uid = VIEW_ALL_UIDS,
				.identity = true,
				.nsfd = -1 };
static struct view view_uid1001 = { .slot = 5,
				    .only_uid = 1001,
				    .identity = true,
				    .nsfd = -1 };
static struct view view_nowhere = { .slot = VIEW_NOWHERE,
				    .only_uid = VIEW_ALL_UIDS,
				    .nowhere = true,
				    .nsfd = -1 };

static struct request reader(struct view *v)
{
	struct request r = { .env = &env, .view = v, .pid = 0 };

	return r;
}

/* Walk @path from the root, naming each step in view @v: 0, or -errno. */
static int walk(struct view *v, const char *path, struct node *n)
{
	char copy[256], *name, *save = NULL;
	struct node dir = { .kind = K_ROOT };
	int ret;

	*n = dir;
	snprintf(copy, sizeof(copy), "%s", path);
	for (name = strtok_r(copy, "/", &save); name;
	     name = strtok_r(NULL, "/", &save)) {
		ret = tree_child(&dir, name, n);
		if (ret < 0)
			return ret;
		if (tree_in_proc(n))
			n->view = v->slot;
		dir = *n;
	}
	return 0;
}

/* Walk and check @path for a reader of @v: 0, or -errno. */
static int lookup(struct view *v, const char *path, struct stat *st)
{
	struct request r = reader(v);
	struct node n;
	int ret;

	ret = walk(v, path, &n);
	return ret < 0 ? ret : tree_check(&r, &n, st);
}

static void test_inodes(void)
{
	struct node n = {
		255, VIEW_SLOTS - 1, { NODE_NUM_MAX, NODE_NUM_MAX }, 0
	};
	struct node back;

	node_of(node_ino(&n), &back);
	check(back.kind == 255 && back.view == VIEW_SLOTS - 1 &&
		      back.num[0] == NODE_NUM_MAX &&
		      back.num[1] == NODE_NUM_MAX,
	      "inode numbers: every field at its largest comes back");
	n = (struct node){ K_TID, 3, { 4194303, 1 }, 0 };
	node_of(node_ino(&n), &back);
	check(back.kind == K_TID && back.view == 3 && back.num[0] == 4194303 &&
		      back.num[1] == 1,
	      "inode numbers: a thread of the largest pid, in view 3");
	check_int(tree_node(0, &back), -ENOENT, "inode 0 names no node");
	check_int(tree_node(1, &back), 0, "inode 1 is the root");
	check_int(back.kind, K_ROOT, "inode 1 is the root's kind");
	check_int(tree_node(250, &back), -ENOENT, "no kind 250");
}

static void test_naming(void)
{
	struct node n;
	const char *bad[] = { "proc/0100",	"proc/+100",
			      "proc/-1",	"proc/1x",
			      "proc/4194304",	"proc/99999999999",
			      "groups/cpu0",	"groups/0/cpu",
			      "groups/0/cpu01", "groups/0/CPU1",
			      "Proc",		"proc/100/nothing" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_int(walk(&view_all, bad[i], &n), -ENOENT,
			  "naming: %s is no name", bad[i]);
	check_int(walk(&view_all, "info/x", &n), -ENOTDIR,
		  "naming: below a file is ENOTDIR");
	check_int(walk(&view_all, "proc/4194303", &n), 0,
		  "naming: the largest pid is a name");
	check_int(walk(&view_uid1001, "proc/100/threads/101/cycles", &n), 0,
		  "naming: a thread's file");
	check(n.num[0] == 100 && n.num[1] == 101 && n.view == 5,
	      "naming: its numbers and its view");
	check_int(walk(&view_uid1001, "groups/0/cpu1", &n), 0,
		  "naming: a processor");
	check(n.view == 0 && n.num[0] == 0 && n.num[1] == 1,
	      "naming: groups are the same in every view");
}

static void test_checking(void)
{
	struct stat st;

	check_int(lookup(&view_all, "proc/100", &st), 0, "proc/100 exists");
	check(st.st_uid == 1001 && st.st_gid == 101 &&
		      st.st_mode == (S_IFDIR | 0555),
	      "proc/100 belongs to its effective uid and gid");
	check_int(lookup(&view_all, "proc/101", &st), -ENOENT,
		  "proc/101 is a thread, not a process");
	check_int(lookup(&view_all, "proc/0", &st), -ENOENT,
		  "proc/0 is a name, but no process");
	check_int(lookup(&view_all, "proc/100/threads/101/times", &st), 0,
		  "a thread's times file");
	check(st.st_uid == 1001 && st.st_mode == (S_IFREG | 0444),
	      "a thread's file belongs to its process's owner");
	check_int(lookup(&view_all, "proc/200/threads/100", &st), -ENOENT,
		  "a thread of another process is ENOENT");
	check_int(lookup(&view_all, "groups/0/cpu1/cpu", &st), 0,
		  "groups/0/cpu1/cpu exists");
	check(st.st_uid == 7 && st.st_gid == 8,
	      "nodes outside proc/PID belong to the daemon");
	check_int(lookup(&view_all, "groups/1", &st), -ENOENT,
		  "groups/1 does not exist on two CPUs");
	check_int(lookup(&view_uid1001, "proc/100/cycles", &st), 0,
		  "invisible: the owner's own process is there");
	check_int(lookup(&view_uid1001, "proc/200", &st), -ENOENT,
		  "invisible: root's process does not exist for uid 1001");
	check_int(lookup(&view_nowhere, "proc/100", &st), -ENOENT,
		  "nowhere: no process exists");
	check_int(lookup(&view_nowhere, "proc", &st), 0,
		  "nowhere: proc/ itself is there");
}

static void test_noaccess(void)
{
	struct stat st;

	env.access.hidepid = HIDEPID_NOACCESS;
	check_int(lookup(&view_all, "proc/100", &st), 0,
		  "noaccess: proc/100 exists");
	check(st.st_mode == (S_IFDIR | 0500) && st.st_gid == 101,
	      "noaccess without gid: 0500, the owner's group");
	env.access.gid = 4242;
	lookup(&view_all, "proc/100", &st);
	check(st.st_mode == (S_IFDIR | 0550) && st.st_gid == 4242 &&
		      st.st_uid == 1001,
	      "noaccess with gid: 0550, the exempt group");
	lookup(&view_all, "proc/100/cycles", &st);
	check(st.st_mode == (S_IFREG | 0444),
	      "noaccess: the files inside keep their mode");
	env.access.hidepid = HIDEPID_OFF;
	env.access.gid = ACCESS_GID_NONE;
}

struct names {
	char text[512];
};

static int add_name(void *sink, const char *name, uint64_t ino, mode_t mode)
{
	struct names *names = sink;
	struct node n;

	node_of(ino, &n);
	snprintf(names->text + strlen(names->text),
		 sizeof(names->text) - strlen(names->text), "%s%s:%u%s",
		 names->text[0] ? " " : "", name, n.view,
		 S_ISDIR(mode) ? "/" : "");
	return 0;
}

static const char *listing(struct view *v, const char *path)
{
	static struct names names;
	struct request r = reader(v);
	struct node n;

	names.text[0] = '\0';
	if (walk(v, path, &n) < 0 || tree_list(&r, &n, add_name, &names) < 0)
		return "(error)";
	return names.text;
}

static void test_listing(void)
{
	check_str(listing(&view_all, "proc"),
		  ".:0/ ..:0/ 100:0/ 200:0/ self:0 table:0",
		  "proc/: both processes, in the reader's view");
	check_str(listing(&view_uid1001, "proc"),
		  ".:5/ ..:0/ 100:5/ self:5 table:5",
		  "proc/ for uid 1001 under invisible: its own, view 5");
	check_str(listing(&view_nowhere, "proc"), ".:1/ ..:0/ self:1 table:1",
		  "proc/ for a reader nowhere: empty");
	check(strstr(listing(&view_all, "proc/100/threads"), " 100:0/") &&
		      strstr(listing(&view_all, "proc/100/threads"),
			     " 101:0/") &&
		      strstr(listing(&view_all, "proc/100/threads"), " 102:0/"),
	      "threads/: every thread");
	check_str(listing(&view_all, "groups/0"),
		  ".:0/ ..:0/ cpu0:0/ cpu1:0/ cpus:0 idle_cycles:0",
		  "groups/0: processors, then files");
}

static void test_render(void)
{
	struct request r = reader(&view_all);
	struct rbuf b;
	struct node n;

	rbuf_init(&b);
	walk(&view_all, "proc/100/threads/101/cycles", &n);
	check_int(tree_render(&r, &n, &b), 0, "render a thread's cycles");
	rbuf_free(&b);
	r.view = &view_nowhere;
	check_int(tree_render(&r, &n, &b), -ENOENT,
		  "the same node for a reader nowhere: ENOENT");
	r.view = &view_all;
	tree_render(&r, &n, &b);
	check_str(b.data ? b.data : "", "7500\n",
		  "a thread's cycles: 2500 ns at 3 GHz");
	rbuf_free(&b);
	walk(&view_all, "proc", &n);
	check_int(tree_render(&r, &n, &b), -EISDIR, "a directory is EISDIR");
	walk(&view_all, "proc/self", &n);
	check_int(tree_readlink(&r, &n, (char[32]){ 0 }, 32), -ENOENT,
		  "proc/self of a reader the daemon cannot place: ENOENT");
	walk(&view_all, "info", &n);
	check_int(tree_readlink(&r, &n, (char[32]){ 0 }, 32), -EINVAL,
		  "readlink of a file: EINVAL");
	rbuf_free(&b);
}

/* Entries of 24, 40, 32 and 280 bytes; the last ends at 376. */
static void test_offsets(void)
{
	static const uint64_t start[] = { 0, 24, 64, 96, 376 };
	size_t from, len;
	int64_t off;
	int ok = 1;

	tree_listing_slice(start, 4, 0, 4096, &from, &len);
	check(from == 0 && len == 376, "offset 0: every entry");
	tree_listing_slice(start, 4, 1, 4096, &from, &len);
	check(from == 24 && len == 352, "offset 1: from the second entry");
	tree_listing_slice(start, 4, 3, 4096, &from, &len);
	check(from == 96 && len == 280, "offset 3: the last entry");
	tree_listing_slice(start, 4, 0, 100, &from, &len);
	check(from == 0 && len == 96, "100 bytes: the three entries that fit");
	tree_listing_slice(start, 4, 0, 63, &from, &len);
	check(from == 0 && len == 24, "63 bytes: only the first, whole");
	for (off = 4; off < 100000; off = off * 3 + 1) {
		tree_listing_slice(start, 4, off, 4096, &from, &len);
		ok &= len == 0;
	}
	tree_listing_slice(start, 4, INT64_MAX, 4096, &from, &len);
	ok &= len == 0;
	tree_listing_slice(start, 4, -1, 4096, &from, &len);
	ok &= len == 0;
	check(ok, "at or past the end, or negative: nothing");
	for (off = 0, ok = 1; off < 4; off++) {
		tree_listing_slice(start, 4, off, 4096, &from, &len);
		ok &= from == start[off] && from + len == start[4];
	}
	check(ok, "every offset below the end starts on an entry");
}

/* jobs/: named as cgroups (their ids) in the reader's view; with no
 * hierarchy here (a fixture), there is none. */
static void test_jobs(void)
{
	struct node root = { .kind = K_ROOT }, jobs, n, p;
	struct request r = reader(&view_all);
	struct stat st;

	node_set_job(&n, JOBS_ID_MAX);
	check_u64(node_job(&n), JOBS_ID_MAX, "jobs: a 44-bit id fits a node");
	check_int(tree_child(&root, "jobs", &jobs), 0, "jobs: a name");
	check(jobs.kind == K_JOB && tree_in_jobs(&jobs) && !tree_in_proc(&jobs),
	      "jobs: a job's directory, not below proc/");
	jobs.view = 5;
	node_set_job(&jobs, 77);
	check_int(tree_child(&jobs, "cycles", &n), 0, "jobs: a job's file");
	check(n.kind != K_JOB && tree_in_jobs(&n) && n.view == 5 &&
		      node_job(&n) == 77,
	      "jobs: its file keeps its view and id");
	check_int(tree_child(&jobs, "docker", &n), 0, "jobs: a cgroup's name");
	check(n.kind == K_JOB && node_job(&n) == 0 && n.view == 5,
	      "jobs: a cgroup, its id for the reader to find");
	check_int(tree_child(&jobs, "..", &n), -ENOENT,
		  "jobs: .. is no cgroup");
	tree_parent(&jobs, &p);
	check(p.kind == K_ROOT && p.view == 0, "jobs: the root above");
	n = jobs;
	n.view = 6;
	check(node_ino(&n) != node_ino(&jobs), "jobs: two views, two inodes");
	check(!strstr(listing(&view_all, ""), "jobs"),
	      "jobs: none in the root without a hierarchy");
	check_int(tree_job_child(&r, &root, "jobs", &jobs), -ENOENT,
		  "jobs: no jobs/ without a hierarchy");
	check_int(lookup(&view_all, "proc/100/job", &st), -ENOENT,
		  "jobs: no proc/PID/job without a hierarchy");
	check(!strstr(listing(&view_all, "proc/100"), "job:"),
	      "jobs: nor in its listing");
}

int main(int argc, char **argv)
{
	open_env(argc > 1 ? argv[1] : "t/fixtures");
	test_inodes();
	test_naming();
	test_checking();
	test_noaccess();
	test_listing();
	test_render();
	test_offsets();
	test_jobs();
	engine_free(env.engine);
	views_free(env.views);
	return tap_done();
}
