/*
 * fs: the mounted tree, as one declarative table of entries.
 *
 * fs_tree[] lists every kind of node: its directory, its name, and
 * what it is: a directory, a file with the function that renders it,
 * a symlink with the function that computes its target, or a family of
 * numbered directories (groups, processors, processes, threads) with
 * the functions that check and list them. A new file is one line, in
 * the spirit of the kernel's fs/proc/base.c; the task files are one
 * list of lines shared by processes and threads, served by one engine
 * call, engine_task_times() with a tid of 0 for the whole process.
 *
 * An inode number is the node's kind and the numbers met on its path:
 *
 *	bits  0..7   kind, the index in fs_tree[] (the root is 1)
 *	bits  8..35  num[0]: the group N, or the PID
 *	bits 36..63  num[1]: the processor M, or the TID
 *
 * so any request can be served from its inode number alone. A file's
 * content is rendered when it is opened into a per-open snapshot, and
 * every read, at any offset and of any size, is served from it until
 * release. A directory's listing is made at opendir the same way.
 * Errors are -errno internally, passed straight through from the
 * engine, and replied as errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "render.h"

#define DIR_MODE (S_IFDIR | 0555)
#define FILE_MODE (S_IFREG | 0444)
#define LINK_MODE (S_IFLNK | 0777)

#define KIND_BITS 8
#define NUM_BITS 28
#define NUM_MAX ((1U << NUM_BITS) - 1) /* above any pid_max */

/* A node: its kind, and the numbers met on its path. */
struct fs_node {
	unsigned int kind;
	uint32_t num[2];
};

/* Who owns a node: the daemon, or below proc/PID the process. */
struct fs_owner {
	uid_t uid;
	gid_t gid;
};

/* A directory listing being made, or made: the bytes readdir serves. */
struct fs_listing {
	fuse_req_t req;
	struct rbuf entries;
	struct fs_node child; /* the numbered child being added */
	unsigned int slot;
};

typedef int (*fs_task_fn)(struct rbuf *b, enum units units,
			  const struct task_times *t);
typedef int (*fs_show_fn)(struct engine *e, const struct fs_node *n,
			  struct rbuf *b);
typedef int (*fs_link_fn)(struct engine *e, pid_t caller, char *buf,
			  size_t size);
typedef int (*fs_check_fn)(struct engine *e, const struct fs_node *n,
			   struct fs_owner *owner);
typedef int (*fs_list_fn)(struct engine *e, const struct fs_node *dir,
			  struct fs_listing *l);

/*
 * One kind of node. A numbered directory has no name: its names are
 * PREFIX and a canonical decimal, and check() says whether the number
 * in num[slot] exists now (and may set the owner).
 */
struct fs_entry {
	unsigned int parent; /* the kind of its directory */
	const char *name;
	mode_t mode;
	fs_task_fn task; /* a file of a task's times, */
	unsigned int need; /* what it needs of them (enum task_need) */
	fs_show_fn show; /* any other file */
	fs_link_fn link; /* a symlink: its target for the caller */
	const char *prefix; /* a numbered directory: */
	unsigned int slot;
	fs_check_fn check;
	fs_list_fn list;
};

/* The daemon's ids, and when the tree was mounted: set in init(),
 * before any other request is served, and read-only after. */
static struct fs_owner fs_daemon;
static struct timespec fs_mount_time;

/* ---- file contents ---------------------------------------------- */

static unsigned int node_group(const struct fs_node *n)
{
	return n->num[0];
}

static unsigned int node_cpu(const struct fs_node *n)
{
	return n->num[1];
}

static pid_t node_pid(const struct fs_node *n)
{
	return (pid_t)n->num[0];
}

/* The thread, or 0 for the process itself. */
static pid_t node_tid(const struct fs_node *n)
{
	return (pid_t)n->num[1];
}

static int show_info(struct engine *e, const struct fs_node *n, struct rbuf *b)
{
	struct engine_info info;

	(void)n;
	engine_get_info(e, &info);
	return render_info(b, TIMINGFS_VERSION, &info);
}

