/*
 * floorfs: the reference floor of `make bench`, a libfuse3 filesystem
 * that does nothing but what any FUSE file of timingfs's kind must do.
 *
 * It has timingfs's shape and manners and none of its work: the same
 * paths at the same depths (proc/1/threads/1/cycles, its kernel_time,
 * and groups/0/cpu0/idle_cycles), the same low-level API, mount options,
 * timeouts and worker threads, files of size 0 opened with direct_io,
 * no flush, and a fresh number at every open. What timingfs costs
 * above it is what timingfs itself does.
 *
 * usage: floorfs [-f] [-s] [-o OPT] MOUNTPOINT
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TIMEOUT_S 1.0

struct node {
	fuse_ino_t parent;
	const char *name;
	mode_t mode;
};

/* Inode i is nodes[i]; 1 is the root. */
static const struct node nodes[] = {
	[1] = { 0, "", S_IFDIR | 0555 },
	[2] = { 1, "proc", S_IFDIR | 0555 },
	[3] = { 2, "1", S_IFDIR | 0555 },
	[4] = { 3, "threads", S_IFDIR | 0555 },
	[5] = { 4, "1", S_IFDIR | 0555 },
	[6] = { 5, "cycles", S_IFREG | 0444 },
	[7] = { 1, "groups", S_IFDIR | 0555 },
	[8] = { 7, "0", S_IFDIR | 0555 },
	[9] = { 8, "cpu0", S_IFDIR | 0555 },
	[10] = { 9, "idle_cycles", S_IFREG | 0444 },
	[11] = { 5, "kernel_time", S_IFREG | 0444 },
};

#define NODES (sizeof(nodes) / sizeof(nodes[0]))

static uint64_t opens; /* the fresh number */

static int node_stat(fuse_ino_t ino, struct stat *st)
{
	if (ino < 1 || ino >= NODES)
		return -ENOENT;
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = nodes[ino].mode;
	st->st_nlink = S_ISDIR(st->st_mode) ? 2 : 1;
	return 0;
}

static void floor_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param ep;
	fuse_ino_t i;

	for (i = 1; i < NODES; i++)
		if (nodes[i].parent == parent &&
		    strcmp(nodes[i].name, name) == 0)
			break;
	memset(&ep, 0, sizeof(ep));
	if (node_stat(i, &ep.attr) < 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	ep.ino = i;
	ep.attr_timeout = TIMEOUT_S;
	ep.entry_timeout = TIMEOUT_S;
	fuse_reply_entry(req, &ep);
}

static void floor_getattr(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (node_stat(ino, &st) < 0)
		fuse_reply_err(req, ENOENT);
	else
		fuse_reply_attr(req, &st, TIMEOUT_S);
}

static void floor_open(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	if (ino < 1 || ino >= NODES || !S_ISREG(nodes[ino].mode)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if ((fi->flags & O_ACCMODE) != O_RDONLY) {
		fuse_reply_err(req, EROFS);
		return;
	}
	fi->fh = __atomic_add_fetch(&opens, 1, __ATOMIC_RELAXED);
	fi->direct_io = 1;
	fuse_reply_open(req, fi);
}

static void floor_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	char text[32];
	size_t len;

	(void)ino;
	len = (size_t)snprintf(text, sizeof(text), "%llu\n",
			       (unsigned long long)fi->fh);
	if (off < 0 || (size_t)off >= len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size > len - (size_t)off)
		size = len - (size_t)off;
	fuse_reply_buf(req, text + off, size);
}

static void floor_release(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops floor_ops = {
	.lookup = floor_lookup,
	.getattr = floor_getattr,
	.open = floor_open,
	.read = floor_read,
	.release = floor_release,
};

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts cmd = { 0 };
	struct fuse_loop_config *loop;
	struct fuse_session *se;
	int ret = 1;

	/* timingfs's own defaults, in front of the caller's options. */
	if (fuse_opt_parse(&args, NULL, NULL, NULL) != 0 ||
	    fuse_opt_insert_arg(&args, 1,
				"-oro,default_permissions,fsname=floorfs,"
				"subtype=floorfs,auto_unmount") != 0 ||
	    fuse_parse_cmdline(&args, &cmd) != 0 || !cmd.mountpoint) {
		fprintf(stderr, "usage: %s [-f] [-s] [-o OPT] MOUNTPOINT\n",
			argv[0]);
		return 2;
	}
	se = fuse_session_new(&args, &floor_ops, sizeof(floor_ops), NULL);
	if (!se)
		goto out;
	if (fuse_session_mount(se, cmd.mountpoint) != 0)
		goto out_destroy;
	if (fuse_daemonize(cmd.foreground) != 0 ||
	    fuse_set_signal_handlers(se) != 0)
		goto out_unmount;
	if (cmd.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		loop = fuse_loop_cfg_create();
		if (!loop)
			goto out_signals;
		fuse_loop_cfg_set_max_threads(loop, cmd.max_threads);
		ret = fuse_session_loop_mt(se, loop);
		fuse_loop_cfg_destroy(loop);
	}
	ret = ret < 0 ? 1 : 0;
out_signals:
	fuse_remove_signal_handlers(se);
out_unmount:
	fuse_session_unmount(se);
out_destroy:
	fuse_session_destroy(se);
out:
	free(cmd.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
