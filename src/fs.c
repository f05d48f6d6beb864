/*
 * fs: the mounted tree, as declarative tables of entries.
 *
 * Every directory is a struct fs_dir: a table of fixed entries (files,
 * links, subdirectories), and optionally a family of numbered children
 * (groups, processors, processes, threads) with a lookup and a list
 * function. A file is one line in a table, in the spirit of the
 * kernel's fs/proc/base.c; the task files are one table shared by
 * processes and threads, served by one engine call.
 *
 * A path is resolved into a struct fs_node, which carries the numbers
 * met on the way (group, processor, pid, tid) and the owner. A file's
 * content is rendered when it is opened and every read is served from
 * that snapshot, at any offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "procfile.h"
#include "render.h"

#define DIR_MODE (S_IFDIR | 0555)
#define FILE_MODE (S_IFREG | 0444)
#define LINK_MODE (S_IFLNK | 0777)

/* Where a path leads, and what it met on the way. */
struct fs_node {
	const struct fs_entry *ent;
	unsigned int group, m;
	pid_t pid, tid; /* tid 0: the process itself */
	uid_t uid;
	gid_t gid;
};

typedef int (*task_render_fn)(struct rbuf *b, enum units units,
			      const struct task_times *t);

struct fs_dir;

struct fs_entry {
	const char *name;
	mode_t mode;
	const struct fs_dir *dir; /* directories */
	/* files: either a task value or anything else */
	task_render_fn task;
	int (*show)(struct engine *e, const struct fs_node *n, struct rbuf *b);
	/* symlinks: the target for the calling process */
	int (*link)(struct engine *e, char *buf, size_t size);
};

/* Called with each numbered child's name by a fs_dir's list function. */
struct fs_filler {
	void *buf;
	fuse_fill_dir_t fill;
	struct stat st;
};

struct fs_dir {
	const struct fs_entry *entries;
	size_t count;
	const struct fs_entry *each; /* the entry of numbered children */
	/*
	 * Resolve @name as a numbered child into @n; with @check, also
	 * ask the engine whether it exists (lookups do, opens need not:
	 * the kernel looked the path up just before). 0 or -ENOENT.
	 */
	int (*lookup)(struct engine *e, struct fs_node *n, const char *name,
		      bool check);
	int (*list)(struct engine *e, const struct fs_node *n,
		    struct fs_filler *f);
};

#define DIR(NAME, DIRP)                                     \
	{                                                   \
		.name = NAME, .mode = DIR_MODE, .dir = DIRP \
	}
#define FILE(NAME, SHOW)                                      \
	{                                                     \
		.name = NAME, .mode = FILE_MODE, .show = SHOW \
	}
#define TASK(NAME, RENDER)                                      \
	{                                                       \
		.name = NAME, .mode = FILE_MODE, .task = RENDER \
	}
#define LINK(NAME, TARGET)                                      \
	{                                                       \
		.name = NAME, .mode = LINK_MODE, .link = TARGET \
	}
#define ENTRIES(TABLE) \
	.entries = TABLE, .count = sizeof(TABLE) / sizeof(TABLE[0])

static struct engine *fs_engine(void)
{
	return fuse_get_context()->private_data;
}

/* ---- file contents ---------------------------------------------- */

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
	int cpus[64];
	uint64_t online;
	size_t count = 0;
	unsigned int m;
	int ret;

	ret = engine_group_online(e, n->group, &online);
	if (ret < 0)
		return ret;
	for (m = 0; m < engine_group_size(e, n->group); m++)
		if (online & (1ULL << m))
			cpus[count++] = engine_group_cpu(e, n->group, m);
	return render_cpulist(b, cpus, count);
}

static int show_group_idle(struct engine *e, const struct fs_node *n,
			   struct rbuf *b)
{
	uint64_t mask, cycles[64];
	int ret;

	ret = engine_group_idle_cycles(e, n->group, &mask, cycles);
	if (ret < 0)
		return ret;
	return render_idle_cycles(b, mask, cycles);
}

static int show_cpu_idle(struct engine *e, const struct fs_node *n,
			 struct rbuf *b)
{
	uint64_t mask, cycles[64];
	int ret;