static int show_group_cpus(struct engine *e, const struct fs_node *n,
			   struct rbuf *b)
{
	unsigned int m, size = engine_group_size(e, node_group(n));
	uint64_t online;
	size_t count = 0;
	int cpus[64], ret;

	ret = engine_group_online(e, node_group(n), &online);
	if (ret < 0)
		return ret;
	for (m = 0; m < size && m < 64; m++) {
		if (!(online & (1ULL << m)))
			continue;
		ret = engine_group_cpu(e, node_group(n), m);
		if (ret < 0)
			return ret;
		cpus[count++] = ret;
	}
	return render_cpulist(b, cpus, count);
}

static int show_group_idle(struct engine *e, const struct fs_node *n,
			   struct rbuf *b)
{
	uint64_t mask, cycles[64];
	int ret;

	ret = engine_group_idle_cycles(e, node_group(n), &mask, cycles);
	if (ret < 0)
		return ret;
	return render_idle_cycles(b, mask, cycles);
}

static int show_cpu_idle(struct engine *e, const struct fs_node *n,
			 struct rbuf *b)
{
	uint64_t mask, cycles[64];
	int ret;

	ret = engine_group_idle_cycles(e, node_group(n), &mask, cycles);
	if (ret < 0)
		return ret;
	if (!(mask & (1ULL << node_cpu(n))))
		return -ENOENT; /* went offline since the lookup */
	return render_value(b, cycles[node_cpu(n)]);
}

static int show_cpu_number(struct engine *e, const struct fs_node *n,
			   struct rbuf *b)
{
	int cpu = engine_group_cpu(e, node_group(n), node_cpu(n));

	return cpu < 0 ? cpu : render_value(b, (uint64_t)cpu);
}

/* ---- symlinks ----------------------------------------------------- */

/*
 * The process of the calling thread, as the engine sees it. A caller
 * in a PID namespace the daemon cannot see has pid 0.
 */
static int caller_ident(struct engine *e, pid_t caller, struct task_ident *id)
{
	if (caller <= 0)
		return -ENOENT;
	return engine_task_ident(e, caller, 0, id);
}

static int link_self(struct engine *e, pid_t caller, char *buf, size_t size)
{
	struct task_ident id;
	int ret = caller_ident(e, caller, &id);

	if (ret < 0)
		return ret;
	snprintf(buf, size, "%d", (int)id.tgid);
	return 0;
}

static int link_current_group(struct engine *e, pid_t caller, char *buf,
			      size_t size)
{
	struct task_ident id;
	unsigned int group, m;
	int ret;

	ret = caller_ident(e, caller, &id);
	if (ret < 0)
		return ret;
	/* The kernel said it ran there: a CPU we do not know is a bug. */
	if (engine_cpu_group(e, id.cpu, &group, &m) < 0)
		return -EIO;
	snprintf(buf, size, "%u", group);
	return 0;
}

/* ---- numbered directories ----------------------------------------- */

static int listing_add(struct fs_listing *l, const char *name, fuse_ino_t ino,
		       mode_t mode);
static fuse_ino_t node_ino(const struct fs_node *n);

/* Add the numbered child @v, named PREFIX@v, to the listing. */
static int list_number(struct fs_listing *l, const char *prefix,
		       unsigned long v)
{
	char name[32];

	if (v > NUM_MAX)
		return 0;
	l->child.num[l->slot] = (uint32_t)v;
	snprintf(name, sizeof(name), "%s%lu", prefix, v);
	return listing_add(l, name, node_ino(&l->child), DIR_MODE);
}

static int check_group(struct engine *e, const struct fs_node *n,
		       struct fs_owner *owner)
{
	(void)owner;
	return node_group(n) < engine_group_count(e) ? 0 : -ENOENT;
}

static int list_groups(struct engine *e, const struct fs_node *dir,
		       struct fs_listing *l)
{
	unsigned int g;
	int ret;

