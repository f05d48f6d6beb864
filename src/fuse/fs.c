/*
 * fs: the FUSE operations, each a request to the tree for one reader.
 *
 * Every node the kernel holds below proc/ is a record (inodes.h): a
 * request by its node ID resolves the record, and through it the task
 * instance it names, once (record_check()); a task gone, or a number
 * another task took, is ENOENT from then on, however the request came.
 * The exit listener has the kernel drop the names of tasks that exit
 * (task_exited()), so that a walk after that looks the number up
 * afresh.
 *
 * A file's content is rendered when a path walk looks it up (a value
 * file's name is then kept, its inode always the same; a table's
 * inode is new at each lookup: inodes.h), or at an open that comes
 * without a lookup; the open takes it, its first read at offset 0 and
 * every read at another offset, of any size, by read(2) or through the
 * page cache, are served from it; a later read at offset 0 takes a new
 * snapshot for its thread (rewinds.h). A directory's listing is made
 * at opendir, and READDIRPLUS answers its directories' lookups.
 * Each is charged to its reader's budget of memory (budget.h) while the
 * daemon holds it, and refused with ENOMEM past it; every content lives
 * in the keep (keep.h), where a successor of this server finds it. An
 * open file or directory is one object (opens.h), made by its open and
 * undone by its release. Errors are -errno internally, passed straight
 * through from the tree and the engine, and replied as errno.
 *
 * This file holds a mount's state and its table of operations; the
 * operations are in dir.c and file.c, what they share in fs-internal.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "fs-internal.h"
#include "inodes.h"
#include "keep.h"
#include "opens.h"

static void fs_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs *fs = userdata;

	/*
	 * The targets of proc/self and groups/current depend on the
	 * reader: the kernel must ask for them at every use.
	 */
	conn->want &= ~FUSE_CAP_CACHE_SYMLINKS;
	/*
	 * Every listing with its directories' entries (READDIRPLUS), not
	 * the first page alone: a glob lists a directory whole before it
	 * looks anything up in it.
	 */
	conn->want &= ~FUSE_CAP_READDIRPLUS_AUTO;
	clock_gettime(CLOCK_REALTIME, &fs->env.mount_time);
}

/* The mount is going: nothing of it is dropped from now on. */
static void fs_destroy(void *userdata)
{
	dropper_remove(userdata);
}

void fs_set_view_record(struct fs *fs, struct view_record *record)
{
	views_set_record(fs->env.views, record);
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
	.destroy = fs_destroy,
	.lookup = fs_lookup,
	.forget = fs_forget,
	.forget_multi = fs_forget_multi,
	.getattr = fs_getattr,
	.readlink = fs_readlink,
	.open = fs_open,
	.read = fs_read,
	/* No .flush: the kernel then stops sending FLUSH at every close. */
	.release = fs_release,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.readdirplus = fs_readdirplus,
	.releasedir = fs_release, /* an open directory is an open file too */
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

int fs_new(struct engine *engine, struct views *views,
	   const struct access_policy *access, struct fs_dropper *dropper,
	   struct fs **out)
{
	struct fs *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return -ENOMEM;
	fs->env.engine = engine;
	fs->env.views = views;
	fs->env.access = *access;
	fs->env.uid = getuid();
	fs->env.gid = getgid();
	fs->dropper = dropper;
	dropper_add(fs);
	*out = fs;
	return 0;
}

void fs_set_session(struct fs *fs, struct fuse_session *se)
{
	fs->se = se;
}

void fs_free(struct fs *fs)
{
	if (!fs)
		return;
	fs_destroy(fs);
	/* Their contents stay in the keep, for a successor. */
	opens_free(fs->opens);
	inodes_free(fs->ins);
	keep_unmap(fs->keep);
	free(fs);
}