	ret = engine_group_idle_cycles(e, n->group, &mask, cycles);
	if (ret < 0)
		return ret;
	if (!(mask & (1ULL << n->m)))
		return -ENOENT; /* went offline */
	return render_value(b, cycles[n->m]);
}

static int show_cpu_number(struct engine *e, const struct fs_node *n,
			   struct rbuf *b)
{
	int cpu = engine_group_cpu(e, n->group, n->m);

	return cpu < 0 ? cpu : render_value(b, (uint64_t)cpu);
}

/* ---- symlinks ----------------------------------------------------- */

/* The process of the calling thread, as the engine sees it. */
static int caller_ident(struct engine *e, struct task_ident *id)
{
	pid_t tid = fuse_get_context()->pid;

	if (tid <= 0)
		return -ENOENT; /* a caller outside our PID namespace */
	return engine_task_ident(e, tid, 0, id);
}

static int link_self(struct engine *e, char *buf, size_t size)
{
	struct task_ident id;
	int ret = caller_ident(e, &id);

	if (ret < 0)
		return ret;
	snprintf(buf, size, "%d", (int)id.tgid);
	return 0;
}

static int link_current_group(struct engine *e, char *buf, size_t size)
{
	struct task_ident id;
	unsigned int group, m;
	int ret;

	ret = caller_ident(e, &id);
	if (ret < 0)
		return ret;
	ret = engine_cpu_group(e, id.cpu, &group, &m);
	if (ret < 0)
		return -EIO;
	snprintf(buf, size, "%u", group);
	return 0;
}

/* ---- directories -------------------------------------------------- */

static int fill_name(struct fs_filler *f, const char *name, mode_t mode)
{
	f->st.st_mode = mode;
	return f->fill(f->buf, name, &f->st, 0, 0) ? 1 : 0;
}

static int fill_number(struct fs_filler *f, const char *prefix, unsigned long n)
{
	char name[32];

	snprintf(name, sizeof(name), "%s%lu", prefix, n);
	return fill_name(f, name, DIR_MODE);
}

static int number(const char *name, uint64_t max, unsigned int *v)
{
	uint64_t n;

	if (procfile_canonical_uint(name, max, &n) < 0)
		return -ENOENT;
	*v = (unsigned int)n;
	return 0;
}

static int lookup_group(struct engine *e, struct fs_node *n, const char *name,
			bool check)
{
	(void)check;
	if (engine_group_count(e) == 0)
		return -ENOENT;
	return number(name, engine_group_count(e) - 1, &n->group);
}

static int list_groups(struct engine *e, const struct fs_node *n,
		       struct fs_filler *f)
{
	unsigned int g;

	(void)n;
	for (g = 0; g < engine_group_count(e); g++)
		if (fill_number(f, "", g))
			break;
	return 0;
}

static int lookup_cpu(struct engine *e, struct fs_node *n, const char *name,
		      bool check)
{
	unsigned int size = engine_group_size(e, n->group);
	uint64_t online;
	int ret;

	if (strncmp(name, "cpu", 3) || size == 0 ||
	    number(name + 3, size - 1, &n->m) < 0)
		return -ENOENT;
	if (!check)
		return 0;
	ret = engine_group_online(e, n->group, &online);
	if (ret < 0)
		return ret;
	return (online & (1ULL << n->m)) ? 0 : -ENOENT;
}

static int list_cpus(struct engine *e, const struct fs_node *n,
		     struct fs_filler *f)
{
	uint64_t online;
	unsigned int m;
	int ret;

	ret = engine_group_online(e, n->group, &online);
	if (ret < 0)
		return ret;
	for (m = 0; m < engine_group_size(e, n->group); m++)
		if ((online & (1ULL << m)) && fill_number(f, "cpu", m))
			break;
	return 0;
}

static int lookup_pid(struct engine *e, struct fs_node *n, const char *name,
		      bool check)
{
	struct task_ident id;
	unsigned int pid;
	int ret;

	if (number(name, INT32_MAX, &pid) < 0 || pid == 0)
		return -ENOENT;
	n->pid = (pid_t)pid;
	n->tid = 0;
	if (!check)
		return 0;
	ret = engine_task_ident(e, n->pid, 0, &id);
	if (ret < 0)
		return ret;
	if (id.tgid != n->pid)
		return -ENOENT; /* a thread, not a process */
	n->uid = id.uid;
	n->gid = id.gid;
	return 0;
}

