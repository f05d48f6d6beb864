/*
 * listener: taskstats exit records and proc connector fork records, read
 * by one thread, filed into the table of exited tasks.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/genetlink.h>
#include <linux/nsfs.h>
#include <linux/taskstats.h>

#include "listener.h"
#include "clock.h"
#include "nspid.h"
#include "procfile.h"
#include "units.h"

#define NSEC_PER_USEC 1000ULL
#define RCVBUF_BYTES (8 << 20)
#define LOST_LOG_EVERY_S 60
#define AGROUP_FLAG 0x20 /* linux/acct.h: the last task of its process */
#define BATCH_NS 2000000 /* 2 ms: a burst's records read together */

struct listener {
	struct engine *e;
	struct exited *x;
	uint64_t own_ns;
	listener_log_fn log;
	struct mnl_socket *ts; /* taskstats */
	struct mnl_socket *cn; /* proc connector, or NULL */
	uint16_t family;
	bool running;
	pthread_t thread;
	pthread_mutex_t lock; /* the sockets' reading, and buf */
	bool cn_failed; /* the fork records stopped */
	int stop[2]; /* a pipe: written to stop the thread */
	unsigned long long lost; /* read racily by listener_lost() */
	time_t lost_logged;
	pthread_mutex_t watch_lock; /* the watchers, and their calls */
	struct listener_watcher {
		listener_exit_fn fn;
		void *ctx;
	} * watch;
	size_t nwatch, watch_cap;
	char buf[1 << 16] __attribute__((aligned(8)));
};

/* ---- decoding ------------------------------------------------------- */

/*
 * Version 15 put a max and a min after each delay total: six more
 * counters before cpu_run_real_total, and six more between it and
 * ac_tgid. Version 16 moved them all to the end again.
 */
#define V15_EARLY_SHIFT (6 * 8)
#define V15_LATE_SHIFT (12 * 8)

