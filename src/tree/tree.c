/*
 * tree: the table of the mounted tree, and the operations on its nodes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "decimal.h"
#include "tree.h"

#define DIR_MODE (S_IFDIR | 0555)
#define FILE_MODE (S_IFREG | 0444)
#define LINK_MODE (S_IFLNK | 0777)

typedef int (*show_fn)(struct request *r, const struct node *n, struct rbuf *b);
typedef int (*link_fn)(struct request *r, char *buf, size_t size);
typedef int (*node_link_fn)(struct request *r, const struct node *n, char *buf,
			    size_t size);
typedef int (*check_fn)(struct request *r, const struct node *n,
			struct owner *o);
typedef int (*list_fn)(struct request *r, const struct node *dir,
		       struct listing *l);

/*
 * One kind of node. A numbered directory has no name: its names are
 * PREFIX and a canonical decimal, and check() says whether the number
 * in num[slot] exists now (and may set the owner).
 */
struct entry {
	unsigned int parent; /* the kind of its directory */
	const char *name;
	mode_t mode;
	/* A file of a task's times: one value of the catalogue, or all
	 * of them (the times file); what it needs (enum task_need). */
	const struct task_value *value;
	bool times;
	unsigned int need;
	/* A file of a job: one value of its catalogue, or all of them. */
	const struct job_value *job;
	bool job_times;
	show_fn show; /* any other file */
	link_fn link; /* a symlink: its target for the reader */
	node_link_fn node_link; /* or for the reader and the link's node */
	const char *prefix; /* a numbered directory: */
	unsigned int slot;
	check_fn check;
	list_fn list;
	bool grows; /* as long as the tasks it lists: a table, proc/, threads/ */
};

#define E_DIR(PARENT, NAME)                                       \
	{                                                         \
		.parent = PARENT, .name = NAME, .mode = DIR_MODE, \
	}