static int fill_pid(void *ctx, pid_t pid)
{
	return fill_number(ctx, "", (unsigned long)pid);
}

static int list_pids(struct engine *e, const struct fs_node *n,
		     struct fs_filler *f)
{
	(void)n;
	return engine_for_each_process(e, fill_pid, f);
}

static int lookup_tid(struct engine *e, struct fs_node *n, const char *name,
		      bool check)
{
	struct task_ident id;
	unsigned int tid;
	int ret;

	if (number(name, INT32_MAX, &tid) < 0 || tid == 0)
		return -ENOENT;
	n->tid = (pid_t)tid;
	if (!check)
		return 0;
	ret = engine_task_ident(e, n->pid, n->tid, &id);
	if (ret < 0)
		return ret;
	return id.tgid == n->pid ? 0 : -ENOENT;
}

static int list_tids(struct engine *e, const struct fs_node *n,
		     struct fs_filler *f)
{
	return engine_for_each_thread(e, n->pid, fill_pid, f);
}

/* The files of a task, the same for a process and for a thread. */
#define TASK_FILES                                           \
	TASK("cycles", render_cycles),                       \
		TASK("kernel_time", render_kernel_time),     \
		TASK("user_time", render_user_time),         \
		TASK("creation_time", render_creation_time), \
		TASK("exit_time", render_exit_time),         \
		TASK("times", render_times)

static const struct fs_entry tid_entries[] = { TASK_FILES };
static const struct fs_dir tid_dir = { ENTRIES(tid_entries) };

static const struct fs_entry tid_each = DIR(NULL, &tid_dir);
static const struct fs_dir threads_dir = {
	.each = &tid_each,
	.lookup = lookup_tid,
	.list = list_tids,
};

static const struct fs_entry tgid_entries[] = {
	TASK_FILES,
	DIR("threads", &threads_dir),
};
static const struct fs_dir tgid_dir = { ENTRIES(tgid_entries) };

static const struct fs_entry pid_each = DIR(NULL, &tgid_dir);
static const struct fs_entry proc_entries[] = {
	LINK("self", link_self),
};
static const struct fs_dir proc_dir = {
	ENTRIES(proc_entries),
	.each = &pid_each,
	.lookup = lookup_pid,
	.list = list_pids,
};

static const struct fs_entry cpu_entries[] = {
	FILE("idle_cycles", show_cpu_idle),
	FILE("cpu", show_cpu_number),
};
static const struct fs_dir cpu_dir = { ENTRIES(cpu_entries) };

static const struct fs_entry cpu_each = DIR(NULL, &cpu_dir);
static const struct fs_entry group_entries[] = {
	FILE("cpus", show_group_cpus),
	FILE("idle_cycles", show_group_idle),
};
static const struct fs_dir group_dir = {
	ENTRIES(group_entries),
	.each = &cpu_each,
	.lookup = lookup_cpu,
	.list = list_cpus,
};

static const struct fs_entry group_each = DIR(NULL, &group_dir);
static const struct fs_entry groups_entries[] = {
	LINK("current", link_current_group),
};
static const struct fs_dir groups_dir = {
	ENTRIES(groups_entries),
	.each = &group_each,
	.lookup = lookup_group,
	.list = list_groups,
};

static const struct fs_entry root_entries[] = {
	FILE("info", show_info),
	DIR("groups", &groups_dir),
	DIR("proc", &proc_dir),
};
static const struct fs_dir root_dir = { ENTRIES(root_entries) };
static const struct fs_entry root_entry = DIR("", &root_dir);

/* ---- path resolution ---------------------------------------------- */