static uint64_t get_u64(const unsigned char *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t get_u32(const unsigned char *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

int listener_parse_stats(const void *payload, size_t len, unsigned int version,
			 struct taskstats_fields *f)
{
	const unsigned char *p = payload;
	size_t early = 0, late = 0;
	uint16_t own;

	if (len < sizeof(own))
		return -EIO;
	memcpy(&own, p, sizeof(own));
	if (!version)
		version = own;
	if (version < 12)
		return -EIO; /* no ac_tgid */
	if (version == 15) {
		early = V15_EARLY_SHIFT;
		late = V15_LATE_SHIFT;
	}
	if (len < offsetof(struct taskstats, ac_tgid) + late + sizeof(uint32_t))
		return -EIO;
	memset(f, 0, sizeof(*f));
	f->version = version;
	f->flag = p[offsetof(struct taskstats, ac_flag)];
	f->run_ns = get_u64(
		p, offsetof(struct taskstats, cpu_run_virtual_total) + early);
	f->uid = get_u32(p, offsetof(struct taskstats, ac_uid) + early);
	f->gid = get_u32(p, offsetof(struct taskstats, ac_gid) + early);
	f->pid = get_u32(p, offsetof(struct taskstats, ac_pid) + early);
	f->etime_us = get_u64(p, offsetof(struct taskstats, ac_etime) + early);
	f->utime_us = get_u64(p, offsetof(struct taskstats, ac_utime) + early);
	f->stime_us = get_u64(p, offsetof(struct taskstats, ac_stime) + early);
	f->tgid = get_u32(p, offsetof(struct taskstats, ac_tgid) + late);
	memcpy(f->comm, p + offsetof(struct taskstats, ac_comm) + early,
	       sizeof(f->comm) - 1);
	return 0;
}

/* ---- filing --------------------------------------------------------- */

struct clocks {
	uint64_t real, boot, mono;
};

/*
 * When a thread exited and started, from its record and what was
 * learned when it was made: the record says how long it lived (ac_etime,
 * from its start to the moment the record was made, in its last act of
 * exiting), and its fork record when it started, so that the exit
 * instant is the kernel's, not the moment this thread got to read it.
 * Without a fork record (a task older than the daemon, or one whose
 * record was lost), the exit is taken as now.
 */
struct lifetime {
	uint64_t exit_real; /* CLOCK_REALTIME */
	uint64_t start_boot; /* CLOCK_BOOTTIME */
};

static void lifetime_of(const struct clocks *c, uint64_t etime_us,
			const struct exited_birth *b, struct lifetime *life)
{
	uint64_t age = etime_us * NSEC_PER_USEC, exit_mono;

	life->exit_real = c->real;
	life->start_boot = age < c->boot ? c->boot - age : 0;
	if (!b || !b->fork_ns || b->fork_ns > c->mono)
		return;
	exit_mono = b->fork_ns + age;
	life->start_boot = b->fork_ns + (c->boot - c->mono);
	if (exit_mono <= c->mono)
		life->exit_real = c->real - (c->mono - exit_mono);
}

/* What was learned of thread @tid of @tgid when it was made, if any. */
static const struct exited_birth *birth_of(struct listener *l, pid_t tgid,
					   pid_t tid, struct exited_birth *b)
{
	if (exited_learned(l->x, tid, b) < 0 || b->name[0].tgid != tgid ||
	    b->name[0].tid != tid)
		return NULL;
	return b;
}

static void file_thread(struct listener *l, const struct taskstats_fields *f,
			bool whole, const struct clocks *c,
			struct lifetime *life)
{
	pid_t tgid = (pid_t)f->tgid, tid = (pid_t)f->pid;
	const struct exited_birth *birth;
	struct exited_birth b;
	struct exited_task t;

	birth = birth_of(l, tgid, tid, &b);
	lifetime_of(c, f->etime_us, birth, life);
	memset(&t, 0, sizeof(t));
	t.flags = EXITED_THREAD | (whole ? EXITED_PROCESS : 0);
	t.uid = f->uid;
	t.gid = f->gid;
	t.cpu_ns = f->run_ns;
	t.utime_us = f->utime_us;
	t.stime_us = f->stime_us;
	t.start_ticks =
		engine_exit_start_ticks(l->e, tgid, tid, life->start_boot);
	t.ident = engine_exit_identity(l->e, tid);
	t.exit_ns = life->exit_real;
	memcpy(t.comm, f->comm, sizeof(t.comm));
	if (birth) {
		t.nnames = birth->nnames;
		memcpy(t.name, birth->name, sizeof(t.name));
	} else {
		t.nnames = 1;
		t.name[0].tgid = tgid;
		t.name[0].tid = tid;
	}
	t.name[0].ns = l->own_ns;
	exited_add(l->x, &t, c->mono);
}

struct sums {
	uint64_t utime, stime;
};

static int sum_thread(void *ctx, const struct exited_task *t,
		      const struct exited_name *name)
{
	struct sums *s = ctx;

	(void)name;
	s->utime += t->utime_us;
	s->stime += t->stime_us;
	return 0;
}

/*
 * The record of a whole process, after its last thread's: its runtime
 * from the thread group's record; its split from that record where the
 * kernel fills it in, else from its threads' records; its start and
 * names (numbers and comm) from its main thread's record.
 */
static void file_process(struct listener *l,
			 const struct taskstats_fields *last,
			 const struct taskstats_fields *group,
			 const struct clocks *c, const struct lifetime *life)
{
	pid_t tgid = (pid_t)last->tgid;
	struct exited_task t, leader;
	struct sums s = { 0, 0 };
	unsigned int i;

	memset(&t, 0, sizeof(t));
	t.flags = EXITED_PROCESS;
	t.uid = last->uid;
	t.gid = last->gid;
	t.cpu_ns = group->run_ns;
	t.utime_us = group->utime_us;
	t.stime_us = group->stime_us;
	if (!t.utime_us && !t.stime_us) {
		exited_for_each(l->x, l->own_ns, tgid, c->mono, sum_thread, &s);
		t.utime_us = s.utime;
		t.stime_us = s.stime;
	}
	t.exit_ns = life->exit_real;
	if (exited_find(l->x, l->own_ns, tgid, tgid, c->mono, &leader) == 0) {
		t.start_ticks = leader.start_ticks;
		t.ident = leader.ident;
		t.nnames = leader.nnames;
		memcpy(t.name, leader.name, sizeof(t.name));
		memcpy(t.comm, leader.comm, sizeof(t.comm));
	} else {
		/* Its main thread's record was lost: its start, roughly. */
		struct lifetime own;

		lifetime_of(c,
			    group->etime_us ? group->etime_us : last->etime_us,
			    NULL, &own);
		t.start_ticks = engine_exit_start_ticks(l->e, tgid, tgid,
							own.start_boot);
		t.nnames = 1;
		t.name[0].ns = l->own_ns;
		t.name[0].tgid = tgid;
		/* and its name, the last thread's */
		memcpy(t.comm, last->comm, sizeof(t.comm));
	}
	for (i = 0; i < t.nnames; i++)
		t.name[i].tid = 0;
	exited_add(l->x, &t, c->mono);
}

struct exit_msg {
	unsigned int cur; /* 0: the thread's part, 1: the thread group's */
	const void *stats[2];
	size_t len[2];
	uint32_t id[2]; /* the thread's id, the thread group's */
};

static int exit_attr(const struct nlattr *a, void *data)
{
	struct exit_msg *m = data;

	switch (mnl_attr_get_type(a)) {
	case TASKSTATS_TYPE_PID:
	case TASKSTATS_TYPE_TGID:
		if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			m->id[m->cur] = mnl_attr_get_u32(a);
		break;
	case TASKSTATS_TYPE_STATS:
		m->stats[m->cur] = mnl_attr_get_payload(a);
		m->len[m->cur] = mnl_attr_get_payload_len(a);
		break;
	}
	return MNL_CB_OK;
}

static int exit_top_attr(const struct nlattr *a, void *data)
{
	struct exit_msg *m = data;

	switch (mnl_attr_get_type(a)) {
	case TASKSTATS_TYPE_AGGR_PID:
		m->cur = 0;
		break;
	case TASKSTATS_TYPE_AGGR_TGID:
		m->cur = 1;
		break;
	default:
		return MNL_CB_OK;
	}
	mnl_attr_parse_nested(a, exit_attr, m);
	return MNL_CB_OK;
}

int listener_decode_exit(const struct nlmsghdr *nlh, struct listener_exit *out)
{
	struct exit_msg m;

	memset(&m, 0, sizeof(m));
	memset(out, 0, sizeof(*out));
	mnl_attr_parse(nlh, GENL_HDRLEN, exit_top_attr, &m);
	if (!m.stats[0] ||
	    listener_parse_stats(m.stats[0], m.len[0], 0, &out->thread) < 0 ||
	    out->thread.pid != m.id[0] || !out->thread.tgid)
		return -EIO;
	/* A process that only ever had one thread gets no group record. */
	out->whole = (out->thread.flag & AGROUP_FLAG) && !m.stats[1];
	out->has_group = m.stats[1] && m.id[1] == out->thread.tgid &&
			 listener_parse_stats(m.stats[1], m.len[1],
					      out->thread.version,
					      &out->group) == 0;
	return 0;
}

static void tell_watchers(struct listener *l, pid_t tgid, pid_t tid, bool end);

static void handle_exit(struct listener *l, const struct nlmsghdr *nlh)
{
	struct listener_exit x;
	struct lifetime life;
	struct clocks c;

	if (listener_decode_exit(nlh, &x) < 0)
		return;
	c.real = clock_ns(CLOCK_REALTIME);
	c.boot = clock_ns(CLOCK_BOOTTIME);
	c.mono = clock_ns(CLOCK_MONOTONIC);
	file_thread(l, &x.thread, x.whole, &c, &life);
	if (x.has_group)
		file_process(l, &x.thread, &x.group, &c, &life);
	tell_watchers(l, (pid_t)x.thread.tgid, (pid_t)x.thread.pid,
		      x.has_group || x.whole);
}

/* Tell every watcher of a thread's exit, and of its process's end. */
static void tell_watchers(struct listener *l, pid_t tgid, pid_t tid, bool end)
{
	size_t i;

	pthread_mutex_lock(&l->watch_lock);
	for (i = 0; i < l->nwatch; i++) {
		l->watch[i].fn(l->watch[i].ctx, tgid, tid);
		if (end)
			l->watch[i].fn(l->watch[i].ctx, tgid, 0);
	}
	pthread_mutex_unlock(&l->watch_lock);
}

int listener_watch(struct listener *l, listener_exit_fn fn, void *ctx)
{
	struct listener_watcher *grown;
	int ret = 0;

	pthread_mutex_lock(&l->watch_lock);
	if (l->nwatch == l->watch_cap) {
		grown = l->nwatch < LISTENER_WATCHERS_MAX ?
				realloc(l->watch, (l->watch_cap * 2 + 4) *
							  sizeof(*grown)) :
				NULL;
		if (!grown) {
			ret = l->nwatch < LISTENER_WATCHERS_MAX ? -ENOMEM :
								  -ENOSPC;
			goto out;
		}
		l->watch = grown;
		l->watch_cap = l->watch_cap * 2 + 4;
	}
	l->watch[l->nwatch++] = (struct listener_watcher){ fn, ctx };
out:
	pthread_mutex_unlock(&l->watch_lock);
	return ret;
}

void listener_unwatch(struct listener *l, listener_exit_fn fn, void *ctx)
{
	size_t i;

	pthread_mutex_lock(&l->watch_lock);
	for (i = 0; i < l->nwatch; i++)
		if (l->watch[i].fn == fn && l->watch[i].ctx == ctx) {
			l->watch[i] = l->watch[--l->nwatch];
			break;
		}
	pthread_mutex_unlock(&l->watch_lock);
}

/* ---- names in PID namespaces ---------------------------------------- */

static const char *path_ns(char *path, size_t size, pid_t tgid, pid_t tid)
{
	snprintf(path, size, "/proc/%d/task/%d/ns/pid", tgid, tid);
	return path;
}

/*
 * A task @tid of @tgid that was just made, at @fork_ns: remember when,
 * and, if it lives in a namespace below the daemon's, its numbers
 * there (the deepest levels, its own namespace first) while it lives.
 */
static void learn_task(struct listener *l, pid_t tgid, pid_t tid,
		       uint64_t fork_ns)
{
	pid_t nstgid[NSPID_LEVELS_MAX], nspid[NSPID_LEVELS_MAX];
	struct exited_birth b = { fork_ns, 1, { { l->own_ns, tgid, tid } } };
	char path[96], *status = NULL;
	ino_t own, ns[NSPID_LEVELS_MAX];
	unsigned int levels, k, n;
	int fd = -1, ret, err;

	own = procfile_ns_ino(path_ns(path, sizeof(path), tgid, tid), "pid");
	if (!own || own == l->own_ns)
		goto out; /* gone already (the instant alone), or ours */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", tgid, tid);
	if (procfile_read_alloc(path, 2048, &status) < 0)
		goto out;
	ret = nspid_parse(status, "NSpid:", nspid, NSPID_LEVELS_MAX);
	if (ret < 2 ||
	    nspid_parse(status, "NStgid:", nstgid, NSPID_LEVELS_MAX) != ret ||
	    nspid[0] != tid || nstgid[0] != tgid)
		goto out;
	levels = (unsigned int)ret;
	/* Its namespaces from its own up to the one below the daemon's. */
	fd = open(path_ns(path, sizeof(path), tgid, tid), O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? 0 : nspid_chain(fd, 0, ns, levels - 1, &err);
	for (k = 0; k < n && b.nnames < EXITED_NAMES; k++) {
		b.name[b.nnames].ns = ns[k];
		b.name[b.nnames].tgid = nstgid[levels - 1 - k];
		b.name[b.nnames].tid = nspid[levels - 1 - k];
		b.nnames++;
	}
out:
	exited_learn(l->x, tid, &b);
	if (fd >= 0)
		close(fd);
	free(status);
}

int listener_decode_fork(const struct nlmsghdr *nlh, struct listener_fork *out)
{
	const struct cn_msg *msg = mnl_nlmsg_get_payload(nlh);
	struct proc_event ev;

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*msg) + sizeof(ev) ||
	    msg->id.idx != CN_IDX_PROC || msg->id.val != CN_VAL_PROC)
		return -EIO;
	/* The event follows a 20-byte header: copied, to be aligned. */
	memcpy(&ev, msg->data, sizeof(ev));
	if (ev.what != PROC_EVENT_FORK)
		return -EIO;
	out->tgid = ev.event_data.fork.child_tgid;
	out->pid = ev.event_data.fork.child_pid;
	out->fork_ns = ev.timestamp_ns;
	return 0;
}

static void handle_connector(struct listener *l, const struct nlmsghdr *nlh)
{
	struct listener_fork f;

	if (listener_decode_fork(nlh, &f) == 0)
		learn_task(l, f.tgid, f.pid, f.fork_ns);
}

const struct nlmsghdr *listener_next_msg(const void *buf, size_t len,
					 size_t *off)
{
	const struct nlmsghdr *nlh;
	size_t left;

	if (*off > len || len - *off < sizeof(*nlh))
		return NULL;
	left = len - *off;
	nlh = (const struct nlmsghdr *)((const char *)buf + *off);
	/*
	 * Not mnl_nlmsg_ok(): it compares the length as an int, and takes
	 * one of 2 GiB or more for a negative number that fits.
	 */
	if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > left)
		return NULL;
	*off += NLMSG_ALIGN(nlh->nlmsg_len);
	return nlh;
}

