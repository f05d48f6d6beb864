/*
 * dir: the operations on names, as the kernel's fs/fuse/dir.c has
 * them: lookups (a file's content is made at its lookup, a directory
 * below proc/ is named in a record: inodes.h), attributes, links,
 * forgets, and listings, made at opendir and served by readdir and
 * READDIRPLUS at any offset. Each is a request to the tree for one
 * reader (req.c), called from a worker.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"
#include "fs-internal.h"
#include "hash.h"
#include "keep.h"
#include "opens.h"
#include "serve.h"

/*
 * A directory listing: the entries in the kernel's format, and where
 * each starts; offsets are entry indices (tree_listing_slice()).
 */
struct fs_listing {
	fuse_req_t req;
	struct rbuf entries;
	uint64_t *start; /* start[i]: entry i; start[count]: the end */
	size_t count, cap;
	struct budget_charge charge;
};

/* A listing's parts, as listing_open() laid them out. */
static int listing_parse(const char *data, size_t bytes, const uint64_t **start,
			 size_t *count)
{
	uint64_t n;

	if (bytes < 2 * sizeof(uint64_t))
		return -EIO;
	memcpy(&n, data, sizeof(n));
	if (n > bytes / sizeof(uint64_t) - 2)
		return -EIO;
	*start = (const uint64_t *)(const void *)data + 1;
	*count = (size_t)n;
	if ((*start)[n] > bytes - (n + 2) * sizeof(uint64_t))
		return -EIO;
	return 0;
}

/*
 * The entry of file @n: its content made now, for the open that
 * follows, and an inode whose size is that content's (inodes.h): a
 * value file's own, kept as its directory's name is; a table's new,
 * looked up again at every walk. Its path is checked once in
 * PATH_CHECKED_MS, where the access rules allow (checks_shared()).
 */
static int lookup_file(struct request *r, const struct node *n,
		       struct fuse_entry_param *ep)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);
	struct budget_reader *who;
	struct record_payer payer;
	struct extras_idle idle;
	struct rbuf *text;
	struct owner o;
	struct node dir;
	bool checked = false;
	uint64_t size;
	int ret;

	tree_parent(n, &dir);
	if (checks_shared(r) && inodes_checked(fs->ins, &dir, &o)) {
		tree_stat_owned(r, n, &o, &ep->attr);
	} else {
		ret = tree_check(r, n, &ep->attr);
		if (ret < 0)
			return ret;
		o.uid = ep->attr.st_uid;
		o.gid = ep->attr.st_gid;
		checked = true;
	}
	/* A reader at its budget is refused before anything is made. */
	who = req_admit(r, n, &ret);
	if (!who)
		return ret;
	/* This thread's lookup of it a moment ago made it already. */
	text = inodes_retake(fs->ins, n, r->pid);
	ret = text ? 0 : render_charged(r, n, who, 0, &text);
	if (ret == -ENOENT || ret == -ENOMEM)
		goto out_put;
	/*
	 * Any other failure is a broken source: the name stands, of size
	 * 0, and the open, which renders again, says what went wrong.
	 */
	if (ret < 0)
		text = NULL;
	payer.uid = r->uid;
	payer.ns = r->view ? r->view->ns_ino : BUDGET_NS_ANY;
	payer.reader = who;
	ret = inodes_lookup(fs->ins, n, &o, r->pid, text, checked ? &dir : NULL,
			    &payer, &ep->ino, &size, &idle);
	budget_reader_put(who);
	drop_idle_extras(fs, &idle);
	if (ret < 0) {
		text_free(text);
		return ret;
	}
	ep->attr.st_size = (off_t)size;
	ep->attr.st_blocks = (blkcnt_t)((size + 511) / 512);
	/* A table's inode serves one snapshot: its name is looked up at
	 * every walk. A value file's is the same inode at every lookup. */
	ep->entry_timeout =
		tree_grows(n) ? 0 : entry_timeout(r, n, ep->attr.st_mode);
	return 0;

out_put:
	budget_reader_put(who);
	return ret;
}

/*
 * The generation of an entry of a task that started at @start: the
 * kernel keeps 32 bits of it, and an inode whose generation differs
 * from a reply's is stale, its I/O failed. One inode's generation never
 * changes (a file's is its task's, whatever its length: inodes.h).
 */