static int lookup_child(struct engine *e, struct fs_node *n, const char *name,
			bool check)
{
	const struct fs_dir *dir = n->ent->dir;
	size_t i;
	int ret;

	if (!dir)
		return -ENOTDIR;
	for (i = 0; i < dir->count; i++) {
		if (strcmp(dir->entries[i].name, name) == 0) {
			n->ent = &dir->entries[i];
			return 0;
		}
	}
	if (!dir->lookup)
		return -ENOENT;
	ret = dir->lookup(e, n, name, check);
	if (ret < 0)
		return ret;
	n->ent = dir->each;
	return 0;
}

/*
 * Resolve @path from the root. The owner starts as the daemon's (the
 * root of the tree) and becomes the process's below proc/PID.
 */
static int resolve(struct engine *e, const char *path, struct fs_node *n,
		   bool check)
{
	char name[NAME_MAX + 1];
	const char *p = path, *end;
	size_t len;
	int ret;

	memset(n, 0, sizeof(*n));
	n->ent = &root_entry;
	n->uid = getuid();
	n->gid = getgid();
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		if (len > NAME_MAX)
			return -ENOENT;
		memcpy(name, p, len);
		name[len] = '\0';
		ret = lookup_child(e, n, name, check);
		if (ret < 0)
			return ret;
		p = end;
	}
	return 0;
}

/* ---- operations --------------------------------------------------- */

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	/* Sizes are 0 and contents change: read through to us always. */
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	cfg->entry_timeout = FS_TIMEOUT_S;
	cfg->attr_timeout = FS_TIMEOUT_S;
	cfg->negative_timeout = 0;
	cfg->nullpath_ok = 1;
	return fuse_get_context()->private_data;
}

static int fs_getattr(const char *path, struct stat *st,
		      struct fuse_file_info *fi)
{
	struct fs_node n;
	int ret;

	(void)fi;
	ret = resolve(fs_engine(), path, &n, true);
	if (ret < 0)
		return ret;
	memset(st, 0, sizeof(*st));
	st->st_mode = n.ent->mode;
	st->st_nlink = S_ISDIR(n.ent->mode) ? 2 : 1;
	st->st_uid = n.uid;
	st->st_gid = n.gid;
	st->st_size = 0;
	return 0;
}

static int fs_readlink(const char *path, char *buf, size_t size)
{
	struct engine *e = fs_engine();
	struct fs_node n;
	int ret;

	ret = resolve(e, path, &n, false);
	if (ret < 0)
		return ret;
	if (!n.ent->link)
		return -EINVAL;
	return n.ent->link(e, buf, size);
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	struct engine *e = fs_engine();
	struct task_times t;
	struct fs_node n;
	struct rbuf *b;
	int ret;

	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
		return -EROFS;
	ret = resolve(e, path, &n, false);
	if (ret < 0)
		return ret;
	if (S_ISDIR(n.ent->mode))
		return -EISDIR;
	b = malloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	rbuf_init(b);
	if (n.ent->task) {
		ret = engine_task_times(e, n.pid, n.tid, &t);
		if (ret == 0)
			ret = n.ent->task(b, engine_units(e), &t);
	} else {
		ret = n.ent->show(e, &n, b);
	}
	if (ret < 0)
		goto out_free;
	fi->fh = (uint64_t)(uintptr_t)b;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	return 0;

out_free:
	rbuf_free(b);
	free(b);
	return ret;
}

static int fs_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	const struct rbuf *b = (const struct rbuf *)(uintptr_t)fi->fh;

	(void)path;
	if (off < 0)
		return -EINVAL;
	if ((size_t)off >= b->len)
		return 0;
	if (size > b->len - (size_t)off)
		size = b->len - (size_t)off;
	memcpy(buf, b->data + off, size);
	return (int)size;
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
	struct rbuf *b = (struct rbuf *)(uintptr_t)fi->fh;

	(void)path;
	rbuf_free(b);
	free(b);
	return 0;
}

