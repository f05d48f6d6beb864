/*
 * tree: the mounted tree, as one declarative table of entries, and the
 * operations on its nodes that the FUSE layer serves.
 *
 * The table lists every kind of node: its directory, its name, and
 * what it is: a directory, a file with the function that renders it,
 * a symlink with the function that computes its target, or a family of
 * numbered directories (groups, processors, processes, threads) with
 * the functions that check and list them. A new file is one line, in
 * the spirit of the kernel's fs/proc/base.c; the task files are one
 * list of lines shared by processes and threads, served by one engine
 * call, engine_task_times() with a tid of 0 for the whole process.
 *
 * Naming (tree_child) is pure; everything else is answered for one
 * request, in the reader's view: a node's own view slot says only in
 * which view it was named, for the kernel's caches. All of it works
 * without a mount: the unit tests call it directly.
 */
#ifndef TIMINGFS_TREE_H
#define TIMINGFS_TREE_H

#include <stdbool.h>
#include <sys/stat.h>

#include "request.h"
#include "nodes.h"
#include "render.h"

/* tree_node - the node of inode number @ino; -ENOENT if it names none
 * (a number with bits no node has, a snapshot's, names none). */
int tree_node(uint64_t ino, struct node *n);

/* tree_mode - the type and permission bits of a node's kind. */
mode_t tree_mode(const struct node *n);

/*
 * tree_in_proc - whether @n is proc/ or below it: named in a view, and
 * different for readers in different views.
 */
bool tree_in_proc(const struct node *n);

/*
 * tree_in_jobs - whether @n is jobs/, a cgroup below it or a file of
 * one: named in the reader's view, with no record (the view slot keeps
 * two views' inodes apart; nodes.h's check_job judges every request).
 */
bool tree_in_jobs(const struct node *n);

/*
 * tree_job_child - the cgroup id of a child @child that tree_child()
 * named in @dir by @name, for the reader of @r (its view set): jobs/ in
 * the root is the view's own cgroup, a name in a cgroup's directory the
 * cgroup of that name now. 0 and nothing done for any other child;
 * -ENOENT when there is no such cgroup for the reader.
 */
int tree_job_child(struct request *r, const struct node *dir, const char *name,
		   struct node *child);

/*
 * tree_child - the child @name of directory @dir, if its name fits an
 * entry (numbers only in their canonical decimal spelling); whether it
 * exists is tree_check()'s question. The child keeps @dir's view slot
 * below proc/. -ENOTDIR when @dir is no directory, -ENOENT otherwise.
 */
int tree_child(const struct node *dir, const char *name, struct node *child);

/* tree_parent - the parent of @n, for "..". A cgroup's directory in
 * jobs/ answers the root (its parent's id is the kernel's to know). */
void tree_parent(const struct node *n, struct node *parent);

/*
 * tree_name - the name of @n in its directory, into @buf of @size
 * (TREE_NAME_MAX is enough): a fixed name, or a numbered directory's
 * prefix and number.
 */
#define TREE_NAME_MAX 32
void tree_name(const struct node *n, char *buf, size_t size);

/* tree_kinds - how many kinds of node there are: each is below it. */
unsigned int tree_kinds(void);

/*
 * tree_shape - a hash of the tree's kinds: each one's place, name,
 * parent and mode. Two daemons whose shapes differ give a kind number
 * to different nodes, so one may not take the other's node IDs over.
 */
uint64_t tree_shape(void);

/*
 * tree_grows - whether the content or listing of @n is as long as the
 * tasks it lists (a table, proc/, threads/): thousands take
 * milliseconds to make, where any other node takes microseconds.
 */
bool tree_grows(const struct node *n);

/*
 * tree_file_slot - the place of file @n among the files of its
 * directory, below TREE_DIR_FILES; TREE_DIR_FILES for any other node.
 * A process's directory has the most: its values, times, threads.table.
 */
#define TREE_DIR_FILES (TASK_VALUE_COUNT + 2)
unsigned int tree_file_slot(const struct node *n);

/*
 * tree_check - whether @n exists now for the reader of @r (every
 * numbered directory on its path is asked), and its attributes.
 */
int tree_check(struct request *r, const struct node *n, struct stat *st);

/*
 * tree_stat - the attributes of @n without asking whether it still
 * exists: an open file answers fstat() after its task exited.
 */
void tree_stat(struct request *r, const struct node *n, struct stat *st);

/*
 * tree_stat_owned - the attributes of @n owned by @o, as tree_check()
 * found them: for attributes kept by their owner alone (inodes.h).
 */
void tree_stat_owned(const struct request *r, const struct node *n,
		     const struct owner *o, struct stat *st);

/*
 * tree_list - the whole listing of directory @dir for the reader:
 * ".", "..", its entries, then its numbered children, each passed to
 * @add with its inode number and mode.
 */
int tree_list(struct request *r, const struct node *dir, listing_add_fn add,
	      void *sink);

/*
 * tree_listing_slice - what readdir at offset @off serves of a listing of
 * @count entries, entry i at byte @start[i] (@start[@count] its end),
 * into @size bytes: the whole entries from index @off on that fit, as
 * *@from and *@len bytes. Offsets are entry indices, as in procfs:
 * entry i carries i + 1, the offset of the one after it, so any offset
 * a reader seeks to lands on an entry, or at or past the end (nothing).
 */
void tree_listing_slice(const uint64_t *start, size_t count, int64_t off,
			size_t size, size_t *from, size_t *len);

/* tree_render - the content of file @n, now, for the reader. */
int tree_render(struct request *r, const struct node *n, struct rbuf *b);

/* tree_readlink - the target of link @n for the reader; -EINVAL if @n
 * is no link. */
int tree_readlink(struct request *r, const struct node *n, char *buf,
		  size_t size);

/*
 * tree_set_server - the process serving now and how many have been
 * started, which info shows (server_pid, server_starts): the daemon's
 * server sets it once, before it serves.
 */
void tree_set_server(pid_t pid, unsigned int starts);

#endif
