/*
 * fs-internal: what the files of a mount's operations share (fs.h is
 * what the daemon sees of them).
 *
 *	fs.c       the mount's state, its operations table, the read-only
 *	           answers
 *	drop.c     the dropper: the thread that has the kernel drop names
 *	req.c      a request's reader, view, record check, timeouts and
 *	           budget
 *	content.c  a file's content, rendered and charged; the keep
 *	dir.c      lookups, attributes, links, forgets and listings
 *	file.c     opens, reads (and rewinds) and releases
 *
 * Every function here is called from a worker serving a request, unless
 * said otherwise; what a request holds is its own (struct request), what
 * a mount holds is guarded by the module that holds it (inodes.h,
 * opens.h, keep.h), and the drop queue by the dropper's lock.
 */
#ifndef TIMINGFS_FS_INTERNAL_H
#define TIMINGFS_FS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs.h"
#include "budget.h"
#include "inodes.h"
#include "nodes.h"
#include "render.h"
#include "tree.h"

/* How many names the dropper may have waiting; more wait for a sweep. */
#define FS_DROP_QUEUE 256

struct fs {
	struct tree_env env;
	struct fuse_session *se;
	struct inodes *ins; /* the inodes the kernel holds (inodes.h) */
	struct fs_dropper *dropper;
	struct fs *next, *prev; /* in the dropper's ring */
	bool registered; /* in it: from fs_new to fs_destroy */
	bool watching; /* the listener tells it of exits (task_exited()) */
	bool drop_pending; /* proc/ to drop */
	bool sweep_pending; /* names of exited tasks to find and drop */
	bool reap_pending; /* views of ended namespaces to free (view.h) */
	size_t sweep_at; /* atomic: held inodes that call for a sweep */
	struct record_name drop_queue[FS_DROP_QUEUE];
	unsigned int drop_head, drop_count;
	struct keep *keep; /* every open's content (keep.h) */
	struct opens *opens; /* every open file and directory (opens.h) */
};

static inline struct fs *req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* ---- drop.c: names the kernel is to drop (from any thread) ---------- */

/* dropper_add - register @fs with @fs->dropper (fs_new()). */
void dropper_add(struct fs *fs);
/* dropper_remove - unregister @fs, after the dropper is done with it:
 * nothing of it is dropped from then on (the session's destroy). */
void dropper_remove(struct fs *fs);
/* The kernel holds @count inodes below proc/: sweep when grown. */
void sweep_when_grown(struct fs *fs, size_t count);
/* Drop proc/'s name: a second view came. */
void drop_proc_entry(struct fs *fs);
/* Queue the @count names @n to be dropped (as many as fit). */
void drop_names(struct fs *fs, const struct record_name *n, size_t count);
/* Queue the names of the idle extra inodes a sweep found. */
void drop_idle_extras(struct fs *fs, const struct extras_idle *idle);
/* Queue the names of views idle for VIEW_IDLE_S (view.h). */
void drop_idle_views(struct fs *fs);

/* ---- req.c: the request ---------------------------------------------- */

/* req_begin - @r for FUSE request @req; req_end() releases its view. */
void req_begin(fuse_req_t req, struct request *r);
void req_end(struct request *r);
/* req_node_view - @r's view for node @n (below proc/); -EAGAIN. */
int req_node_view(fuse_req_t req, struct request *r, const struct node *n);
/* record_use - the task @t of @n's record, made the request's. */
void record_use(struct request *r, const struct node *n,
		const struct record_task *t);
/* record_check - record_use(), then record_judge(): -ENOENT once the
 * task @n's record names is gone. */
int record_check(struct request *r, const struct node *n,
		 const struct record_task *t);
int record_judge(struct request *r, const struct node *n,
		 const struct record_task *t);
/* req_check_named - whether @n exists for its reader now. */
int req_check_named(struct request *r, const struct node *n);
/* req_admit - @r's budget reader, admitted for @n; NULL and *@err. */
struct budget_reader *req_admit(struct request *r, const struct node *n,
				int *err);
/* req_payer - who pays for @r's records; payer_put() releases it. */
void req_payer(struct request *r, struct record_payer *p);
void payer_put(struct record_payer *p);
/* How long the kernel may keep @n's attributes, and its name. */
double node_cached_for(struct request *r, const struct node *n);
double entry_timeout(struct request *r, const struct node *n, mode_t mode);
/* checks_shared - whether a path checked for another reader will do. */
bool checks_shared(struct request *r);
/* fs_node, file_node - the node of node ID @ino (and @t, its record's
 * task: may be NULL); -ENOENT, and for file_node() -EISDIR. */
int fs_node(struct fs *fs, uint64_t ino, struct node *n, struct record_task *t);
int file_node(struct fs *fs, uint64_t ino, struct node *n,
	      struct record_task *t);
/* reply_error - -@err's errno to the kernel (ENOSYS as EIO). */
void reply_error(fuse_req_t req, int err);

/* ---- content.c: a file's content -------------------------------------- */

/* text_free - free a content of render_text(); NULL allowed. */
void text_free(struct rbuf *text);
/* render_text - file @n's content, now, for @r's reader. */
int render_text(struct request *r, const struct node *n, struct rbuf **out);
/* render_charged - render_text(), charged to @who with @extra bytes
 * more: -ENOMEM past the budget. */
int render_charged(struct request *r, const struct node *n,
		   struct budget_reader *who, size_t extra, struct rbuf **out);

/* ---- file.c ------------------------------------------------------------ */

/* reply_from_snapshot - reply with @size bytes of a snapshot. */
void reply_from_snapshot(fuse_req_t req, const char *data, size_t size);

/* ---- the operations (dir.c, file.c), for fs.c's table ------------------ */

void fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_readlink(fuse_req_t req, fuse_ino_t ino);
void fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void fs_forget_multi(fuse_req_t req, size_t count,
		     struct fuse_forget_data *forgets);
void fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi);
void fs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi);
void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

#endif