/* The directory is resolved once, at opendir: readdir gets no path. */
static int fs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct fs_node *n;
	int ret;

	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	ret = resolve(fs_engine(), path, n, true);
	if (ret == 0 && !n->ent->dir)
		ret = -ENOTDIR;
	if (ret < 0) {
		free(n);
		return ret;
	}
	fi->fh = (uint64_t)(uintptr_t)n;
	return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		      off_t off, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	const struct fs_node *n = (const struct fs_node *)(uintptr_t)fi->fh;
	const struct fs_dir *dir = n->ent->dir;
	struct fs_filler f = { .buf = buf, .fill = fill };
	size_t i;
	int ret;

	(void)path;
	(void)off;
	(void)flags;
	if (fill_name(&f, ".", DIR_MODE) || fill_name(&f, "..", DIR_MODE))
		return -ENOMEM;
	for (i = 0; i < dir->count; i++)
		if (fill_name(&f, dir->entries[i].name, dir->entries[i].mode))
			return 0;
	ret = dir->list ? dir->list(fs_engine(), n, &f) : 0;
	return ret < 0 ? ret : 0;
}

static int fs_releasedir(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	free((void *)(uintptr_t)fi->fh);
	return 0;
}

/* Nothing here can be changed. */
static int fs_rofs_path(const char *path)
{
	(void)path;
	return -EROFS;
}

static int fs_rofs_mode(const char *path, mode_t mode)
{
	(void)path;
	(void)mode;
	return -EROFS;
}

static int fs_rofs_2path(const char *from, const char *to)
{
	(void)from;
	(void)to;
	return -EROFS;
}

static int fs_rofs_rename(const char *from, const char *to, unsigned int flags)
{
	(void)flags;
	return fs_rofs_2path(from, to);
}

static int fs_rofs_mknod(const char *path, mode_t mode, dev_t dev)
{
	(void)dev;
	return fs_rofs_mode(path, mode);
}

static int fs_rofs_chmod(const char *path, mode_t mode,
			 struct fuse_file_info *fi)
{
	(void)fi;
	return fs_rofs_mode(path, mode);
}

static int fs_rofs_chown(const char *path, uid_t uid, gid_t gid,
			 struct fuse_file_info *fi)
{
	(void)uid;
	(void)gid;
	(void)fi;
	return fs_rofs_path(path);
}

static int fs_rofs_truncate(const char *path, off_t size,
			    struct fuse_file_info *fi)
{
	(void)size;
	(void)fi;
	return fs_rofs_path(path);
}

static int fs_rofs_write(const char *path, const char *buf, size_t size,
			 off_t off, struct fuse_file_info *fi)
{
	(void)buf;
	(void)size;
	(void)off;
	(void)fi;
	return fs_rofs_path(path);
}

static int fs_rofs_create(const char *path, mode_t mode,
			  struct fuse_file_info *fi)
{
	(void)fi;
	return fs_rofs_mode(path, mode);
}

static int fs_rofs_utimens(const char *path, const struct timespec tv[2],
			   struct fuse_file_info *fi)
{
	(void)tv;
	(void)fi;
	return fs_rofs_path(path);
}

static int fs_rofs_setxattr(const char *path, const char *name,
			    const char *value, size_t size, int flags)
{
	(void)name;
	(void)value;
	(void)size;
	(void)flags;
	return fs_rofs_path(path);
}

static int fs_rofs_removexattr(const char *path, const char *name)
{
	(void)name;
	return fs_rofs_path(path);
}

static const struct fuse_operations fs_ops = {
	.init = fs_init,
	.getattr = fs_getattr,
	.readlink = fs_readlink,
	.open = fs_open,
	.read = fs_read,
	.release = fs_release,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.releasedir = fs_releasedir,
	/* No .flush: the kernel then stops sending FLUSH at every close. */
	.mknod = fs_rofs_mknod,
	.mkdir = fs_rofs_mode,
	.unlink = fs_rofs_path,
	.rmdir = fs_rofs_path,
	.symlink = fs_rofs_2path,
	.rename = fs_rofs_rename,
	.link = fs_rofs_2path,
	.chmod = fs_rofs_chmod,
	.chown = fs_rofs_chown,
	.truncate = fs_rofs_truncate,
	.write = fs_rofs_write,
	.create = fs_rofs_create,
	.utimens = fs_rofs_utimens,
	.setxattr = fs_rofs_setxattr,
	.removexattr = fs_rofs_removexattr,
};

const struct fuse_operations *fs_operations(void)
{
	return &fs_ops;
}