	(void)dir;
	for (g = 0; g < engine_group_count(e); g++) {
		ret = list_number(l, "", g);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* cpuM: M below the group's size, and online now. */
static int check_cpu(struct engine *e, const struct fs_node *n,
		     struct fs_owner *owner)
{
	uint64_t online;
	int ret;

	(void)owner;
	if (node_cpu(n) >= engine_group_size(e, node_group(n)) ||
	    node_cpu(n) >= 64)
		return -ENOENT;
	ret = engine_group_online(e, node_group(n), &online);
	if (ret < 0)
		return ret;
	return (online & (1ULL << node_cpu(n))) ? 0 : -ENOENT;
}

static int list_cpus(struct engine *e, const struct fs_node *dir,
		     struct fs_listing *l)
{
	unsigned int m, size = engine_group_size(e, node_group(dir));
	uint64_t online;
	int ret;

	ret = engine_group_online(e, node_group(dir), &online);
	if (ret < 0)
		return ret;
	for (m = 0; m < size && m < 64; m++) {
		if (!(online & (1ULL << m)))
			continue;
		ret = list_number(l, "cpu", m);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* A process: a thread-group leader that exists, owned as procfs says. */
static int check_pid(struct engine *e, const struct fs_node *n,
		     struct fs_owner *owner)
{
	struct task_ident id;
	int ret;

	if (node_pid(n) <= 0)
		return -ENOENT;
	ret = engine_task_ident(e, node_pid(n), 0, &id);
	if (ret < 0)
		return ret;
	if (id.tgid != node_pid(n))
		return -ENOENT; /* a thread, which /proc also resolves */
	owner->uid = id.uid;
	owner->gid = id.gid;
	return 0;
}

/* The callback of the engine's iterations: one numbered child. */
static int list_task(void *ctx, pid_t id)
{
	return list_number(ctx, "", (unsigned long)id);
}

static int list_pids(struct engine *e, const struct fs_node *dir,
		     struct fs_listing *l)
{
	(void)dir;
	return engine_for_each_process(e, list_task, l);
}

/* A thread of the process met on the way. */
static int check_tid(struct engine *e, const struct fs_node *n,
		     struct fs_owner *owner)
{
	struct task_ident id;
	int ret;

	(void)owner; /* the process's, as for proc/PID/task/TID */
	if (node_tid(n) <= 0)
		return -ENOENT;
	ret = engine_task_ident(e, node_pid(n), node_tid(n), &id);
	if (ret < 0)
		return ret;
	return id.tgid == node_pid(n) ? 0 : -ENOENT;
}

static int list_tids(struct engine *e, const struct fs_node *dir,
		     struct fs_listing *l)
{
	return engine_for_each_thread(e, node_pid(dir), list_task, l);
}

/* ---- the tree ----------------------------------------------------- */

enum {
	K_NONE, /* no inode 0 */
	K_ROOT, /* inode 1, FUSE_ROOT_ID */
	K_GROUPS,
	K_GROUP,
	K_CPU,
	K_PROC,
	K_TGID,
	K_THREADS,
	K_TID,
};

#define E_DIR(PARENT, NAME)                                       \
	{                                                         \
		.parent = PARENT, .name = NAME, .mode = DIR_MODE, \
	}
#define E_NUMBERED(PARENT, PREFIX, SLOT, CHECK, LIST)                 \
	{                                                             \
		.parent = PARENT, .mode = DIR_MODE, .prefix = PREFIX, \
		.slot = SLOT, .check = CHECK, .list = LIST,           \
	}
#define E_FILE(PARENT, NAME, SHOW)                                 \
	{                                                          \
		.parent = PARENT, .name = NAME, .mode = FILE_MODE, \
		.show = SHOW,                                      \
	}
#define E_TASK(PARENT, NAME, RENDER, NEED)                         \
	{                                                          \
		.parent = PARENT, .name = NAME, .mode = FILE_MODE, \
		.task = RENDER, .need = NEED,                      \
	}
#define E_LINK(PARENT, NAME, TARGET)                               \
	{                                                          \
		.parent = PARENT, .name = NAME, .mode = LINK_MODE, \
		.link = TARGET,                                    \
	}

/* The files of a task, the same for a process and for a thread. */
#define TASK_FILES(PARENT)                                                     \
	E_TASK(PARENT, "cycles", render_cycles, TASK_CPU),                     \
		E_TASK(PARENT, "kernel_time", render_kernel_time, TASK_SPLIT), \
		E_TASK(PARENT, "user_time", render_user_time, TASK_SPLIT),     \
		E_TASK(PARENT, "creation_time", render_creation_time,          \
		       TASK_START),                                            \
		E_TASK(PARENT, "exit_time", render_exit_time, TASK_START),     \
		E_TASK(PARENT, "times", render_times, TASK_ALL)

static const struct fs_entry fs_tree[] = {
	/* The directories, at the kinds named above. */
	[K_ROOT] = E_DIR(K_NONE, ""),
	[K_GROUPS] = E_DIR(K_ROOT, "groups"),
	[K_GROUP] = E_NUMBERED(K_GROUPS, "", 0, check_group, list_groups),
	[K_CPU] = E_NUMBERED(K_GROUP, "cpu", 1, check_cpu, list_cpus),
	[K_PROC] = E_DIR(K_ROOT, "proc"),
	[K_TGID] = E_NUMBERED(K_PROC, "", 0, check_pid, list_pids),
	[K_THREADS] = E_DIR(K_TGID, "threads"),
	[K_TID] = E_NUMBERED(K_THREADS, "", 1, check_tid, list_tids),
	/* Files and links. */
	E_FILE(K_ROOT, "info", show_info),
	E_LINK(K_GROUPS, "current", link_current_group),
	E_FILE(K_GROUP, "cpus", show_group_cpus),
	E_FILE(K_GROUP, "idle_cycles", show_group_idle),
	E_FILE(K_CPU, "idle_cycles", show_cpu_idle),
	E_FILE(K_CPU, "cpu", show_cpu_number),
	E_LINK(K_PROC, "self", link_self),
	TASK_FILES(K_TGID),
	TASK_FILES(K_TID),
};

#define FS_KINDS (sizeof(fs_tree) / sizeof(fs_tree[0]))
_Static_assert(FS_KINDS <= (1U << KIND_BITS), "kinds fit in an inode");

/* ---- nodes and inode numbers ---------------------------------------- */

static const struct fs_entry *node_entry(const struct fs_node *n)
{
	return &fs_tree[n->kind];
}

static fuse_ino_t node_ino(const struct fs_node *n)
{
	return (fuse_ino_t)n->kind | (fuse_ino_t)n->num[0] << KIND_BITS |
	       (fuse_ino_t)n->num[1] << (KIND_BITS + NUM_BITS);
}

/* The node of an inode number the kernel gave us; -ENOENT if none. */
static int node_of(fuse_ino_t ino, struct fs_node *n)
{
	n->kind = (unsigned int)(ino & ((1U << KIND_BITS) - 1));
	n->num[0] = (uint32_t)(ino >> KIND_BITS) & NUM_MAX;
	n->num[1] = (uint32_t)(ino >> (KIND_BITS + NUM_BITS)) & NUM_MAX;
	if (n->kind <= K_NONE || n->kind >= FS_KINDS)
		return -ENOENT;
	return 0;
}

/*
 * Whether @n exists now: every numbered directory on its path is asked.
 * Sets the owner: the daemon's, or the process's below proc/PID.
 */
static int node_check(struct engine *e, const struct fs_node *n,
		      struct fs_owner *owner)
{
	unsigned int kind;
	int ret;

	*owner = fs_daemon;
	for (kind = n->kind; kind != K_ROOT; kind = fs_tree[kind].parent) {
		if (!fs_tree[kind].check)
			continue;
		ret = fs_tree[kind].check(e, n, owner);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/*
 * The owner of @n without the question whether it still exists: an
 * open file's inode answers after its task exited (then the daemon's).
 */
static void node_owner(struct engine *e, const struct fs_node *n,
		       struct fs_owner *owner)
{
	struct fs_node process = { K_TGID, { n->num[0], 0 } };
	unsigned int kind;

	*owner = fs_daemon;
	for (kind = n->kind; kind != K_ROOT; kind = fs_tree[kind].parent) {
		if (kind != K_TGID)
			continue;
		if (check_pid(e, &process, owner) < 0)
			*owner = fs_daemon; /* gone, or not a process */
		return;
	}
}

static void node_stat(const struct fs_node *n, const struct fs_owner *owner,
		      struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = node_ino(n);
	st->st_mode = node_entry(n)->mode;
	st->st_nlink = S_ISDIR(st->st_mode) ? 2 : 1;
	st->st_uid = owner->uid;
	st->st_gid = owner->gid;
	st->st_size = 0; /* unknown until rendered: read to end of file */
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = fs_mount_time;
}

/* A name is a number only in its one canonical decimal spelling. */
static int canonical_number(const char *s, uint32_t *v)
{
	uint64_t n = 0;
	const char *p;

	if (s[0] == '\0' || (s[0] == '0' && s[1] != '\0'))
		return -ENOENT;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -ENOENT;
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > NUM_MAX)
			return -ENOENT;
	}
	*v = (uint32_t)n;
	return 0;
}

/* The child @name of directory @dir, if its name fits an entry. */
static int node_child(const struct fs_node *dir, const char *name,
		      struct fs_node *child)
{
	const struct fs_entry *ent;
	size_t len;
	unsigned int k;

	for (k = K_ROOT + 1; k < FS_KINDS; k++) {
		ent = &fs_tree[k];
		if (ent->parent != dir->kind)
			continue;
		*child = *dir;
		child->kind = k;
		if (ent->name) {
			if (strcmp(ent->name, name) == 0)
				return 0;
			continue;
		}
		len = strlen(ent->prefix);
		if (strncmp(name, ent->prefix, len) == 0 &&
		    canonical_number(name + len, &child->num[ent->slot]) == 0)
			return 0;
	}
	return -ENOENT;
}

/* The parent of @n, for "..". */
static void node_parent(const struct fs_node *n, struct fs_node *parent)
{
	const struct fs_entry *ent = node_entry(n);

	*parent = *n;
	if (n->kind == K_ROOT)
		return;
	parent->kind = ent->parent;
	if (ent->check) /* leaving a numbered directory: forget its number */
		parent->num[ent->slot] = 0;
}

/* ---- listings ----------------------------------------------------- */

static int listing_add(struct fs_listing *l, const char *name, fuse_ino_t ino,
		       mode_t mode)
{
	struct stat st = { .st_ino = ino, .st_mode = mode };
	struct rbuf *b = &l->entries;
	size_t need;

	need = fuse_add_direntry(l->req, NULL, 0, name, NULL, 0);
	if (rbuf_reserve(b, need) < 0)
		return -ENOMEM;
	/* Each entry's offset is where the next one starts. */
	fuse_add_direntry(l->req, b->data + b->len, need, name, &st,
			  (off_t)(b->len + need));
	b->len += need;
	return 0;
}

/* The whole listing of @dir: ".", "..", its entries, its numbered ones. */
static int listing_make(struct engine *e, const struct fs_node *dir,
			struct fs_listing *l)
{
	const struct fs_entry *ent;
	struct fs_node parent, child;
	unsigned int k;
	int ret;

	node_parent(dir, &parent);
	ret = listing_add(l, ".", node_ino(dir), DIR_MODE);
	if (ret == 0)
		ret = listing_add(l, "..", node_ino(&parent), DIR_MODE);
	for (k = K_ROOT + 1; ret == 0 && k < FS_KINDS; k++) {
		ent = &fs_tree[k];
		if (ent->parent != dir->kind)
			continue;
		child = *dir;
		child.kind = k;
		if (ent->name) {
			ret = listing_add(l, ent->name, node_ino(&child),
					  ent->mode);
		} else {
			l->child = child;
			l->slot = ent->slot;
			ret = ent->list(e, dir, l);
		}
	}
	return ret < 0 ? ret : 0;
}

/* ---- operations --------------------------------------------------- */

static struct engine *req_engine(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/*
	 * The targets of proc/self and groups/current depend on the
	 * caller: the kernel must ask for them at every use.
	 */
	conn->want &= ~FUSE_CAP_CACHE_SYMLINKS;
	fs_daemon.uid = getuid();
	fs_daemon.gid = getgid();
	clock_gettime(CLOCK_REALTIME, &fs_mount_time);
}

static void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param ep;
	struct fs_node dir, n;
	struct fs_owner owner;
	int ret;

	ret = node_of(parent, &dir);
	if (ret == 0 && !S_ISDIR(node_entry(&dir)->mode))
		ret = -ENOTDIR;
	if (ret == 0)
		ret = node_child(&dir, name, &n);
	if (ret == 0)
		ret = node_check(req_engine(req), &n, &owner);
	if (ret < 0) {
		fuse_reply_err(req, -ret); /* negative entries are not cached */
		return;
	}
	memset(&ep, 0, sizeof(ep));
	ep.ino = node_ino(&n);
	node_stat(&n, &owner, &ep.attr);
	ep.attr_timeout = FS_TIMEOUT_S;
	/*
	 * The dentry cache is shared by every caller. The shape of the
	 * tree is the same for all, so it may be cached; the links whose
	 * targets depend on the caller are looked up afresh each time.
	 */
	ep.entry_timeout = S_ISLNK(ep.attr.st_mode) ? 0 : FS_TIMEOUT_S;
	fuse_reply_entry(req, &ep);
}

static void fs_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fs_owner owner;
	struct stat st;
	struct fs_node n;

	(void)fi;
	if (node_of(ino, &n) < 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	node_owner(req_engine(req), &n, &owner);
	node_stat(&n, &owner, &st);
	fuse_reply_attr(req, &st, FS_TIMEOUT_S);
}

static void fs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char target[32];
	struct fs_node n;
	int ret;

	ret = node_of(ino, &n);
	if (ret == 0 && !node_entry(&n)->link)
		ret = -EINVAL;
	if (ret == 0)
		ret = node_entry(&n)->link(req_engine(req), ctx->pid, target,
					   sizeof(target));
	if (ret < 0)
		fuse_reply_err(req, -ret);
	else
		fuse_reply_readlink(req, target);
}

/* The file's content, now: a task's times (one engine call), or else. */
static int node_render(struct engine *e, const struct fs_node *n,
		       struct rbuf *b)
{
	const struct fs_entry *ent = node_entry(n);
	struct task_times t;
	int ret;

	if (ent->task) {
		ret = engine_task_times(e, node_pid(n), node_tid(n), ent->need,
					&t);
		return ret < 0 ? ret : ent->task(b, engine_units(e), &t);
	}
	if (ent->show)
		return ent->show(e, n, b);
	return S_ISDIR(ent->mode) ? -EISDIR : -EINVAL;
}

static void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_node n;
	struct rbuf *text;
	int ret;

	ret = node_of(ino, &n);
	if (ret < 0)
		goto out_err;
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
		ret = -EROFS;
		goto out_err;
	}
	text = malloc(sizeof(*text));
	if (!text) {
		ret = -ENOMEM;
		goto out_err;
	}
	rbuf_init(text);
	ret = node_render(req_engine(req), &n, text);
	if (ret < 0)
		goto out_free;
	fi->fh = (uint64_t)(uintptr_t)text;
	fi->direct_io = 1; /* size 0, content new at every open */
	fi->keep_cache = 0;
	if (fuse_reply_open(req, fi) != 0) {
		/* The opener was interrupted: no release will come. */
		rbuf_free(text);
		free(text);
	}
	return;

out_free:
	rbuf_free(text);
	free(text);
out_err:
	fuse_reply_err(req, -ret);
}