static uint64_t entry_generation(uint64_t start)
{
	return (uint32_t)(start ? hash_golden(start) >> 32 : 0);
}

/*
 * Whether the task of directory @n has exited already, though procfs
 * still shows it (a zombie not yet reaped): its exit record came and
 * dropped its names before this lookup, and nothing will drop this
 * one when it is reaped and its number is taken again.
 */
static bool exited_already(struct request *r, const struct node *n)
{
	struct exited_task x;

	if (!r->env->exited || r->view->nowhere)
		return false;
	return exited_find(r->env->exited, r->view->ns_ino, node_pid(n),
			   node_tid(n), clock_mono_ns(), &x) == 0;
}

/*
 * Name directory @n below proc/ in a record: proc/ of a view, a process
 * or a thread (a record of its own: the instance whose start is
 * @start, in directory node ID @parent), or a directory of its
 * directory's record (threads/). Its node ID is then the record's.
 * *@kept: whether it names a task kept since it exited, whose name the
 * kernel must not keep: a live task that takes the number wins.
 */
static int name_dir(struct request *r, struct node *n, uint64_t start,
		    uint64_t parent, bool *kept)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);
	struct record_task t = { .start = start, .parent = parent };
	struct record_drops drops;
	struct record_payer who;
	int ret;

	if (n->kind != K_PROC && n->kind != K_TGID && n->kind != K_TID)
		return n->rec ? inodes_hold(fs->ins, n) : 0;
	/* A task's directory: the task as the daemon numbers it, for its
	 * requests and its exit (unknown for a task kept since it exited
	 * in a view whose numbers are not the daemon's). */
	*kept = false;
	if (n->kind == K_PROC)
		goto name;
	if (task_of(r, n, &t.pid, &t.tid) < 0) {
		t.pid = r->view->identity ? node_pid(n) : 0;
		t.tid = r->view->identity ? node_tid(n) : 0;
		*kept = true;
	} else {
		*kept = exited_already(r, n);
	}
name:
	req_payer(r, &who);
	ret = inodes_name(fs->ins, n, &t, &who, &drops);
	payer_put(&who);
	drop_names(fs, drops.name, drops.count);
	if (ret == 0)
		sweep_when_grown(fs, inodes_records(fs->ins));
	return ret;
}

/* Tell the kernel node @n, whose lookups are counted (records, or the
 * tables' extra inodes). */
static void lookup_reply(struct request *r, const struct node *n,
			 struct fuse_entry_param *ep)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);

	(void)n;
	if (fuse_reply_entry((fuse_req_t)r->ctx, ep) == 0)
		return;
	/* Never known (its record too): */
	inodes_forget(fs->ins, ep->ino, 1);
}

static void forget_one(struct fs *fs, fuse_ino_t ino, uint64_t nlookup);

/*
 * Name process or thread @n below @parent as a lookup does when its
 * path's checks are shared: the instance that has the number now, its
 * record, and its path checked as a lookup in it last found it, less
 * than PATH_CHECKED_MS ago (a listing's every entry, a walk's every
 * name), else now. Its attributes into @ep, its start into *@start.
 */
static int lookup_task(struct request *r, struct node *n, uint64_t parent,
		       struct fuse_entry_param *ep, uint64_t *start, bool *kept)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);
	struct owner o;
	int ret;

	ret = task_identity(r, n, start);
	if (ret == 0)
		ret = name_dir(r, n, *start, parent, kept);
	if (ret < 0)
		return ret;
	if (inodes_checked(fs->ins, n, &o)) {
		tree_stat_owned(r, n, &o, &ep->attr);
		return 0;
	}
	ret = tree_check(r, n, &ep->attr);
	if (ret < 0) {
		forget_one(fs, node_id(n), 1);
		return ret;
	}
	o.uid = ep->attr.st_uid;
	o.gid = ep->attr.st_gid;
	inodes_mark_checked(fs->ins, n, &o);
	return 0;
}

