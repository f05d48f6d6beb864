/*
 * view: the processes as one reader sees them, in its PID namespace.
 *
 * A view is a PID namespace and, where procfs's hidepid=invisible
 * applies, the one owner whose processes alone exist in it. The engine
 * works in the daemon's numbers; a view translates between those and
 * the numbers its namespace gives, one of two ways, picked at start by
 * probing the kernel (views_translate() names it):
 *
 * ioctl: the nsfs ioctls NS_GET_PID_FROM_PIDNS and NS_GET_PID_IN_PIDNS
 * (Linux 6.10 and later). Either direction is one system call, whatever
 * the number of processes on the machine.
 *
 * nspid: every other kernel since 4.9. The daemon's number of a task ->
 * the view's: a readlink of /proc/PID/ns/pid, whose namespace's chain
 * of ancestors (NS_GET_PARENT, 4.9) is kept per namespace, says whether
 * the task is in the view's namespace or below it; if so, one read of
 * /proc/PID/status, whose NSpid line (nspid.h) has its number at the
 * view's depth. The view's number -> the daemon's: the view keeps a map
 * of every number it translated, each hit checked by the way above
 * (so a number reused by another task is never believed); on a miss of
 * a process, one pass over /proc translating every process (O(processes
 * of the machine)), at most one per VIEW_SCAN_MS in a view, whatever
 * numbers are asked (a miss waits for the next pass, or shares one that
 * began after it; a number that a pass begun VIEW_SCAN_MS ago or less
 * did not find, asked again, is absent at once);
 * on a miss of a thread, one pass over that process's threads. So a
 * listing of proc/ costs a readlink a process of the machine once a
 * second (view_pass_from_daemon()) and a readlink and a status read a
 * process of the view, and a lookup, once the map knows the number, a
 * readlink and a status read.
 *
 * Views live in a table of VIEW_SLOTS slots, and the slot number is
 * what the FUSE layer puts into inode numbers, so that the kernel's
 * caches, shared by every reader of a mount, keep each view's names
 * apart. Two slots are fixed: VIEW_OWN, every process of the daemon's
 * own namespace (or of the namespace the mount is pinned to) under its
 * numbers; and VIEW_NOWHERE, the empty view of a reader the daemon
 * cannot place, or one in a namespace it cannot translate. The others
 * are made on first use and reused only when the kernel holds no inode
 * named in them (views_hold(): an open directory, a working directory,
 * an O_PATH descriptor or a cached name of one still serves that view,
 * however long it waits), no request uses them, and none came for
 * VIEW_IDLE_S seconds or their namespace ended. When every slot is taken so, a reader of a new
 * view is refused (views_caller(): EAGAIN to the reader) until a slot
 * frees, never given another view's slot. The kernel keeps names it
 * cached until memory runs short, and a cached name holds its slot: so
 * once slots run short (views_crowded()), the FUSE layer has the
 * kernel drop the names of slots idle for VIEW_IDLE_S
 * (views_idle_held()); a name something holds open stays, and so does
 * its slot.
 *
 * A slot is charged to its holder, the uid whose request made the view
 * (under hidepid=invisible each owner has a view of its own). A uid
 * other than root holds at most views_set_uid_max() slots (VIEW_UID_MAX
 * by default), and takes none of the last VIEW_ROOT_RESERVE free ones:
 * past either, EAGAIN to it alone, logged once a minute per uid. So no
 * uid takes every slot, and root (of the host or of any namespace)
 * always finds one; VIEW_OWN needs none.
 *
 * A view's slot and namespace descriptor go once its namespace has no
 * process left and the kernel holds no name of it (views_reap(), once a
 * second from the FUSE layer's dropper): the view remembers a task it
 * saw (its keeper; when that is gone, the namespace's process 1 is
 * looked for), and once none is left it shows nothing, its descriptor
 * closes, and the FUSE layer has the kernel drop its names, which frees
 * the slot. A slot a dead server gave (views_set_record()) is dropped
 * the same way once idle, and frees once the kernel holds no name of
 * it. On the nspid way the chains of namespaces met are closed too, 10
 * s after their last use.
 *
 * The table also knows whether more than one view is in use: while
 * every reader has been in VIEW_OWN for VIEW_SHARED_S seconds, the FUSE
 * layer may let the kernel cache the proc directory itself (fs.h).
 *
 * Thread safety: every function may be called from any thread; a view
 * got from views_caller() stays valid until views_put().
 */