/*
 * Serve @size bytes at @off of a snapshot made at open, a file's text or
 * a directory's listing: any offset, any size. A listing's last entry
 * cut short is dropped by the kernel and asked for again.
 */
static void reply_snapshot(fuse_req_t req, const struct rbuf *b, size_t size,
			   off_t off)
{
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if ((uint64_t)off >= b->len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > b->len - (size_t)off)
		size = b->len - (size_t)off;
	fuse_reply_buf(req, b->data + off, size);
}

static void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)ino;
	reply_snapshot(req, (const struct rbuf *)(uintptr_t)fi->fh, size, off);
}

static void fs_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct rbuf *text = (struct rbuf *)(uintptr_t)fi->fh;

	(void)ino;
	rbuf_free(text);
	free(text);
	fuse_reply_err(req, 0);
}

static void listing_free(struct fs_listing *l)
{
	rbuf_free(&l->entries);
	free(l);
}

/* The listing is made here, once: readdir serves it at any offset. */
static void fs_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct engine *e = req_engine(req);
	struct fs_listing *l;
	struct fs_owner owner;
	struct fs_node n;
	int ret;

	ret = node_of(ino, &n);
	if (ret == 0 && !S_ISDIR(node_entry(&n)->mode))
		ret = -ENOTDIR;
	if (ret == 0)
		ret = node_check(e, &n, &owner);
	if (ret < 0) {
		fuse_reply_err(req, -ret);
		return;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	l->req = req;
	ret = listing_make(e, &n, l);
	l->req = NULL;
	if (ret < 0) {
		listing_free(l);
		fuse_reply_err(req, -ret);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)l;
	if (fuse_reply_open(req, fi) != 0)
		listing_free(l);
}