/*
 * The entry of directory or link @n in directory node ID @parent, for
 * the reader of @r (its directory's record checked): below proc/ a
 * process or thread is the one that has its number now, and a
 * directory's lookup is counted in its record (name_dir()).
 */
static int lookup_node(struct request *r, struct node *n, uint64_t parent,
		       struct fuse_entry_param *ep)
{
	bool task = n->kind == K_TGID || n->kind == K_TID;
	uint64_t start = 0;
	bool kept = false;
	int ret;

	if (task && checks_shared(r)) {
		ret = lookup_task(r, n, parent, ep, &start, &kept);
	} else {
		ret = tree_check(r, n, &ep->attr);
		if (ret == 0 && task)
			ret = task_identity(r, n, &start);
		if (ret == 0 && tree_in_proc(n))
			ret = name_dir(r, n, start, parent, &kept);
	}
	if (ret < 0)
		return ret;
	ep->ino = node_id(n);
	ep->entry_timeout = kept ? 0 : entry_timeout(r, n, ep->attr.st_mode);
	ep->attr_timeout = node_cached_for(r, n);
	ep->generation = entry_generation(start);
	return 0;
}

void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = req_fs(req);
	struct fuse_entry_param ep;
	struct record_task dt = { 0 };
	struct request r;
	struct node dir, n;
	int ret;

	req_begin(req, &r);
	memset(&ep, 0, sizeof(ep));
	ret = fs_node(fs, parent, &dir, &dt); /* its record, resolved once */
	if (ret == 0)
		ret = tree_child(&dir, name, &n);
	if (ret == 0 && (tree_in_proc(&n) || tree_in_jobs(&n))) {
		ret = req_node_view(req, &r, &n);
		n.view = r.view->slot;
	}
	if (ret == 0) /* a cgroup below jobs/: which one the name is now */
		ret = tree_job_child(&r, &dir, name, &n);
	/*
	 * Below a task's directory: still that task? A file's content is
	 * made first, by that task, and it is judged by the start its
	 * reads met; a directory's before.
	 */
	if (ret == 0 && S_ISREG(tree_mode(&n))) {
		if (dir.rec)
			record_use(&r, &dir, &dt);
		ret = lookup_file(&r, &n, &ep);
		ep.attr_timeout = FS_TIMEOUT_S;
		if (ret == 0 && dir.rec && record_judge(&r, &dir, &dt) < 0) {
			forget_one(fs, ep.ino, 1);
			ret = -ENOENT;
		}
	} else if (ret == 0 && (ret = record_check(&r, &dir, &dt)) == 0) {
		ret = lookup_node(&r, &n, parent, &ep);
	}
	if (ret == 0) {
		lookup_reply(&r, &n, &ep);
	} else {
		reply_error(req, -ret); /* negative entries are not cached */
	}
	req_end(&r);
}

/*
 * A file's attributes: as its inode's last lookup or open found them,
 * the size its content's; an open file's size is its own content's.
 * An inode not in use (no lookup for a while) is asked about afresh.
 */
static void getattr_file(fuse_req_t req, struct request *r, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct rbuf *now = NULL;
	struct record_task t;
	size_t len = 0;
	struct stat st;
	struct owner o;
	uint64_t size;
	struct node n;
	int ret;

	ret = inodes_attr(fs->ins, ino, &n, &o, &size);
	if (ret == 0) {
		tree_stat_owned(r, &n, &o, &st);
		st.st_size = (off_t)size;
	} else if (!fi) {
		ret = file_node(fs, ino, &n, &t);
		if (ret == 0)
			ret = req_node_view(req, r, &n);
		if (ret == 0)
			ret = record_check(r, &n, &t);
		if (ret == 0) {
			tree_stat(r, &n, &st);
			ret = render_text(r, &n, &now);
		}
		if (ret == 0)
			st.st_size = (off_t)now->len;
		text_free(now);
	}
	if (fi) { /* an open file: its content is what the reader gets */
		if (ret < 0 && file_node(fs, ino, &n, NULL) == 0 &&
		    req_node_view(req, r, &n) == 0) {
			tree_stat(r, &n, &st);
			ret = 0;
		}
		if (ret == 0 &&
		    keep_get(fs->keep, fi->fh, NULL, &len, NULL, NULL) < 0)
			ret = -EIO; /* a handle never given */
		st.st_size = (off_t)len;
	}
	if (ret < 0) {
		reply_error(req, -ret);
		return;
	}
	st.st_blocks = (blkcnt_t)((st.st_size + 511) / 512);
	fuse_reply_attr(req, &st, FS_TIMEOUT_S);
}