/* ---- the thread ----------------------------------------------------- */

static void note_lost(struct listener *l)
{
	time_t now = time(NULL);

	__atomic_add_fetch(&l->lost, 1, __ATOMIC_RELAXED);
	engine_exits_lost(l->e); /* an identity met could be a lost one's */
	if (now - l->lost_logged >= LOST_LOG_EVERY_S) {
		l->lost_logged = now;
		l->log(LOG_WARNING,
		       "exit records lost: the receive buffer overran (%llu "
		       "times so far); those tasks are not retained",
		       __atomic_load_n(&l->lost, __ATOMIC_RELAXED));
	}
}

/*
 * Read what @sock holds now, @count'ing the messages; false when the
 * socket failed for good. Under l->lock, which guards the buffer.
 */
static bool drain(struct listener *l, struct mnl_socket *sock, bool exits,
		  unsigned int *count)
{
	const struct nlmsghdr *nlh;
	ssize_t len;
	size_t off;

	for (;;) {
		len = recv(mnl_socket_get_fd(sock), l->buf, sizeof(l->buf),
			   MSG_DONTWAIT);
		if (len < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return true;
			if (errno == ENOBUFS) {
				note_lost(l);
				continue;
			}
			return false;
		}
		off = 0;
		while ((nlh = listener_next_msg(l->buf, (size_t)len, &off))) {
			if (exits && nlh->nlmsg_type == l->family)
				handle_exit(l, nlh);
			else if (!exits && nlh->nlmsg_type == NLMSG_DONE)
				handle_connector(l, nlh);
			(*count)++;
		}
	}
}

