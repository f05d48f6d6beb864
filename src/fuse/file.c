/*
 * file: the operations on open files, as the kernel's fs/fuse/file.c
 * has them: an open takes its lookup's content, or renders it afresh
 * (open_again()); a read is served from the open's snapshot in the
 * keep at any offset and size, and a read at offset 0 after the first
 * takes a new snapshot for its thread (rewinds.h); a release, of a
 * file or a directory, frees what the open held (opens.h). Called
 * from the workers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fs-internal.h"
#include "keep.h"
#include "opens.h"

/*
 * Grow the kernel's size of inode @ino to the length of @text, content
 * made afresh, before it is served, if the kernel holds less (a page
 * cache reader stops at it). It is done by storing the content's last
 * byte where it belongs (fuse_lowlevel_notify_store()), which grows the
 * size to its end and leaves the page not up to date; a store of no
 * bytes grows nothing (fuse_write_update_attr() since Linux 5.16). The
 * kernel locks that page meanwhile: not from a read of it.
 */
static void grow_size(struct fs *fs, fuse_ino_t ino, const struct rbuf *text)
{
	struct fuse_bufvec last = FUSE_BUFVEC_INIT(1);

	if (!text->len)
		return;
	last.buf[0].mem = text->data + text->len - 1;
	fuse_lowlevel_notify_store(fs->se, ino, (off_t)text->len - 1, &last, 0);
}

/*
 * Inode @ino, file @n, serves @text, made afresh for the reader of @r:
 * recorded as its size, its owner the one its last lookup found (as the
 * kernel has it), else asked now (inodes_resize()); and, @grow, the
 * kernel's size grown to it first (grow_size()).
 */
static void told_afresh(struct request *r, fuse_ino_t ino, const struct node *n,
			const struct rbuf *text, bool grow)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);
	struct stat st;
	struct owner o;
	int grew;

	grew = inodes_resize(fs->ins, ino, NULL, text->len, grow);
	if (grew == -ENOENT) {
		tree_stat(r, n, &st);
		o.uid = st.st_uid;
		o.gid = st.st_gid;
		grew = inodes_resize(fs->ins, ino, &o, text->len, grow);
	}
	if (grew > 0 && grow)
		grow_size(fs, ino, text);
}

/*
 * An open of file inode @ino, node @n of task @t (its record's), that
 * takes no lookup's content:
 * a second open after one lookup, or one by another thread than the
 * lookup's, which came without a path walk (inodes.h). The content is
 * rendered afresh for this reader and served with direct_io; the
 * inode's size grows first to its length, where it is less
 * (grow_size()), and a short read at the end of a shorter content
 * shrinks it.
 */
static int open_again(fuse_req_t req, fuse_ino_t ino, const struct node *n,
		      const struct record_task *t, struct fuse_file_info *fi,
		      struct rbuf **text)
{
	struct budget_reader *who = NULL;
	struct request r;
	int ret;

	req_begin(req, &r);
	ret = req_node_view(req, &r, n);
	if (ret == 0)
		ret = record_check(&r, n, t);
	/* Where the access rules judge reader by reader, this one may not
	 * be the lookup's; elsewhere every reader of the view sees what
	 * the kernel's cached name shows. */
	if (ret == 0 && !node_cached_for(&r, n))
		ret = req_check_named(&r, n);
	if (ret == 0)
		who = req_admit(&r, n, &ret);
	/* It pays for the table's entry its open may have made too. */
	if (ret == 0)
		ret = render_charged(&r, n, who, inodes_entry_bytes(), text);
	budget_reader_put(who);
	/* The kernel's size may be what a dead server told, or what a
	 * short read left: it grows if it is less. */
	if (ret == 0)
		told_afresh(&r, ino, n, *text, true);
	req_end(&r);
	fi->direct_io = 1;
	fi->keep_cache = 0;
	return ret;
}

/*
 * The content of an open of file inode @ino, node *@n, with the inode
 * held open (inodes_open()): its lookup's, or rendered afresh
 * (open_again()). Nothing is held on failure.
 */
static int open_content(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi, struct node *n,
			struct rbuf **text)
{
	struct fs *fs = req_fs(req);
	struct record_task t;
	int ret;

	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))
		return -EROFS;
	ret = file_node(fs, ino, n, &t);
	if (ret == 0)
		ret = inodes_open(fs->ins, ino, n, fuse_req_ctx(req)->pid,
				  text);
	if (ret == 0 || ret == 2) {
		/*
		 * The lookup's content, of the size the lookup told: the
		 * kernel empties the inode's page cache of an earlier
		 * lookup's pages at this open, and a page-cache reader
		 * (sendfile, splice, mmap) reads it through there. Reads
		 * come here (direct_io), so that a read at offset 0
		 * after the first takes a new snapshot (fs_read()).
		 * Told more than the lookup before it, the kernel may
		 * have kept the smaller size (inodes.h): it grows.
		 */
		if (ret == 2)
			grow_size(fs, ino, *text);
		fi->direct_io = 1;
		fi->keep_cache = 0;
		return 0;
	}
	if (ret == 1 && (ret = open_again(req, ino, n, &t, fi, text)) < 0)
		inodes_release(fs->ins, ino);
	return ret;
}