void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct record_task t;
	struct request r;
	struct stat st;
	struct node n;
	int ret;

	req_begin(req, &r);
	ret = extra_ino(ino) ? 0 : fs_node(fs, ino, &n, &t);
	if (ret == 0 && (extra_ino(ino) || S_ISREG(tree_mode(&n)))) {
		getattr_file(req, &r, ino, fi);
	} else if (ret < 0) {
		fuse_reply_err(req, ENOENT);
	} else {
		/* Asked again for the reader now asking, whoever looked
		 * the name up (a working directory, an O_PATH descriptor),
		 * and whether it is still the task it was. */
		ret = req_node_view(req, &r, &n);
		if (ret == 0)
			ret = record_check(&r, &n, &t);
		if (ret == 0)
			ret = tree_check(&r, &n, &st);
		if (ret < 0)
			reply_error(req, -ret);
		else
			fuse_reply_attr(req, &st, node_cached_for(&r, &n));
	}
	req_end(&r);
}

void fs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct request r;
	char target[PATH_MAX];
	struct node n;
	int ret;

	req_begin(req, &r);
	ret = fs_node(req_fs(req), ino, &n, NULL);
	if (ret == 0)
		ret = req_node_view(req, &r, &n);
	if (ret == 0)
		ret = tree_readlink(&r, &n, target, sizeof(target));
	if (ret < 0)
		reply_error(req, -ret);
	else
		fuse_reply_readlink(req, target);
	req_end(&r);
}

/*
 * The kernel forgets inodes: extra inodes go, and records below proc/
 * with what their files were told; the others are numbers.
 */
static void forget_one(struct fs *fs, fuse_ino_t ino, uint64_t nlookup)
{
	inodes_forget(fs->ins, ino, nlookup);
}

void fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(req_fs(req), ino, nlookup);
	fuse_reply_none(req);
}

void fs_forget_multi(fuse_req_t req, size_t count,
		     struct fuse_forget_data *forgets)
{
	struct fs *fs = req_fs(req);
	size_t i;