/*
 * Everything queued now, fork records first: a task's fork record was
 * queued before its exit record, and its exit record before its parent
 * could learn that it exited.
 */
static bool drain_all(struct listener *l, unsigned int *count)
{
	bool ok;

	pthread_mutex_lock(&l->lock);
	if (l->cn && !l->cn_failed && !drain(l, l->cn, false, count)) {
		l->log(LOG_WARNING, "the fork records stopped: %s",
		       strerror(errno));
		l->cn_failed = true;
	}
	ok = drain(l, l->ts, true, count);
	pthread_mutex_unlock(&l->lock);
	return ok;
}

void listener_sync(struct listener *l)
{
	unsigned int count = 0;

	drain_all(l, &count);
}

static void *listen_thread(void *arg)
{
	struct listener *l = arg;
	uint64_t last = 0, now;
	struct pollfd pfd[3];
	unsigned int count;

	pfd[0].fd = mnl_socket_get_fd(l->ts);
	pfd[1].fd = l->cn ? mnl_socket_get_fd(l->cn) : -1;
	pfd[2].fd = l->stop[0];
	pfd[0].events = pfd[1].events = pfd[2].events = POLLIN;
	for (;;) {
		if (poll(pfd, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[2].revents)
			return NULL; /* listener_stop() */
		/*
		 * Woken again soon after the last time: a burst of tasks.
		 * Let its records gather for a moment rather than wake for
		 * each (a wake-up costs more than a record here). Their
		 * instants are the kernel's, and a reader who misses a
		 * task syncs first; a lone task is read at once, while its
		 * names can still be learned.
		 */
		now = clock_mono_ns();
		if (now - last < BATCH_NS)
			nanosleep(&(struct timespec){ 0, BATCH_NS }, NULL);
		last = now;
		count = 0;
		if (!drain_all(l, &count))
			break;
		if (l->cn_failed)
			pfd[1].fd = -1;
	}
	l->log(LOG_ERR, "the exit records stopped: %s", strerror(errno));
	return NULL;
}

/* ---- setting up ----------------------------------------------------- */

static int family_attr(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID &&
	    mnl_attr_validate(a, MNL_TYPE_U16) == 0)
		*(uint16_t *)data = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	mnl_attr_parse(nlh, GENL_HDRLEN, family_attr, data);
	return MNL_CB_OK;
}