#define E_TASKS_DIR(PARENT, NAME)                                 \
	{                                                         \
		.parent = PARENT, .name = NAME, .mode = DIR_MODE, \
		.grows = true,                                    \
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
#define E_TABLE(PARENT, NAME, SHOW)                                \
	{                                                          \
		.parent = PARENT, .name = NAME, .mode = FILE_MODE, \
		.show = SHOW, .grows = true,                       \
	}
#define E_VALUE(PARENT, NAME, NEED, FORM, FIELD, IN) \
	{ .parent = PARENT,                          \
	  .name = #NAME,                             \
	  .mode = FILE_MODE,                         \
	  .value = &task_values[VALUE_##NAME],       \
	  .need = NEED },
#define E_TIMES(PARENT)                                                  \
	{                                                                \
		.parent = PARENT, .name = "times", .mode = FILE_MODE,    \
		.times = true, .need = TASK_VALUES_NEED(VALUE_IN_TIMES), \
	}
#define E_LINK(PARENT, NAME, TARGET)                               \
	{                                                          \
		.parent = PARENT, .name = NAME, .mode = LINK_MODE, \
		.link = TARGET,                                    \
	}

/* jobs/ and every cgroup below it: a directory of K_JOB (tree_child()),
 * which check says exists for the reader; list adds them. A link whose
 * node says its target may say whether it exists (check). */
#define E_JOBS(PARENT, NAME)                                      \
	{                                                         \
		.parent = PARENT, .name = NAME, .mode = DIR_MODE, \
		.check = check_job, .list = list_jobs,            \
	}
#define E_JOB_VALUE(PARENT, NAME, FORM, FIELD) \
	{ .parent = PARENT,                    \
	  .name = #NAME,                       \
	  .mode = FILE_MODE,                   \
	  .job = &job_values[JOB_VALUE_##NAME] },
#define E_JOB_TIMES(PARENT)                                           \
	{                                                             \
		.parent = PARENT, .name = "times", .mode = FILE_MODE, \
		.job_times = true,                                    \
	}
#define E_NODE_LINK(PARENT, NAME, TARGET, CHECK)                   \
	{                                                          \
		.parent = PARENT, .name = NAME, .mode = LINK_MODE, \
		.node_link = TARGET, .check = CHECK,               \
	}

/* The files of a job: one per value of its catalogue, and all of them. */
#define JOB_FILES(PARENT) JOB_VALUES(E_JOB_VALUE, PARENT) E_JOB_TIMES(PARENT)

/* The files of a task, the same for a process and for a thread: one
 * per value of the catalogue, and all of them in one. */
#define TASK_FILES(PARENT) TASK_VALUES(E_VALUE, PARENT) E_TIMES(PARENT)

static const struct entry tree[] = {
	/* The directories, at the kinds of enum node_kind. */
	[K_ROOT] = E_DIR(K_NONE, ""),
	[K_GROUPS] = E_DIR(K_ROOT, "groups"),
	[K_GROUP] = E_NUMBERED(K_GROUPS, "", 0, check_group, list_groups),
	[K_CPU] = E_NUMBERED(K_GROUP, "cpu", 1, check_cpu, list_cpus),
	[K_PROC] = E_TASKS_DIR(K_ROOT, "proc"),
	[K_TGID] = E_NUMBERED(K_PROC, "", 0, check_pid, list_pids),
	[K_THREADS] = E_TASKS_DIR(K_TGID, "threads"),
	[K_TID] = E_NUMBERED(K_THREADS, "", 1, check_tid, list_tids),
	[K_JOB] = E_JOBS(K_ROOT, "jobs"),
	/* Files and links. */
	E_FILE(K_ROOT, "info", show_info),
	E_LINK(K_GROUPS, "current", link_current_group),
	E_FILE(K_GROUP, "cpus", show_group_cpus),
	E_FILE(K_GROUP, "idle_cycles", show_group_idle),
	E_FILE(K_CPU, "idle_cycles", show_cpu_idle),
	E_FILE(K_CPU, "cpu", show_cpu_number),
	E_LINK(K_PROC, "self", link_self),
	E_TABLE(K_PROC, "table", show_table),
	E_TABLE(K_TGID, "threads.table", show_threads_table),
	TASK_FILES(K_TGID),
	TASK_FILES(K_TID),
	E_NODE_LINK(K_TGID, "job", link_job, check_job_link),
	JOB_FILES(K_JOB),
};

#define KINDS (sizeof(tree) / sizeof(tree[0]))
_Static_assert(KINDS <= (1U << NODE_KIND_BITS), "kinds fit in an inode");

static const struct entry *entry_of(const struct node *n)
{
	return &tree[n->kind];
}

unsigned int tree_kinds(void)
{
	return KINDS;
}

/* FNV-1a of @len bytes at @p onto @h. */
static uint64_t shape_add(uint64_t h, const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

uint64_t tree_shape(void)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	const char *name;
	unsigned int k;

	for (k = 0; k < KINDS; k++) {
		name = tree[k].name   ? tree[k].name :
		       tree[k].prefix ? tree[k].prefix :
					"";
		h = shape_add(h, name, strlen(name) + 1);
		h = shape_add(h, &tree[k].parent, sizeof(tree[k].parent));
		h = shape_add(h, &tree[k].mode, sizeof(tree[k].mode));
	}
	return h;
}

int tree_node(uint64_t ino, struct node *n)
{
	node_of(ino, n);
	if (n->kind <= K_NONE || n->kind >= KINDS || node_ino(n) != ino)
		return -ENOENT;
	return 0;
}

mode_t tree_mode(const struct node *n)
{
	return entry_of(n)->mode;
}

static bool kind_in_proc(unsigned int kind)
{
	for (; kind != K_ROOT && kind != K_NONE; kind = tree[kind].parent)
		if (kind == K_PROC)
			return true;
	return false;
}

bool tree_in_proc(const struct node *n)
{
	return kind_in_proc(n->kind);
}

static bool kind_in_jobs(unsigned int kind)
{
	return kind == K_JOB || tree[kind].parent == K_JOB;
}

bool tree_in_jobs(const struct node *n)
{
	return n->kind < KINDS && kind_in_jobs(n->kind);
}

/* Named in a view: its view slot is kept. */
static bool kind_in_view(unsigned int kind)
{
	return kind_in_proc(kind) || kind_in_jobs(kind);
}

/* Whether entry @k is a child of a directory of kind @dir: a cgroup's
 * directory holds cgroups too. */
static bool entry_in(unsigned int k, unsigned int dir)
{
	return tree[k].parent == dir || (k == K_JOB && dir == K_JOB);
}

/* A name is a number only in its one canonical decimal spelling. */
static int canonical_number(const char *s, uint32_t *v)
{
	uint64_t n;

	if (decimal_parse(s, NODE_NUM_MAX, &n) < 0)
		return -ENOENT;
	*v = (uint32_t)n;
	return 0;
}

int tree_child(const struct node *dir, const char *name, struct node *child)
{
	const struct entry *ent;
	size_t len;
	unsigned int k;

	if (!S_ISDIR(entry_of(dir)->mode))
		return -ENOTDIR;
	for (k = K_ROOT + 1; k < KINDS; k++) {
		ent = &tree[k];
		if (ent->parent != dir->kind)
			continue;
		*child = *dir;
		child->kind = k;
		if (!kind_in_view(k))
			child->view = 0;
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
	/* Any other name in a cgroup's directory: a cgroup, its id not
	 * known yet (tree_job_child()). */
	if (dir->kind == K_JOB && strcmp(name, ".") && strcmp(name, "..")) {
		*child = *dir;
		node_set_job(child, 0);
		return 0;
	}
	return -ENOENT;
}

void tree_parent(const struct node *n, struct node *parent)
{
	const struct entry *ent = entry_of(n);

	*parent = *n;
	if (n->kind == K_ROOT)
		return;
	parent->kind = ent->parent;
	if (ent->prefix) /* leaving a numbered directory: forget its number */
		parent->num[ent->slot] = 0;
	if (n->kind == K_JOB) /* the root stands for it (tree.h) */
		node_set_job(parent, 0);
	if (!kind_in_view(parent->kind))
		parent->view = 0;
}

void tree_name(const struct node *n, char *buf, size_t size)
{
	const struct entry *ent = entry_of(n);

	if (ent->prefix)
		snprintf(buf, size, "%s%u", ent->prefix, n->num[ent->slot]);
	else
		snprintf(buf, size, "%s", ent->name ? ent->name : "");
}

bool tree_grows(const struct node *n)
{
	return entry_of(n)->grows;
}

unsigned int tree_file_slot(const struct node *n)
{
	unsigned int k, slot = 0;

	if (n->kind <= K_TID || n->kind >= KINDS ||
	    !S_ISREG(tree[n->kind].mode))
		return TREE_DIR_FILES;
	for (k = K_TID + 1; k < n->kind; k++)
		slot += tree[k].parent == tree[n->kind].parent &&
			S_ISREG(tree[k].mode);
	return slot < TREE_DIR_FILES ? slot : TREE_DIR_FILES;
}

/* The owner of @n as the checks on its path leave it; the mode. */
void tree_stat_owned(const struct request *r, const struct node *n,
		     const struct owner *o, struct stat *st)
{
	const struct access_policy *access = &r->env->access;

	memset(st, 0, sizeof(*st));
	st->st_ino = node_ino(n);
	st->st_mode = entry_of(n)->mode;
	st->st_nlink = S_ISDIR(st->st_mode) ? 2 : 1;
	st->st_uid = o->uid;
	st->st_gid = o->gid;
	/*
	 * hidepid=noaccess: others may not enter a process's directory.
	 * The kernel checks it for every reader (default_permissions)
	 * from these attributes, which are the same for all of them.
	 */
	if (n->kind == K_TGID && access->hidepid == HIDEPID_NOACCESS) {
		st->st_mode = S_IFDIR | 0500;
		if (access->gid != ACCESS_GID_NONE) {
			st->st_mode = S_IFDIR | 0550;
			st->st_gid = access->gid;
		}
	}
	st->st_size = 0; /* a file's: its snapshot's length (inodes.h) */
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = r->env->mount_time;
}

int tree_check(struct request *r, const struct node *n, struct stat *st)
{
	struct owner o = { r->env->uid, r->env->gid };
	unsigned int kind;
	int ret;

	for (kind = n->kind; kind != K_ROOT; kind = tree[kind].parent) {
		/* A link's own check comes after its directories'. */
		if (!tree[kind].check || S_ISLNK(tree[kind].mode))
			continue;
		ret = tree[kind].check(r, n, &o);
		if (ret < 0)
			return ret;
	}
	if (S_ISLNK(entry_of(n)->mode) && entry_of(n)->check) {
		ret = entry_of(n)->check(r, n, &o);
		if (ret < 0)
			return ret;
	}
	tree_stat_owned(r, n, &o, st);
	return 0;
}

void tree_stat(struct request *r, const struct node *n, struct stat *st)
{
	struct owner o = { r->env->uid, r->env->gid };
	struct node process = *n;

	process.kind = K_TGID;
	if (kind_in_proc(n->kind) && n->kind != K_PROC &&
	    check_pid(r, &process, &o) < 0) {
		o.uid = r->env->uid; /* gone, or not a process */
		o.gid = r->env->gid;
	}
	tree_stat_owned(r, n, &o, st);
}

int tree_list(struct request *r, const struct node *dir, listing_add_fn add,
	      void *sink)
{
	struct listing l = { .add = add, .sink = sink };
	struct owner o = { r->env->uid, r->env->gid };
	const struct entry *ent;
	struct node parent;
	unsigned int k;
	int ret;

	if (!S_ISDIR(entry_of(dir)->mode))
		return -ENOTDIR;
	tree_parent(dir, &parent);
	ret = add(sink, ".", node_ino(dir), DIR_MODE);
	if (ret == 0)
		ret = add(sink, "..", node_ino(&parent), DIR_MODE);
	for (k = K_ROOT + 1; ret == 0 && k < KINDS; k++) {
		ent = &tree[k];
		if (!entry_in(k, dir->kind))
			continue;
		l.child = *dir;
		l.child.kind = k;
		l.child.view = kind_in_view(k) && r->view ? r->view->slot : 0;
		if (ent->name && !ent->list) {
			/* A link that says whether it exists, where not. */
			if (S_ISLNK(ent->mode) && ent->check &&
			    ent->check(r, &l.child, &o) < 0)
				continue;
			ret = add(sink, ent->name, node_ino(&l.child),
				  ent->mode);
		} else {
			l.slot = ent->slot;
			l.mode = ent->mode;
			ret = ent->list(r, dir, &l);
		}
	}
	return ret < 0 ? ret : 0;
}

void tree_listing_slice(const uint64_t *start, size_t count, int64_t off,
			size_t size, size_t *from, size_t *len)
{
	size_t first, end;

	*from = *len = 0;
	if (off < 0 || (uint64_t)off >= count)
		return;
	first = end = (size_t)off;
	while (end < count && start[end + 1] - start[first] <= size)
		end++;
	*from = start[first];
	*len = start[end] - start[first];
}

int tree_render(struct request *r, const struct node *n, struct rbuf *b)
{
	const struct entry *ent = entry_of(n);
	struct task_times t;
	int ret;

	if (ent->job || ent->job_times) {
		ret = render_job(r, n, ent->job, b);
	} else if (ent->value || ent->times) {
		ret = node_times(r, n, ent->need, &t);
		if (ret == 0 && ent->value)
			ret = render_task_value(b, engine_units(r->env->engine),
						ent->value, &t);
		else if (ret == 0)
			ret = render_times(b, engine_units(r->env->engine), &t);
	} else if (ent->show) {
		ret = ent->show(r, n, b);
	} else {
		return S_ISDIR(ent->mode) ? -EISDIR : -EINVAL;
	}
	/* Read by number: still the task its record names? */
	return ret < 0 ? ret : task_vouch(r, n);
}

int tree_readlink(struct request *r, const struct node *n, char *buf,
		  size_t size)
{
	const struct entry *ent = entry_of(n);

	if (ent->node_link)
		return ent->node_link(r, n, buf, size);
	return ent->link ? ent->link(r, buf, size) : -EINVAL;
}