	for (i = 0; i < count; i++)
		forget_one(fs, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

/* The tree's listing sink: one entry in the kernel's dirent format. */
static int listing_add(void *sink, const char *name, uint64_t ino, mode_t mode)
{
	struct fs_listing *l = sink;
	struct stat st = { .st_ino = ino, .st_mode = mode };
	struct rbuf *b = &l->entries;
	uint64_t *start;
	size_t need;

	if (l->count + 2 > l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		start = realloc(l->start, l->cap * sizeof(*start));
		if (!start)
			return -ENOMEM;
		l->start = start;
	}
	need = fuse_add_direntry(l->req, NULL, 0, name, NULL, 0);
	if (rbuf_reserve(b, need) < 0)
		return -ENOMEM;
	fuse_add_direntry(l->req, b->data + b->len, need, name, &st,
			  (off_t)(l->count + 1));
	l->start[l->count++] = b->len;
	b->len += need;
	l->start[l->count] = b->len;
	return 0;
}

static void listing_free(struct fs_listing *l)
{
	budget_uncharge(&l->charge);
	rbuf_free(&l->entries);
	free(l->start);
	free(l);
}

/*
 * A listing in the keep, as an open directory (opens.h) of inode 0,
 * which no file has: its count, where each of its entries starts
 * (count + 1 numbers), then the entries, charged as @l was. Frees @l.
 * 0, or -ENOMEM.
 */
static int listing_open(struct fs *fs, struct fs_listing *l, uint64_t *fh)
{
	size_t head = (l->count + 2) * sizeof(uint64_t);
	struct open_file *of = open_file_new();
	uint64_t *b;
	int ret = -ENOMEM;

	if (of && rbuf_reserve(&of->text, head + l->entries.len) == 0) {
		b = (uint64_t *)(void *)of->text.data;
		b[0] = l->count;
		if (l->count)
			memcpy(b + 1, l->start,
			       (l->count + 1) * sizeof(uint64_t));
		else
			b[1] = 0;
		if (l->entries.len)
			memcpy((char *)b + head, l->entries.data,
			       l->entries.len);
		of->text.len = head + l->entries.len;
		of->charge = l->charge;
		l->charge.reader = NULL;
		ret = opens_add(fs->opens, of, 0, 0, fh);
	} else {
		open_file_free(of);
	}
	listing_free(l);
	return ret;
}

/* The listing is made here, once: readdir serves it at any offset. */
void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct budget_reader *who = NULL;
	struct fs_listing *l = NULL;
	struct record_task t;
	struct request r;
	struct stat st;
	struct node n;
	int ret;

	req_begin(req, &r);
	ret = fs_node(req_fs(req), ino, &n, &t);
	if (ret == 0 && !S_ISDIR(tree_mode(&n)))
		ret = -ENOTDIR;
	if (ret == 0)
		ret = req_node_view(req, &r, &n);
	r.entering = true;
	if (ret == 0)
		ret = record_check(&r, &n, &t);
	if (ret == 0)
		ret = tree_check(&r, &n, &st);
	if (ret == 0)
		who = req_admit(&r, &n, &ret);
	if (ret == 0) {
		l = calloc(1, sizeof(*l));
		if (!l)
			ret = -ENOMEM;
	}
	if (ret == 0) {
		l->req = req;
		if (tree_grows(&n))
			serve_may_block();
		ret = tree_list(&r, &n, listing_add, l);
		l->req = NULL;
	}
	/* Held until releasedir: charged to its reader, its copy in the
	 * keep too (listing_open()). */
	if (ret == 0)
		ret = budget_charge(
			who, node_ino(&n),
			budget_block_bytes(l) +
				budget_block_bytes(l->entries.data) +
				budget_block_bytes(l->start) +
				keep_cost((l->count + 2) * sizeof(uint64_t) +
					  l->entries.len),
			&l->charge);
	budget_reader_put(who);
	if (ret == 0)
		ret = listing_open(req_fs(req), l, &fi->fh);
	else if (l)
		listing_free(l);
	if (ret < 0)
		reply_error(req, -ret);
	else if (fuse_reply_open(req, fi) != 0)
		opens_close(req_fs(req)->opens, fi->fh);
	req_end(&r);
}

/* The whole entries from index @off on that fit in @size bytes. */
void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi)
{
	const uint64_t *start;
	const char *data;
	size_t count, from, len, bytes;

	(void)ino;
	if (keep_get(req_fs(req)->keep, fi->fh, &data, &bytes, NULL, NULL) <
		    0 ||
	    listing_parse(data, bytes, &start, &count) < 0) {
		fuse_reply_err(req, EIO); /* a handle never given */
		return;
	}
	data += (count + 2) * sizeof(uint64_t);
	tree_listing_slice(start, count, off, size, &from, &len);
	reply_from_snapshot(req, len ? data + from : NULL, len);
}

/* The most bytes one READDIRPLUS reply holds. */
#define PLUS_BYTES 65536

/*
 * An entry's own bytes in a listing (fuse_add_direntry()'s struct
 * fuse_dirent: ino, off, namelen, type, the name), into @name (NUL
 * ended) and *@mode: 0, or -EIO when they are not one.
 */
static int listing_entry(const char *ent, size_t bytes, char *name, size_t size,
			 uint64_t *ino, mode_t *mode)
{
	uint32_t namelen, type;

	if (bytes < 24)
		return -EIO;
	memcpy(ino, ent, sizeof(*ino));
	memcpy(&namelen, ent + 16, sizeof(namelen));
	memcpy(&type, ent + 20, sizeof(type));
	if (namelen >= size || 24 + (size_t)namelen > bytes)
		return -EIO;
	memcpy(name, ent + 24, namelen);
	name[namelen] = '\0';
	*mode = (mode_t)type << 12;
	return 0;
}