#ifndef TIMINGFS_VIEW_H
#define TIMINGFS_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define VIEW_SLOT_BITS 10
#define VIEW_SLOTS (1U << VIEW_SLOT_BITS)
#define VIEW_OWN 0U
#define VIEW_NOWHERE 1U
#define VIEW_ALL_UIDS ((uid_t)-1)
#define VIEW_IDLE_S 3
#define VIEW_SHARED_S 60
#define VIEW_SCAN_MS 10
/* Slots one uid other than root may hold by default ([limits]
 * reader_views), and the slots only root may take. */
#define VIEW_UID_MAX (VIEW_SLOTS / 16)
#define VIEW_ROOT_RESERVE (VIEW_SLOTS / 16)
/* The largest reader_views: every slot but the fixed and root's. */
#define VIEW_UID_MAX_LIMIT (VIEW_SLOTS - VIEW_NOWHERE - 1 - VIEW_ROOT_RESERVE)

struct views;
struct view_map;

struct view {
	unsigned int slot;
	ino_t ns_ino; /* the namespace's nsfs inode; 0 for nowhere */
	uid_t only_uid; /* VIEW_ALL_UIDS, or the owner it shows alone */
	uid_t holder; /* the uid whose request made it: charged its slot */
	bool identity; /* its numbers are the daemon's */
	bool nowhere; /* no process exists in it */
	/* A reader whose view could not be made: -EAGAIN (no slot free),
	 * -EMFILE (out of descriptors) or -ENOMEM, its answer; else 0. */
	int error;
	int nsfd; /* the namespace, for translation; -1 if identity */
	/* Private to view.c and view_ns.c: */
	unsigned int refs;
	unsigned long held; /* inodes the kernel holds named in it */
	long long dropped_s; /* when its names were last asked to go */
	long long last_used_s;
	bool gone; /* its namespace ended: nowhere, its descriptor closed */
	pid_t keeper; /* a task seen in its namespace, the daemon's number */
	ino_t keeper_ino; /* its /proc/PID's inode then */
	struct views *vs;
	unsigned int level; /* nspid: its depth below the daemon's */
	struct view_map *map; /* nspid: numbers met, its own to the daemon's */
};

/*
 * views_new - the views of a daemon in its own PID namespace, or, with
 * @pinned_path non-NULL, of a mount pinned to the PID namespace of that
 * file (a /proc/PID/ns/pid link or a bind mount of one), seen by every
 * reader. Returns 0 and sets *@out, or -errno with one line in @err:
 * -EINVAL when @pinned_path is not a PID namespace, -ENOTSUP when it is
 * another namespace than the daemon's and this kernel cannot translate.
 */
int views_new(const char *pinned_path, struct views **out, char *err,
	      size_t errlen);

/* views_free - close every namespace; NULL is allowed. */
void views_free(struct views *vs);

/*
 * views_pinned - the nsfs inode of the pinned namespace, or 0 when each
 * reader sees its own ("pidns caller").
 */
ino_t views_pinned(const struct views *vs);

/* views_own_ns - the nsfs inode of the daemon's own PID namespace. */
ino_t views_own_ns(const struct views *vs);

/*
 * views_can_translate - whether this kernel translates numbers between
 * namespaces; without it, readers in other namespaces than the daemon's
 * see an empty proc/.
 */
bool views_can_translate(const struct views *vs);

/* views_translate - how: "ioctl", "nspid" or "none". */
const char *views_translate(const struct views *vs);

/*
 * views_scans - how many passes over /proc the nspid way has made to
 * find numbers of @vs's views (one mount's) since they were made:
 * info's pidns_scans.
 */
unsigned long long views_scans(const struct views *vs);

/*
 * views_caller - the view of a reader whose thread the daemon numbers
 * @pid (0: cannot place), that sees only the processes of @only_uid
 * (VIEW_ALL_UIDS: all). Never fails: a reader that cannot be placed, or
 * whose namespace is gone or cannot be translated, gets the nowhere
 * view; one whose view cannot be made gets an empty view whose ->error
 * says why, the reader's answer: -EAGAIN when it needs a slot while
 * every slot is held (views_hold()) or in use, or @holder (the
 * reader's uid, charged with a new view's slot) is at its bound or
 * would take root's reserve; -EMFILE when the daemon is out of
 * descriptors; -ENOMEM. On a pinned mount every reader, placed or not,
 * gets the pinned namespace's view. Release it with views_put(). Sets
 * *@shared_now when this call made the mount shared by more than one
 * view (see views_shared()).
 */
struct view *views_caller(struct views *vs, pid_t pid, uid_t only_uid,
			  uid_t holder, bool *shared_now);

/*
 * views_slot - the view in @slot, as a node named in it says: the
 * nowhere view when the slot holds none now. Release it with
 * views_put().
 */