/* Send @nlh on @sock and wait for its answer; 0 or -errno. */
static int nl_request(struct listener *l, struct mnl_socket *sock,
		      struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	unsigned int seq = nlh->nlmsg_seq, port = mnl_socket_get_portid(sock);
	ssize_t len;
	int ret;

	if (mnl_socket_sendto(sock, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		len = mnl_socket_recvfrom(sock, l->buf, sizeof(l->buf));
		if (len < 0)
			return -errno;
		ret = mnl_cb_run(l->buf, (size_t)len, seq, port, cb, data);
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}

static struct nlmsghdr *genl_message(char *buf, uint16_t type, uint8_t cmd,
				     unsigned int seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = TASKSTATS_GENL_VERSION;
	return nlh;
}

/* Room for a burst of records: beyond rmem_max where the daemon may. */
static void large_buffer(struct mnl_socket *sock)
{
	int size = RCVBUF_BYTES, fd = mnl_socket_get_fd(sock);

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

static int open_taskstats(struct listener *l, char *err, size_t errlen)
{
	char cpus[256], msg[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int ret;

	l->ts = mnl_socket_open(NETLINK_GENERIC);
	if (!l->ts || mnl_socket_bind(l->ts, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		snprintf(err, errlen, "generic netlink: %s", strerror(-ret));
		return ret;
	}
	nlh = genl_message(msg, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME);
	ret = nl_request(l, l->ts, nlh, family_cb, &l->family);
	if (ret < 0 || !l->family) {
		snprintf(err, errlen, "no taskstats in this kernel: %s",
			 strerror(ret < 0 ? -ret : ENOENT));
		return ret < 0 ? ret : -ENOENT;
	}
	large_buffer(l->ts);
	/* Every possible CPU, so that one brought online later is heard. */
	ret = procfile_read("/sys/devices/system/cpu/possible", cpus,
			    sizeof(cpus));
	if (ret <= 0) {
		snprintf(err, errlen, "/sys/devices/system/cpu/possible: %s",
			 strerror(ret < 0 ? -ret : EIO));
		return ret < 0 ? ret : -EIO;
	}
	cpus[strcspn(cpus, "\n")] = '\0';
	nlh = genl_message(msg, l->family, TASKSTATS_CMD_GET, 2);
	mnl_attr_put_strz(nlh, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, cpus);
	ret = nl_request(l, l->ts, nlh, NULL, NULL);
	if (ret < 0) {
		snprintf(err, errlen,
			 "cannot listen to taskstats exit records: %s%s",
			 strerror(-ret),
			 ret == -EPERM	? " (needs CAP_NET_ADMIN)" :
			 ret == -EINVAL ? " (needs the initial PID namespace)" :
					  "");
		return ret;
	}
	return 0;
}

/*
 * What a listener of the proc connector asks for. Since Linux 6.6 the
 * message may name the one kind of event wanted (the kernel's struct
 * proc_input): fork records alone, here. Older kernels read the first
 * field only and send every kind, the others being ignored here.
 */
struct proc_listen {
	uint32_t op; /* enum proc_cn_mcast_op */
	uint32_t event_type; /* enum proc_cn_event: PROC_EVENT_FORK */
};

static int open_connector(struct listener *l)
{
	char msg[MNL_SOCKET_BUFFER_SIZE];
	struct proc_listen listen = { PROC_CN_MCAST_LISTEN, PROC_EVENT_FORK };
	struct nlmsghdr *nlh;
	struct cn_msg *cn;

	l->cn = mnl_socket_open(NETLINK_CONNECTOR);
	if (!l->cn || mnl_socket_bind(l->cn, CN_IDX_PROC, getpid()) < 0)
		return -errno;
	large_buffer(l->cn);
	nlh = mnl_nlmsg_put_header(msg);
	nlh->nlmsg_type = NLMSG_DONE;
	cn = mnl_nlmsg_put_extra_header(nlh, sizeof(*cn) + sizeof(listen));
	cn->id.idx = CN_IDX_PROC;
	cn->id.val = CN_VAL_PROC;
	cn->len = sizeof(listen);
	memcpy(cn->data, &listen, sizeof(listen));
	if (mnl_socket_sendto(l->cn, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	return 0;
}

int listener_start(struct engine *e, struct exited *x, uint64_t own_ns,
		   listener_log_fn log, struct listener **out, char *err,
		   size_t errlen)
{
	struct listener *l;
	int ret;

	l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	pthread_mutex_init(&l->lock, NULL);
	pthread_mutex_init(&l->watch_lock, NULL);
	l->stop[0] = l->stop[1] = -1;
	l->e = e;
	l->x = x;
	l->own_ns = own_ns;
	l->log = log;
	ret = open_taskstats(l, err, errlen);
	if (ret < 0)
		goto fail;
	ret = open_connector(l);
	if (ret < 0) {
		log(LOG_WARNING,
		    "no proc connector (%s): exited tasks keep only the "
		    "daemon's numbers",
		    strerror(-ret));
		if (l->cn)
			mnl_socket_close(l->cn);
		l->cn = NULL;
	}
	if (pipe2(l->stop, O_CLOEXEC) < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot start the listener: %s",
			 strerror(-ret));
		goto fail;
	}
	ret = -pthread_create(&l->thread, NULL, listen_thread, l);
	if (ret < 0) {
		snprintf(err, errlen, "cannot start the listener: %s",
			 strerror(-ret));
		goto fail;
	}
	l->running = true;
	*out = l;
	return 0;
fail:
	listener_stop(l);
	return ret;
}

void listener_stop(struct listener *l)
{
	if (!l)
		return;
	if (l->running) {
		if (write(l->stop[1], "", 1) != 1)
			l->log(LOG_ERR, "cannot stop the listener: %s",
			       strerror(errno));
		else
			pthread_join(l->thread, NULL);
	}
	if (l->stop[0] >= 0) {
		close(l->stop[0]);
		close(l->stop[1]);
	}
	if (l->cn)
		mnl_socket_close(l->cn);
	if (l->ts)
		mnl_socket_close(l->ts);
	pthread_mutex_destroy(&l->lock);
	pthread_mutex_destroy(&l->watch_lock);
	free(l->watch);
	free(l);
}

unsigned long long listener_lost(const struct listener *l)
{
	return __atomic_load_n(&l->lost, __ATOMIC_RELAXED);
}