/*
 * The entry a listing of @dir gives child @name (inode number @ino)
 * with its attributes, as a lookup of it would: a directory (below
 * proc/, a process or a thread named in its record), counted as one
 * lookup; @dir NULL: none. Nothing for a file or link (ep->ino 0: the
 * kernel looks it up when it is used: a file's size is its content's,
 * which only its lookup renders), for "." and "..", or for a child
 * gone since the listing was made.
 */
static void plus_entry(struct request *r, const struct node *dir,
		       uint64_t parent, const char *name, uint64_t ino,
		       mode_t mode, struct fuse_entry_param *ep)
{
	struct node n;

	memset(ep, 0, sizeof(*ep));
	ep->attr.st_mode = mode;
	ep->attr.st_ino = ino;
	if (!dir || !S_ISDIR(mode) || !strcmp(name, ".") || !strcmp(name, ".."))
		return;
	r->task_pid = 0;
	r->task_ident = 0;
	r->seen_start = 0;
	/* proc/ is asked which view a walk enters (fs.h). */
	if (tree_child(dir, name, &n) < 0 || n.kind == K_PROC)
		return;
	if (tree_in_jobs(&n) && !r->view)
		return; /* jobs/ too is asked which view a walk enters */
	if (tree_in_proc(&n) || tree_in_jobs(&n))
		n.view = r->view->slot;
	if (tree_job_child(r, dir, name, &n) < 0)
		return;
	if (lookup_node(r, &n, parent, ep) < 0) {
		memset(ep, 0, sizeof(*ep));
		ep->attr.st_mode = mode;
		ep->attr.st_ino = ino;
	}
}

/*
 * READDIRPLUS: the entries from index @off on that fit in @size bytes,
 * each directory's with its node and attributes (plus_entry()), so that
 * a walk or a glob over a listing asks nothing more of those names.
 * A reply the kernel never got counts none of them.
 */
void fs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct fuse_entry_param ep;
	uint64_t named[PLUS_BYTES / 128];
	struct record_task dt;
	const uint64_t *start = NULL;
	size_t count = 0, bytes, len = 0, need, i, nnamed = 0;
	uint64_t child;
	const char *data;
	char name[256], *buf = NULL;
	struct request r;
	struct node dir;
	bool dir_named;
	mode_t mode;
	int ret;

	req_begin(req, &r);
	if (size > PLUS_BYTES)
		size = PLUS_BYTES;
	ret = keep_get(fs->keep, fi->fh, &data, &bytes, NULL, NULL);
	if (ret == 0)
		ret = listing_parse(data, bytes, &start, &count);
	if (ret < 0) {
		fuse_reply_err(req, EIO); /* a handle never given */
		goto out;
	}
	data += (count + 2) * sizeof(uint64_t);
	/*
	 * The directory, for its reader now, still the task it was: else
	 * its listing is served as it was made, without entries (a
	 * directory's listing outlives its task, as in procfs; and glibc
	 * takes ENOENT from getdents for the end of a listing).
	 */
	dir_named = fs_node(fs, ino, &dir, &dt) == 0 &&
		    req_node_view(req, &r, &dir) == 0 &&
		    record_check(&r, &dir, &dt) == 0;
	buf = malloc(size);
	ret = buf ? 0 : -ENOMEM;
	for (i = off < 0 ? count : (size_t)off; ret == 0 && i < count; i++) {
		if (listing_entry(data + start[i], start[i + 1] - start[i],
				  name, sizeof(name), &child, &mode) < 0) {
			ret = -EIO;
			break;
		}
		plus_entry(&r, dir_named ? &dir : NULL, ino, name, child, mode,
			   &ep);
		need = fuse_add_direntry_plus(req, buf + len, size - len, name,
					      &ep, (off_t)(i + 1));
		if (need > size - len || nnamed == sizeof(named) / 8) {
			if (ep.ino)
				forget_one(fs, ep.ino, 1);
			break;
		}
		len += need;
		if (ep.ino)
			named[nnamed++] = ep.ino;
	}
	if (ret < 0 && !len) {
		reply_error(req, -ret);
	} else if (fuse_reply_buf(req, buf, len) != 0) {
		while (nnamed)
			forget_one(fs, named[--nnamed], 1);
	}
out:
	free(buf);
	req_end(&r);
}