/* The open file is one object (opens.h), made whole or not at all. */
void fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);
	struct rbuf *text = NULL;
	struct node n;
	int ret;

	ret = open_content(req, ino, fi, &n, &text);
	if (ret == 0)
		ret = opens_add(fs->opens, open_file_of(text), ino, node_id(&n),
				&fi->fh);
	if (ret < 0)
		reply_error(req, -ret);
	else if (fuse_reply_open(req, fi) != 0)
		/* The opener was interrupted: no release will come. */
		opens_close(fs->opens, fi->fh);
}

/*
 * Reply with bytes of a snapshot, a file's text or a directory's
 * listing. Named in t/asan.supp: not inlined.
 */
__attribute__((noinline)) void
reply_from_snapshot(fuse_req_t req, const char *data, size_t size)
{
	fuse_reply_buf(req, data, size);
}

/* A read, answered from a snapshot of a file's text (opens_read()). */
struct fs_reading {
	fuse_req_t req;
	size_t size;
	off_t off;
};

/* Serve @size bytes at @off of the @len at @data: any offset, any size. */
static void reply_snapshot(void *ctx, const char *data, size_t len)
{
	struct fs_reading *rd = ctx;
	size_t size = rd->size;

	if (rd->off < 0) {
		fuse_reply_err(rd->req, EINVAL);
		return;
	}
	if ((uint64_t)rd->off >= len) {
		fuse_reply_buf(rd->req, NULL, 0);
		return;
	}
	if (size > len - (size_t)rd->off)
		size = len - (size_t)rd->off;
	reply_from_snapshot(rd->req, data + rd->off, size);
}

/* A read by thread @pid of open @fh, from the snapshot it reads. */
static void read_open(fuse_req_t req, uint64_t fh, pid_t pid, size_t size,
		      off_t off)
{
	struct fs_reading rd = { req, size, off };
	int ret = opens_read(req_fs(req)->opens, fh, pid, off, size,
			     reply_snapshot, &rd);

	if (ret < 0)
		fuse_reply_err(req, -ret);
}

/*
 * A new snapshot of file @n for the reader of @r, rewinding inode
 * @ino's open @fh, kept as the reading thread's (opens_rewind()).
 * When it is longer than the kernel may think the inode is, the size
 * grows first, as at an open without a lookup (open_again()).
 */
static int rewind_take(struct request *r, fuse_ino_t ino, uint64_t fh,
		       const struct node *n, size_t size)
{
	struct fs *fs = req_fs((fuse_req_t)r->ctx);
	struct budget_reader *who;
	struct rbuf *text;
	int ret;

	who = req_admit(r, n, &ret);
	if (!who)
		return ret;
	ret = render_charged(r, n, who, 0, &text);
	budget_reader_put(who);
	if (ret < 0)
		return ret;
	/* Not from a read of the page that holds its last byte, which the
	 * kernel holds locked till the reply: a read(2) of direct_io
	 * needs no size, and the page cache reads the first page again
	 * only when the kernel dropped it (docs/design.md, "Rewinds"). */
	told_afresh(r, ino, n, text, text->len > size);
	return opens_rewind(fs->opens, fh, r->pid, open_file_of(text));
}

/*
 * A read at offset 0 of open @fh after its first: a new snapshot, for
 * the reading thread, of the file its open took, if it is still the
 * task it was (record_check()) and the reader may still see it, as a
 * reopen would ask (req_check_named()); then the read is served from
 * it. A rewind refused leaves the open rewound: the next read at
 * offset 0 asks again (ENOENT every time once the task is gone), never
 * serving an older snapshot.
 */
static void read_rewound(fuse_req_t req, fuse_ino_t ino, uint64_t fh,
			 size_t size)
{
	struct fs *fs = req_fs(req);
	struct record_task t;
	struct request r;
	uint64_t node;
	struct node n;
	int ret;

	req_begin(req, &r);
	ret = keep_get(fs->keep, fh, NULL, NULL, NULL, &node);
	if (ret == 0)
		ret = fs_node(fs, node, &n, &t);
	if (ret == 0)
		ret = req_node_view(req, &r, &n);
	if (ret == 0)
		ret = record_check(&r, &n, &t);
	if (ret == 0)
		ret = req_check_named(&r, &n);
	if (ret == 0)
		ret = rewind_take(&r, ino, fh, &n, size);
	req_end(&r);
	if (ret < 0) {
		opens_rewind_again(fs->opens, fh);
		reply_error(req, -ret);
	} else {
		read_open(req, fh, r.pid, size, 0);
	}
}

/*
 * A read of open @fh: at offset 0 once the open was read to its end, a
 * new snapshot (rewinds.h); else, and at any other offset, the snapshot
 * the reading thread's last rewind took, else the open's last one.
 */
void fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi)
{
	struct fs *fs = req_fs(req);

	if (off == 0 && opens_is_rewind(fs->opens, fi->fh))
		read_rewound(req, ino, fi->fh, size);
	else
		read_open(req, fi->fh, fuse_req_ctx(req)->pid, size, off);
}

/* An open file or directory is closed: all it held goes (opens.h). */
void fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	opens_close(req_fs(req)->opens, fi->fh);
	fuse_reply_err(req, 0);
}