static void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	const struct fs_listing *l =
		(const struct fs_listing *)(uintptr_t)fi->fh;

	(void)ino;
	reply_snapshot(req, &l->entries, size, off);
}

static void fs_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	(void)ino;
	listing_free((struct fs_listing *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/*
 * Nothing here can be changed. The mount is read-only, so the kernel
 * refuses most changes itself; these answer when it is mounted rw.
 */
static void rofs(fuse_req_t req)
{
	fuse_reply_err(req, EROFS);
}

static void fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	(void)ino;
	(void)attr;
	(void)to_set;
	(void)fi;
	rofs(req); /* chmod, chown, truncate, utimens */
}

static void fs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)rdev;
	rofs(req);
}

static void fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	(void)parent;
	(void)name;
	(void)mode;
	rofs(req);
}

static void fs_remove(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)parent;
	(void)name;
	rofs(req); /* unlink, rmdir */
}

static void fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	(void)link;
	(void)parent;
	(void)name;
	rofs(req);
}

static void fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	(void)parent;
	(void)name;
	(void)newparent;
	(void)newname;
	(void)flags;
	rofs(req);
}

static void fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	(void)ino;
	(void)newparent;
	(void)newname;
	rofs(req);
}

static void fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	(void)buf;
	(void)size;
	(void)off;
	(void)fi;
	rofs(req);
}

static void fs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	(void)parent;
	(void)name;
	(void)mode;
	(void)fi;
	rofs(req);
}

static void fs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	(void)ino;
	(void)name;
	(void)value;
	(void)size;
	(void)flags;
	rofs(req);
}

static void fs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino;
	(void)name;
	rofs(req);
}

static const struct fuse_lowlevel_ops fs_ops = {
	.init = fs_init,
	.lookup = fs_lookup,
	/* No .forget: inodes are numbers, there is nothing to forget. */
	.getattr = fs_getattr,
	.readlink = fs_readlink,
	.open = fs_open,
	.read = fs_read,
	/* No .flush: the kernel then stops sending FLUSH at every close. */
	.release = fs_release,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.releasedir = fs_releasedir,
	.setattr = fs_setattr,
	.mknod = fs_mknod,
	.mkdir = fs_mkdir,
	.unlink = fs_remove,
	.rmdir = fs_remove,
	.symlink = fs_symlink,
	.rename = fs_rename,
	.link = fs_link,
	.write = fs_write,
	.create = fs_create,
	.setxattr = fs_setxattr,
	.removexattr = fs_removexattr,
};

const struct fuse_lowlevel_ops *fs_operations(void)
{
	return &fs_ops;
}