struct view *views_slot(struct views *vs, unsigned int slot);

/*
 * views_hold - the kernel holds @delta more (or, negative, fewer)
 * inodes named in view slot @slot: while it holds any, the slot is
 * not reused (the FUSE layer's records, fuse/inodes.h, call it). Slots
 * VIEW_OWN and VIEW_NOWHERE, which are never reused, are not counted.
 */
void views_hold(struct views *vs, unsigned int slot, long delta);

/*
 * views_crowded - whether a view was made with less than a quarter of
 * the slots never used, since the last call (which it answers once).
 */
bool views_crowded(struct views *vs);

/*
 * views_idle_held - up to @max slots whose names the kernel still holds
 * though no request came for VIEW_IDLE_S seconds (and none was given
 * out since the last time), into @slot: their count. The caller has
 * the kernel drop their names, which frees them unless something holds
 * one open.
 */
unsigned int views_idle_held(struct views *vs, unsigned int *slot,
			     unsigned int max);

/*
 * views_set_uid_max - how many slots one uid other than root may hold
 * from now on in every table of views (1..VIEW_UID_MAX_LIMIT;
 * VIEW_UID_MAX until called). Slots held already stay.
 */
void views_set_uid_max(unsigned int max);

/*
 * views_reap - end the views no request uses whose namespace has no
 * process left (a stat each, see above), free the slots of ended
 * views and of a dead server's views that the kernel holds no inode
 * of, and put into @slot up to @max of those it still holds names of
 * (each once a VIEW_IDLE_S): their count. The caller has the kernel
 * drop their names. Call it from one thread, about once a second.
 */
unsigned int views_reap(struct views *vs, unsigned int *slot, unsigned int max);

/*
 * views_ended - the nsfs inodes of up to @max namespaces whose views
 * views_reap() ended since the last call, into @ns: their count. Such
 * a number may be given to a new namespace from then on: what is kept
 * under it is the ended one's.
 */
unsigned int views_ended(struct views *vs, ino_t *ns, unsigned int max);

/*
 * What a slot was last given, in memory that outlives the server
 * (super.h): a successor's views give each slot a dead server made
 * (the kernel may hold inodes named in it) to that view alone, charged
 * to the same holder.
 */
struct view_record {
	uint64_t ns_ino; /* 0: never given; VIEW_RECORD_ENDED: ended */
	uint32_t uid; /* only_uid */
	uint32_t holder; /* the uid charged (0 in a record before it) */
};

#define VIEW_RECORD_ENDED UINT64_MAX

/*
 * views_set_record - record every slot's view in @record (VIEW_SLOTS
 * of them) from now on, and reserve the slots it names already: such a
 * slot is the nowhere view (views_slot()) until a reader of its view
 * comes (views_caller()), which takes it again, or views_reap() frees
 * it once the kernel holds no inode of it; no other view is ever given
 * it meanwhile. Before any reader.
 */
void views_set_record(struct views *vs, struct view_record *record);

/* views_reserved - whether @slot is reserved (views_set_record()). */
bool views_reserved(struct views *vs, unsigned int slot);

/* views_put - release a view got from views_caller() or views_slot(). */
void views_put(struct views *vs, struct view *v);

/*
 * views_shared - whether a reader in another view than VIEW_OWN came in
 * the last VIEW_SHARED_S seconds.
 */
bool views_shared(const struct views *vs);

/*
 * view_to_daemon - the daemon's number of the task that @v numbers
 * @nr; -ENOENT when no such task exists in @v's namespace.
 */
int view_to_daemon(const struct view *v, pid_t nr);

/*
 * view_thread_to_daemon - the daemon's number of the thread that @v
 * numbers @nr, of the process the daemon numbers @pid; -ENOENT when
 * there is none.
 */
int view_thread_to_daemon(const struct view *v, pid_t pid, pid_t nr);

/*
 * view_from_daemon - the number @v gives the task the daemon numbers
 * @pid; -ENOENT when that task is not in @v's namespace.
 */
int view_from_daemon(const struct view *v, pid_t pid);

/*
 * view_pass_from_daemon - view_from_daemon() for a pass over every
 * process of the machine (a listing of proc/, proc/table): on the nspid
 * way a task found outside @v less than a second ago is not asked
 * again (view_int.h, NS_SEEN, says what that can miss).
 */
int view_pass_from_daemon(const struct view *v, pid_t pid);

/* view_shows_owner - whether @v shows the processes of owner @uid. */
bool view_shows_owner(const struct view *v, uid_t uid);

#endif
