/*
 * super: the supervisor (super.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "control.h"
#include "daemon.h"
#include "log.h"
#include "serve.h"
#include "super.h"
#include "task.h"

/* How a supervisor came to be. */
enum super_mode {
	MODE_FRESH, /* it mounted */
	MODE_UPGRADE, /* exec'd by the last one: its server is a child */
	MODE_ADOPT, /* started by a server whose supervisor died */
	MODE_STORE, /* started by systemd from its descriptor store */
};

/*
 * systemd's descriptor store (sd_notify(3), FDSTORE=1): where the
 * supervisor leaves its descriptors and its state, so that a restart of
 * the service finds them (LISTEN_FDS) and takes every mount over.
 */
static struct {
	struct sockaddr_un addr;
	socklen_t len; /* 0: no service manager to tell */
	int *old_fd, *new_fd; /* from the store at start: "fdN" then, now */
	unsigned int nold;
} store;

/* A descriptor's number in the state: now, once through the store. */
static int xlat(int fd)
{
	unsigned int i;

	if (fd < 0 || !store.nold)
		return fd;
	for (i = 0; i < store.nold; i++)
		if (store.old_fd[i] == fd)
			return store.new_fd[i];
	return -1;
}

struct super {
	pthread_mutex_t lock; /* a server's: its copy of the registry */
	struct super_mount *mounts;
	unsigned int starts;
	uint64_t next_key; /* a server's: its start << 32 | a count */
	char *slots;
	size_t slot_bytes;
	unsigned int nslots;
	struct view_record *views; /* the own mount's: VIEW_SLOTS */
	int slots_fd, views_fd; /* their memfds, for an exec */
	void *history; /* the engine's history of splits shown (task.h) */
	size_t history_bytes;
	int history_fd; /* its memfd */
	int control_fd; /* the control socket, kept for an exec */
	char *self; /* the binary, as a path: an upgrade runs it anew */
	char *mountpoint;
	char **argv; /* as the daemon was started */
	enum super_mode mode;
	int chan; /* to the other process: -1 when none */
	pid_t server; /* the supervisor's: 0 while none runs */
	int server_fd; /* a pidfd of a server that is not a child; -1 */
	bool server_ending; /* it said it ends: its exit is no crash */
	unsigned int zombie_looks; /* its main thread seen a zombie */
	pid_t dying; /* a server given up while a thread of it was stuck */
	int server_status;
	int reply_fd; /* a timingfsctl upgrade waiting for the outcome */
	int sigfd; /* the supervisor's */
	int store_fd; /* its state, as systemd's store keeps it; -1 */
	bool stopping; /* SIGTERM or SIGINT came */
	bool leaving; /* SIGUSR1 under systemd: a restart, mounts kept */
	long long started_ms[SUPER_RESTARTS_FAST]; /* the last starts */
};

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

static void cloexec(int fd, bool on)
{
	int flags = fd >= 0 ? fcntl(fd, F_GETFD) : -1;

	if (flags >= 0)
		fcntl(fd, F_SETFD,
		      on ? flags | FD_CLOEXEC : flags & ~FD_CLOEXEC);
}

/* A shared memfd of @size bytes, mapped: its descriptor in *@fd. */
static void *shared_new(const char *name, size_t size, int *fd)
{
	void *p;

	*fd = memfd_create(name, MFD_CLOEXEC);
	if (*fd < 0)
		return NULL;
	if (ftruncate(*fd, (off_t)size) < 0) {
		close(*fd);
		*fd = -1;
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (p == MAP_FAILED) {
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return p;
}

static struct super *super_alloc(void)
{
	struct super *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->chan = s->sigfd = s->server_fd = s->reply_fd = s->store_fd = -1;
	s->slots_fd = s->views_fd = s->history_fd = s->control_fd = -1;
	s->slot_bytes = serve_slot_bytes();
	return s;
}

/*
 * The history's memfd, mapped: the one handed over, else (a state from
 * a binary before it, or one that cannot be mapped) a new one, sparse,
 * of TASK_HISTORY_BYTES.
 */
static int map_history(struct super *s)
{
	struct stat st;

	if (s->history_fd >= 0 && fstat(s->history_fd, &st) == 0 &&
	    st.st_size > 0) {
		s->history_bytes = (size_t)st.st_size;
		s->history = mmap(NULL, s->history_bytes,
				  PROT_READ | PROT_WRITE, MAP_SHARED,
				  s->history_fd, 0);
		if (s->history != MAP_FAILED)
			return 0;
	}
	close_fd(s->history_fd);
	s->history_bytes = TASK_HISTORY_BYTES;
	s->history = shared_new("timingfs-history", s->history_bytes,
				&s->history_fd);
	return s->history ? 0 : -ENOMEM;
}

/* The shared regions, @nslots request slots, the view records and the
 * history. */
static int map_regions(struct super *s)
{
	if (s->slots_fd < 0)
		s->slots = shared_new("timingfs-requests",
				      s->slot_bytes * s->nslots, &s->slots_fd);
	else
		s->slots = mmap(NULL, s->slot_bytes * s->nslots,
				PROT_READ | PROT_WRITE, MAP_SHARED, s->slots_fd,
				0);
	if (s->slots == MAP_FAILED || !s->slots) {
		s->slots = NULL;
		return -ENOMEM;
	}
	if (s->views_fd < 0)
		s->views = shared_new("timingfs-views",
				      VIEW_SLOTS * sizeof(*s->views),
				      &s->views_fd);
	else
		s->views = mmap(NULL, VIEW_SLOTS * sizeof(*s->views),
				PROT_READ | PROT_WRITE, MAP_SHARED, s->views_fd,
				0);
	if (s->views == MAP_FAILED || !s->views) {
		s->views = NULL;
		return -ENOMEM;
	}
	return map_history(s);
}

static char *self_path(void)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0)
		return NULL;
	path[n] = '\0';
	return strdup(path);
}

int super_new(int fuse_fd, int keep_fd, unsigned int workers, int control_fd,
	      const char *mountpoint, char **argv, struct super **out)
{
	struct super *s = super_alloc();
	struct super_mount *own = calloc(1, sizeof(*own));
	int ret = -ENOMEM;

	if (!s || !own)
		goto fail;
	own->key = SUPER_KEY_OWN;
	own->fuse_fd = fuse_fd;
	own->keep_fd = keep_fd;
	own->pidns_fd = own->mntns_fd = own->mnt_fd = -1;
	s->mounts = own;
	own = NULL;
	s->nslots = workers ? workers : 1;
	s->control_fd = control_fd;
	s->argv = argv;
	s->self = self_path();
	s->mountpoint = strdup(mountpoint);
	if (!s->self || !s->mountpoint)
		goto fail;
	ret = map_regions(s);
	if (ret < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	free(own);
	if (s)
		s->control_fd = -1; /* the caller's still */
	super_free(s);
	return ret;
}

/* Free @m and close what it holds (the own mount's device is the
 * session's; a borrowed one's, attach's). */
static void mount_free(struct super_mount *m)
{
	if (!m->borrowed) {
		if (m->key != SUPER_KEY_OWN)
			close_fd(m->fuse_fd);
		close_fd(m->keep_fd);
		close_fd(m->pidns_fd);
		close_fd(m->mntns_fd);
		close_fd(m->mnt_fd);
	}
	free(m->target);
	free(m->opts);
	free(m->init_req);
	free(m);
}

void super_free(struct super *s)
{
	struct super_mount *m;

	if (!s)
		return;
	while ((m = s->mounts)) {
		s->mounts = m->next;
		mount_free(m);
	}
	if (s->slots)
		munmap(s->slots, s->slot_bytes * s->nslots);
	if (s->views)
		munmap(s->views, VIEW_SLOTS * sizeof(*s->views));
	if (s->history)
		munmap(s->history, s->history_bytes);
	close_fd(s->slots_fd);
	close_fd(s->views_fd);
	close_fd(s->history_fd);
	close_fd(s->chan);
	close_fd(s->sigfd);
	close_fd(s->server_fd);
	close_fd(s->reply_fd);
	free(s->self);
	free(s->mountpoint);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static struct super_mount *find(struct super *s, uint64_t key)
{
	struct super_mount *m;

	for (m = s->mounts; m && m->key != key; m = m->next)
		;
	return m;
}

/* Take @m out of the list, without closing anything. */
static void unlink_mount(struct super *s, struct super_mount *m)
{
	struct super_mount **p;

	for (p = &s->mounts; *p; p = &(*p)->next)
		if (*p == m) {
			*p = m->next;
			return;
		}
}

static int parse_u64(const char *text, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(text, &end, 10);
	return errno || end == text || *end ? -EINVAL : 0;
}

/* @len bytes as hex, or "-" for none: a new string. */
static char *hex_of(const void *p, size_t len)
{
	const unsigned char *b = p;
	char *hex = malloc(len ? 2 * len + 1 : 2);
	size_t i;

	if (!hex)
		return NULL;
	if (!len || !p)
		return strcpy(hex, "-");
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	return hex;
}

/* The bytes of @hex ("-": none, *@out NULL), NUL-terminated too. */
static int unhex(const char *hex, void **out, size_t *len)
{
	size_t i, n = strlen(hex);
	unsigned char *b;
	unsigned int byte;

	*out = NULL;
	*len = 0;
	if (!strcmp(hex, "-"))
		return 0;
	if (n % 2 || !n)
		return -EINVAL;
	b = malloc(n / 2 + 1);
	if (!b)
		return -ENOMEM;
	for (i = 0; i < n / 2; i++) {
		if (sscanf(hex + 2 * i, "%2x", &byte) != 1) {
			free(b);
			return -EINVAL;
		}
		b[i] = (unsigned char)byte;
	}
	b[n / 2] = '\0';
	*out = b;
	*len = n / 2;
	return 0;
}

/* ---- the state, through exec ---------------------------------------- */

static void mounts_cloexec(struct super *s, bool on)
{
	struct super_mount *m;

	for (m = s->mounts; m; m = m->next) {
		cloexec(m->fuse_fd, on);
		cloexec(m->keep_fd, on);
		cloexec(m->pidns_fd, on);
		cloexec(m->mntns_fd, on);
		cloexec(m->mnt_fd, on);
	}
	cloexec(s->slots_fd, on);
	cloexec(s->views_fd, on);
	cloexec(s->history_fd, on);
	cloexec(s->control_fd, on);
}

static int put_line(FILE *f, const char *tag, const char *hex)
{
	return fprintf(f, "%s %s\n", tag, hex) < 0 ? -EIO : 0;
}

/* The state, written into the memfd @fd from its start. */
static int write_state(struct super *s, int fd, enum super_mode mode,
		       pid_t server, int chan, int reply)
{
	struct super_mount *m;
	char *init, *target, *opts, *self, *mp;
	int ret = 0;
	FILE *f;

	if (ftruncate(fd, 0) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	f = fdopen(dup(fd), "w");
	if (!f)
		return -ENOMEM;
	self = hex_of(s->self, strlen(s->self));
	mp = hex_of(s->mountpoint, strlen(s->mountpoint));
	fprintf(f,
		"timingfs-state 1\nmode %d\nstarts %u\nserver %d\n"
		"control %d\nslots %d %u\nviews %d\nhistory %d\nchan %d\n"
		"reply %d\n",
		(int)mode, s->starts, (int)server, s->control_fd, s->slots_fd,
		s->nslots, s->views_fd, s->history_fd, chan, reply);
	if (!self || !mp || put_line(f, "self", self) < 0 ||
	    put_line(f, "mountpoint", mp) < 0)
		ret = -ENOMEM;
	free(self);
	free(mp);
	pthread_mutex_lock(&s->lock);
	for (m = s->mounts; m && ret == 0; m = m->next) {
		init = hex_of(m->init_req, m->init_len);
		target = hex_of(m->target, m->target ? strlen(m->target) : 0);
		opts = hex_of(m->opts, m->opts ? strlen(m->opts) : 0);
		if (!init || !target || !opts ||
		    fprintf(f, "mount %" PRIu64 " %d %d %d %d %d %s %s %s\n",
			    m->key, m->fuse_fd, m->keep_fd, m->pidns_fd,
			    m->mntns_fd, m->mnt_fd, init, target, opts) < 0)
			ret = -ENOMEM;
		free(init);
		free(target);
		free(opts);
	}
	pthread_mutex_unlock(&s->lock);
	if (fclose(f) != 0 || ret < 0)
		return ret < 0 ? ret : -EIO;
	lseek(fd, 0, SEEK_SET);
	return 0;
}

/*
 * The state in a new memfd, its descriptors (and every one it names)
 * left open across exec: its descriptor, or -errno.
 */
static int save_state(struct super *s, enum super_mode mode, pid_t server,
		      int chan, int reply)
{
	int fd = memfd_create("timingfs-state", 0), ret;

	if (fd < 0)
		return -errno;
	ret = write_state(s, fd, mode, server, chan, reply);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	mounts_cloexec(s, false);
	cloexec(chan, false);
	cloexec(reply, false);
	return fd;
}

/*
 * A "mount" line of the state into a new mount at the head of the list.
 * Its hex fields are as long as the line (sscanf allocates them): an
 * attach's options may be as long as a control message allows.
 */
static int load_mount(struct super *s, const char *line)
{
	struct super_mount *m = calloc(1, sizeof(*m));
	char *init = NULL, *target = NULL, *opts = NULL;
	size_t len;
	int ret = -EINVAL;

	if (!m)
		return -ENOMEM;
	if (sscanf(line, "mount %" SCNu64 " %d %d %d %d %d %ms %ms %ms",
		   &m->key, &m->fuse_fd, &m->keep_fd, &m->pidns_fd,
		   &m->mntns_fd, &m->mnt_fd, &init, &target, &opts) != 9)
		goto out_fields;
	ret = unhex(init, &m->init_req, &m->init_len);
	if (ret == 0)
		ret = unhex(target, (void **)&m->target, &len);
	if (ret == 0)
		ret = unhex(opts, (void **)&m->opts, &len);
	if (ret < 0)
		goto out_fields;
	m->fuse_fd = xlat(m->fuse_fd);
	m->keep_fd = xlat(m->keep_fd);
	m->pidns_fd = xlat(m->pidns_fd);
	m->mntns_fd = xlat(m->mntns_fd);
	m->mnt_fd = xlat(m->mnt_fd);
	if (m->fuse_fd < 0 || m->keep_fd < 0)
		ret = -EINVAL;
out_fields:
	free(init);
	free(target);
	free(opts);
	if (ret < 0) {
		free(m->init_req);
		free(m->target);
		free(m->opts);
		free(m);
		return ret;
	}
	m->next = s->mounts;
	s->mounts = m;
	return 0;
}

int super_load(int fd, char **argv, struct super **out, char *err,
	       size_t errlen)
{
	struct super *s = super_alloc();
	FILE *f = fdopen(fd, "r");
	char *line = NULL, *hex = NULL;
	size_t cap = 0, len;
	int mode = -1, ret = 0, server = 0;
	void *bytes;

	if (!s || !f) {
		snprintf(err, errlen, "out of memory");
		if (f)
			fclose(f);
		else
			close(fd);
		super_free(s);
		return -ENOMEM;
	}
	s->argv = argv;
	if (getline(&line, &cap, f) < 0 || strcmp(line, "timingfs-state 1\n"))
		ret = -EINVAL;
	while (ret == 0 && getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "mount ", 6)) {
			ret = load_mount(s, line);
		} else if (!strncmp(line, "self ", 5) ||
			   !strncmp(line, "mountpoint ", 11)) {
			free(hex);
			hex = strndup(strchr(line, ' ') + 1,
				      strcspn(strchr(line, ' ') + 1, "\n"));
			ret = hex ? unhex(hex, &bytes, &len) : -ENOMEM;
			if (ret == 0 && line[0] == 's')
				s->self = bytes;
			else if (ret == 0)
				s->mountpoint = bytes;
		} else if (sscanf(line, "mode %d", &mode) == 1 ||
			   sscanf(line, "starts %u", &s->starts) == 1 ||
			   sscanf(line, "server %d", &server) == 1 ||
			   sscanf(line, "control %d", &s->control_fd) == 1 ||
			   sscanf(line, "slots %d %u", &s->slots_fd,
				  &s->nslots) == 2 ||
			   sscanf(line, "views %d", &s->views_fd) == 1 ||
			   sscanf(line, "history %d", &s->history_fd) == 1 ||
			   sscanf(line, "chan %d", &s->chan) == 1 ||
			   sscanf(line, "reply %d", &s->reply_fd) == 1) {
			continue;
		} else {
			ret = -EINVAL;
		}
	}
	free(line);
	free(hex);
	fclose(f);
	s->mode = (enum super_mode)mode;
	s->server = (pid_t)server;
	s->control_fd = xlat(s->control_fd);
	s->slots_fd = xlat(s->slots_fd);
	s->views_fd = xlat(s->views_fd);
	s->history_fd = xlat(s->history_fd);
	s->chan = xlat(s->chan);
	s->reply_fd = xlat(s->reply_fd);
	if (ret == 0 && (mode < MODE_FRESH || mode > MODE_STORE || !s->self ||
			 !s->mountpoint || !s->nslots || !find(s, 0)))
		ret = -EINVAL;
	if (ret == 0)
		ret = map_regions(s);
	if (ret < 0) {
		snprintf(err, errlen, "the state handed over is not valid: %s",
			 strerror(-ret));
		super_free(s);
		return ret;
	}
	mounts_cloexec(s, true);
	cloexec(s->chan, true);
	cloexec(s->reply_fd, true);
	*out = s;
	return 0;
}

int super_own_fd(const struct super *s)
{
	const struct super_mount *m;

	for (m = s->mounts; m && m->key != SUPER_KEY_OWN; m = m->next)
		;
	return m ? m->fuse_fd : -1;
}

int super_control_fd(const struct super *s)
{
	return s->control_fd;
}

const char *super_mountpoint(const struct super *s)
{
	return s->mountpoint;
}

/* ---- systemd's descriptor store ------------------------------------ */

int super_store_state(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	const char *names = getenv("LISTEN_FDNAMES");
	char *copy, *name, *save = NULL;
	int n, i, state = -1;

	if (!pid || !fds || !names || atoi(pid) != (int)getpid())
		return -1;
	n = atoi(fds);
	copy = strdup(names);
	store.old_fd = calloc((size_t)n + 1, sizeof(int));
	store.new_fd = calloc((size_t)n + 1, sizeof(int));
	if (!copy || !store.old_fd || !store.new_fd || n <= 0) {
		free(copy);
		return -1;
	}
	for (i = 0, name = strtok_r(copy, ":", &save); name && i < n;
	     i++, name = strtok_r(NULL, ":", &save)) {
		if (!strcmp(name, "state")) {
			state = 3 + i;
		} else if (!strncmp(name, "fd", 2)) {
			store.old_fd[store.nold] = atoi(name + 2);
			store.new_fd[store.nold++] = 3 + i;
		}
	}
	free(copy);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return state;
}

static void store_open(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t n = path ? strlen(path) : 0;

	if (store.len || !n || (path[0] != '/' && path[0] != '@') ||
	    n >= sizeof(store.addr.sun_path))
		return;
	store.addr.sun_family = AF_UNIX;
	memcpy(store.addr.sun_path, path, n);
	if (path[0] == '@')
		store.addr.sun_path[0] = '\0';
	store.len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
				(path[0] == '/'));
}

/* One message to the service manager, with @fd (-1: none). */
static int store_send(const char *text, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)text,
			     .iov_len = strlen(text) };
	struct msghdr msg = { .msg_name = &store.addr,
			      .msg_namelen = store.len,
			      .msg_iov = &iov,
			      .msg_iovlen = 1 };
	struct cmsghdr *c;
	int sock, ret;

	if (!store.len)
		return 0;
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	ret = sendmsg(sock, &msg, MSG_NOSIGNAL) < 0 ? -errno : 0;
	close(sock);
	return ret;
}

/* Keep @fd in the store as "fdN" (N its number), or drop it. */
static void store_fd(int fd, bool keep)
{
	char text[64];

	if (fd < 0 || !store.len)
		return;
	/* Any kept under the name before goes first (an upgrade's). */
	snprintf(text, sizeof(text), "FDSTOREREMOVE=1\nFDNAME=fd%d", fd);
	store_send(text, -1);
	if (!keep)
		return;
	snprintf(text, sizeof(text), "FDSTORE=1\nFDNAME=fd%d", fd);
	if (store_send(text, fd) < 0)
		log_msg(LOG_WARNING,
			"systemd keeps no descriptor of this daemon: a "
			"restart of the service loses the mounts");
}

static void store_mount(const struct super_mount *m, bool keep)
{
	store_fd(m->fuse_fd, keep);
	store_fd(m->keep_fd, keep);
	store_fd(m->pidns_fd, keep);
	store_fd(m->mntns_fd, keep);
	store_fd(m->mnt_fd, keep);
}

/* The state, as the store keeps it: written anew at every change. */
static void store_state(struct super *s)
{
	if (store.len && s->store_fd >= 0)
		write_state(s, s->store_fd, MODE_STORE, 0, -1, -1);
}

/*
 * Under a service manager with a descriptor store: what it kept from
 * the last process goes (it is this one's now, under other numbers),
 * and everything is kept anew, the state first.
 */
static void store_begin(struct super *s)
{
	struct super_mount *m;
	unsigned int i;

	store_open();
	if (!store.len)
		return;
	for (i = 0; i < store.nold; i++) {
		char text[64];

		snprintf(text, sizeof(text), "FDSTOREREMOVE=1\nFDNAME=fd%d",
			 store.old_fd[i]);
		store_send(text, -1);
	}
	store_send("FDSTOREREMOVE=1\nFDNAME=state", -1);
	s->store_fd = memfd_create("timingfs-state", MFD_CLOEXEC);
	if (s->store_fd < 0)
		return;
	store_state(s);
	if (store_send("FDSTORE=1\nFDNAME=state", s->store_fd) < 0) {
		store.len = 0; /* no store: nothing more to tell */
		return;
	}
	store_fd(s->control_fd, true);
	store_fd(s->slots_fd, true);
	store_fd(s->views_fd, true);
	store_fd(s->history_fd, true);
	for (m = s->mounts; m; m = m->next)
		store_mount(m, true);
}

bool super_leaving(const struct super *s)
{
	return s->leaving;
}

/* ---- the supervisor --------------------------------------------- */

static void reply(int sock, const char *status, const char *text)
{
	const char *field[] = { status, text };

	if (sock >= 0) {
		control_send(sock, field, 2, NULL, 0);
		close(sock);
	}
}

/* An attached mount the server made: the descriptors come with it. */
static void took_attach(struct super *s, struct control_msg *msg, uint64_t key)
{
	struct super_mount *m = calloc(1, sizeof(*m));
	size_t len;

	if (!m || msg->nfields != 4 || msg->nfds < 4 ||
	    !(m->target = strdup(msg->field[2])) ||
	    !(m->opts = strdup(msg->field[3]))) {
		log_msg(LOG_ERR,
			"the server's attached mount %" PRIu64 " is not kept: "
			"%s",
			key, m ? "a bad message" : "out of memory");
		if (m) {
			free(m->target);
			free(m);
		}
		control_close_fds(msg);
		return;
	}
	(void)len;
	m->key = key;
	m->fuse_fd = msg->fd[0];
	m->pidns_fd = msg->fd[1];
	m->mntns_fd = msg->fd[2];
	m->keep_fd = msg->fd[3];
	m->mnt_fd = msg->nfds > 4 ? msg->fd[4] : -1;
	msg->nfds = 0;
	m->next = s->mounts;
	s->mounts = m;
	store_mount(m, true);
	store_state(s);
}

static void upgrade(struct super *s, int sock);

/* One message of the server's. */
static void take_message(struct super *s, struct control_msg *msg)
{
	struct super_mount *m;
	uint64_t key;

	if (msg->nfields == 1 && !strcmp(msg->field[0], "upgrade") &&
	    msg->nfds == 1) {
		msg->nfds = 0;
		upgrade(s, msg->fd[0]);
		return;
	}
	if (msg->nfields < 2 || parse_u64(msg->field[1], &key) < 0) {
		control_close_fds(msg);
		return;
	}
	if (!strcmp(msg->field[0], "end")) {
		s->server_ending = true;
		s->server_status = (int)key;
		control_close_fds(msg);
		return;
	}
	m = find(s, key);
	if (!strcmp(msg->field[0], "attach") && !m) {
		took_attach(s, msg, key);
		return;
	}
	control_close_fds(msg);
	if (!m)
		return;
	if (!strcmp(msg->field[0], "init") && msg->nfields == 3) {
		free(m->init_req);
		if (unhex(msg->field[2], &m->init_req, &m->init_len) < 0)
			log_msg(LOG_ERR, "a bad INIT from the server");
		store_state(s);
	} else if (!strcmp(msg->field[0], "gone")) {
		unlink_mount(s, m);
		store_mount(m, false);
		mount_free(m);
		store_state(s);
	}
}

static void take_messages(struct super *s)
{
	static struct control_msg msg; /* the supervisor is one thread */
	int ret;

	while (s->chan >= 0) {
		struct pollfd p = { .fd = s->chan, .events = POLLIN };

		if (poll(&p, 1, 0) != 1)
			return;
		ret = control_recv(s->chan, &msg);
		if (ret == -EPIPE || ret == -ECONNRESET) {
			close(s->chan); /* the server is going */
			s->chan = -1;
			return;
		}
		if (ret == 0)
			take_message(s, &msg);
	}
}

/*
 * Fork a server. 0 in it; 1 in the supervisor; -errno when none could
 * be made.
 */
static int start_server(struct super *s)
{
	int sv[2];
	sigset_t chld;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	s->starts++;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		s->starts--;
		return -errno;
	}
	if (pid == 0) {
		close(sv[0]);
		close_fd(s->sigfd);
		s->sigfd = -1;
		close_fd(s->chan);
		close_fd(s->server_fd);
		close_fd(s->reply_fd);
		s->server_fd = s->reply_fd = -1;
		s->chan = sv[1];
		s->server = 0;
		s->next_key = (uint64_t)s->starts << 32;
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		pthread_sigmask(SIG_UNBLOCK, &chld, NULL);
		return 0;
	}
	close(sv[1]);
	close_fd(s->chan);
	close_fd(s->server_fd);
	s->server_fd = -1;
	s->chan = sv[0];
	s->server = pid;
	s->server_ending = false;
	s->zombie_looks = 0;
	memmove(s->started_ms, s->started_ms + 1,
		sizeof(s->started_ms) - sizeof(s->started_ms[0]));
	s->started_ms[SUPER_RESTARTS_FAST - 1] = clock_mono_ms();
	store_state(s); /* its count */
	if (s->mode == MODE_UPGRADE) { /* an upgrade's: it is over */
		char text[128];

		snprintf(text, sizeof(text),
			 "upgraded: server %u (pid %d) serves every mount",
			 s->starts, (int)pid);
		log_msg(LOG_NOTICE, "%s", text);
		reply(s->reply_fd, "0", text);
		s->reply_fd = -1;
		s->mode = MODE_FRESH;
	}
	return 1;
}

/*
 * The server ended (@wstatus, or -1: not a child, its status unknown):
 * whether the supervisor ends too (with *@status), or starts another.
 */
static bool server_ended(struct super *s, int wstatus, int *status)
{
	pid_t pid = s->server;

	s->server = 0;
	take_messages(s); /* what it said before it went */
	if (wstatus >= 0 && WIFEXITED(wstatus)) {
		*status = WEXITSTATUS(wstatus);
		return true;
	}
	if (s->server_ending) {
		*status = s->server_status;
		return true;
	}
	if (s->leaving) {
		log_msg(LOG_NOTICE,
			"the service restarts: every mount stays in its "
			"descriptor store");
		*status = 0;
		return true;
	}
	if (s->stopping) {
		log_msg(LOG_ERR, "the server %d died while stopping", (int)pid);
		*status = EXIT_SERVE;
		return true;
	}
	if (wstatus >= 0)
		log_msg(LOG_WARNING,
			"the server %d died of signal %d (%s): starting "
			"server %u",
			(int)pid, WTERMSIG(wstatus),
			strsignal(WTERMSIG(wstatus)), s->starts + 1);
	else
		log_msg(LOG_WARNING, "the server %d died: starting server %u",
			(int)pid, s->starts + 1);
	return false;
}

/* Start a server, no more than SUPER_RESTARTS_FAST a second. */
static int restart(struct super *s)
{
	long long wait = s->started_ms[0] + 1000 - clock_mono_ms();

	if (s->started_ms[0] && wait > 0)
		usleep((useconds_t)wait * 1000);
	return start_server(s);
}

/*
 * Run the binary at @s->self with SUPER_CHECK_ENV: 0 when it exits 0
 * within SUPER_CHECK_MS, else -1 with its last line of output in @why.
 */
static int check_binary(struct super *s, char *why, size_t size)
{
	char buf[4096], *line, *end;
	long long deadline = clock_mono_ms() + SUPER_CHECK_MS;
	size_t have = 0;
	int pipefd[2], wstatus = 0;
	struct pollfd p;
	ssize_t n;
	pid_t pid;

	snprintf(why, size, "%s: cannot run it", s->self);
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		setenv(SUPER_CHECK_ENV, "1", 1);
		execv(s->self, s->argv);
		fprintf(stderr, "%s: %s\n", s->self, strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	p = (struct pollfd){ .fd = pipefd[0], .events = POLLIN };
	while (clock_mono_ms() < deadline &&
	       poll(&p, 1, (int)(deadline - clock_mono_ms())) >= 0) {
		n = read(pipefd[0], buf + have, sizeof(buf) - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have == sizeof(buf) - 1) /* keep the end */
			have = 0;
	}
	close(pipefd[0]);
	if (clock_mono_ms() >= deadline)
		kill(pid, SIGKILL);
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
		return 0;
	buf[have] = '\0';
	while (have && buf[have - 1] == '\n')
		buf[--have] = '\0';
	line = strrchr(buf, '\n');
	line = line ? line + 1 : buf;
	end = line + strlen(line);
	if (end > line)
		snprintf(why, size, "%.400s", line);
	else if (WIFEXITED(wstatus))
		snprintf(why, size, "%s exited %d at start", s->self,
			 WEXITSTATUS(wstatus));
	else
		snprintf(why, size, "%s died at start (signal %d)", s->self,
			 WTERMSIG(wstatus));
	return -1;
}

/*
 * An upgrade (SIGUSR2, or timingfsctl's on @sock, -1 for none): the
 * binary at the path the daemon was started from, tried first, then
 * executed in this process's place with the state; it kills the old
 * server and starts its own. Returns only when it cannot.
 */
static void upgrade(struct super *s, int sock)
{
	char why[512], num[16];
	int fd;

	if (s->reply_fd >= 0) {
		reply(sock, "1", "an upgrade is under way");
		return;
	}
	if (check_binary(s, why, sizeof(why)) < 0) {
		log_msg(LOG_ERR, "upgrade refused: %s; the server %d serves on",
			why, (int)s->server);
		reply(sock, "1", why);
		return;
	}
	/* The server's channel too: it must not hear its supervisor
	 * die, and start another, while the exec is under way. */
	fd = save_state(s, MODE_UPGRADE, s->server, s->chan, sock);
	if (fd < 0) {
		snprintf(why, sizeof(why), "cannot hand the state over: %s",
			 strerror(-fd));
		log_msg(LOG_ERR, "upgrade refused: %s", why);
		reply(sock, "1", why);
		return;
	}
	snprintf(num, sizeof(num), "%d", fd);
	setenv(SUPER_STATE_ENV, num, 1);
	log_msg(LOG_NOTICE, "upgrading to %s", s->self);
	execv(s->self, s->argv);
	snprintf(why, sizeof(why), "cannot execute %s: %s", s->self,
		 strerror(errno));
	unsetenv(SUPER_STATE_ENV);
	close(fd);
	mounts_cloexec(s, true);
	cloexec(s->chan, true);
	log_msg(LOG_ERR, "upgrade refused: %s", why);
	reply(sock, "1", why);
}

/* Signals: whether to stop. */
static void take_signals(struct super *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			s->stopping = true;
			if (s->server)
				kill(s->server, SIGTERM);
		} else if (si.ssi_signo == SIGHUP) {
			if (s->server)
				kill(s->server, SIGHUP);
		} else if (si.ssi_signo == SIGUSR2 && !s->stopping) {
			upgrade(s, -1);
		} else if (si.ssi_signo == SIGUSR1 && store.len &&
			   !s->stopping) {
			/* The service restarts: all stays in the store. */
			s->stopping = s->leaving = true;
			if (s->server)
				kill(s->server, SIGKILL);
		}
	}
}

/*
 * Whether the server is dying with a thread stuck in the kernel: its
 * main thread is a zombie, at two looks in a row, and it did not say it
 * ends. A thread of a server killed while it wrote a notification that
 * waits for a directory's lock (an entry to invalidate) waits for the
 * lookup holding that lock, which only a live server answers: so the
 * process never ends, and no SIGCHLD comes, until a successor answers
 * it. That thread never returns to the process's memory.
 */
static bool dying(struct super *s)
{
	char path[64], buf[256], *state;
	ssize_t n;
	int fd;

	if (s->stopping || s->server_ending) {
		s->zombie_looks = 0;
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)s->server);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	state = strrchr(buf, ')');
	if (n > 0 && state && state[1] == ' ' && state[2] == 'Z')
		s->zombie_looks++;
	else
		s->zombie_looks = 0;
	return s->zombie_looks >= 2;
}

/*
 * A server given up as dying (dying()) has ended at last: what its
 * stuck thread took meanwhile is sent again to the server now, on a
 * kernel that can (the successor asked for the rest already; what it
 * has read and not answered yet comes again too, and is answered
 * twice, harmlessly).
 */
static void resend_late(struct super *s)
{
	struct super_mount *m, *own = find(s, SUPER_KEY_OWN);

	s->dying = 0;
	if (!own || !own->init_req || getenv("TIMINGFS_TEST_NO_RESEND") ||
	    !serve_init_has_resend(own->init_req, own->init_len))
		return;
	for (m = s->mounts; m; m = m->next)
		serve_resend(m->fuse_fd);
}

/*
 * The server, sent SIGKILL, is no more: reaped, or dying with a thread
 * stuck in the kernel (dying()), which only its successor frees; that
 * one is reaped later, in super_run(), which then sends again what the
 * stuck thread took (resend_late()). Never a wait for the process to
 * end: it may never end without a successor.
 */
static void wait_killed(struct super *s)
{
	int wstatus;
	pid_t pid;

	s->zombie_looks = 0;
	for (;;) {
		pid = waitpid(s->server, &wstatus, WNOHANG);
		if (pid == s->server || (pid < 0 && errno != EINTR))
			break;
		if (pid == 0 && dying(s)) {
			s->dying = s->server;
			break;
		}
		poll(NULL, 0, SUPER_KILLED_LOOK_MS);
	}
	s->server = 0;
}

/*
 * How this supervisor begins: a fresh one starts its server; one
 * exec'd for an upgrade kills the old server first (its child still),
 * whose requests the new one answers, and starts the new one as soon as
 * the old one is no more (wait_killed()); one a server started watches
 * it.
 */
static int begin(struct super *s)
{
	if (s->mode == MODE_ADOPT) {
		s->server_fd = (int)syscall(SYS_pidfd_open, s->server, 0);
		if (s->server_fd >= 0) {
			cloexec(s->server_fd, true);
			return 1;
		}
		if (errno != ESRCH)
			return -errno;
		s->server = 0; /* gone already: as after a crash */
		return start_server(s);
	}
	if (s->mode == MODE_UPGRADE && s->server > 0) {
		kill(s->server, SIGKILL);
		wait_killed(s);
	}
	return start_server(s);
}

bool super_run(struct super *s, int *status)
{
	struct pollfd p[3];
	sigset_t set;
	int wstatus, ret;
	pid_t pid;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0 ||
	    (s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_msg(LOG_ERR, "cannot take signals: %s", strerror(errno));
		*status = EXIT_SERVE;
		return true;
	}
	store_begin(s);
	ret = begin(s);
	for (;;) {
		if (ret == 0)
			return false;
		if (ret < 0) {
			log_msg(LOG_ERR, "cannot start a server: %s",
				strerror(-ret));
			*status = EXIT_SERVE;
			return true;
		}
		p[0] = (struct pollfd){ .fd = s->sigfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = s->chan, .events = POLLIN };
		p[2] = (struct pollfd){ .fd = s->server_fd, .events = POLLIN };
		if (poll(p, 3, s->server ? SUPER_LOOK_MS : -1) < 0 &&
		    errno != EINTR) {
			*status = EXIT_SERVE;
			return true;
		}
		if (p[1].revents)
			take_messages(s);
		take_signals(s);
		if (s->server && dying(s)) {
			/* Its last thread is stuck: the successor frees it. */
			s->dying = s->server;
			if (server_ended(s, -1, status))
				return true;
			ret = restart(s);
			continue;
		}
		if (s->server_fd >= 0 && p[2].revents) {
			/* Not a child: a server that started this one. */
			if (server_ended(s, -1, status))
				return true;
			ret = restart(s);
			continue;
		}
		while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
			if (pid == s->dying)
				resend_late(s);
			if (pid != s->server || s->server_fd >= 0)
				continue;
			if (server_ended(s, wstatus, status))
				return true;
			ret = restart(s);
			if (ret <= 0)
				break;
		}
	}
}

/* ---- in the server ------------------------------------------------ */

unsigned int super_starts(const struct super *s)
{
	return s->starts;
}

struct super_mount *super_mounts(const struct super *s)
{
	return s->mounts;
}

uint64_t super_new_key(struct super *s)
{
	return __atomic_add_fetch(&s->next_key, 1, __ATOMIC_SEQ_CST);
}

void *super_slots(const struct super *s, size_t *slot_bytes,
		  unsigned int *nslots)
{
	*slot_bytes = s->slot_bytes;
	*nslots = s->nslots;
	return s->slots;
}

struct view_record *super_view_record(const struct super *s)
{
	return s->views;
}

void *super_history(const struct super *s, size_t *bytes)
{
	*bytes = s->history_bytes;
	return s->history;
}

int super_fd(const struct super *s)
{
	return s->chan;
}

static int tell(struct super *s, const char *const *field, unsigned int n,
		const int *fd, unsigned int nfds)
{
	int chan = __atomic_load_n(&s->chan, __ATOMIC_SEQ_CST);

	return chan < 0 ? -EPIPE : control_send(chan, field, n, fd, nfds);
}

int super_tell_init(struct super *s, uint64_t key, const void *req, size_t len)
{
	char k[24], *hex = hex_of(req, len);
	const char *field[3] = { "init", k, hex };
	struct super_mount *m;
	void *copy = malloc(len);

	if (!hex || !copy) {
		free(hex);
		free(copy);
		return -ENOMEM;
	}
	memcpy(copy, req, len);
	pthread_mutex_lock(&s->lock);
	m = find(s, key);
	if (m) {
		free(m->init_req);
		m->init_req = copy;
		m->init_len = len;
		copy = NULL;
	}
	pthread_mutex_unlock(&s->lock);
	free(copy);
	snprintf(k, sizeof(k), "%" PRIu64, key);
	len = (size_t)tell(s, field, 3, NULL, 0);
	free(hex);
	return (int)len;
}

int super_tell_attach(struct super *s, const struct super_mount *m)
{
	char k[24];
	const char *field[4] = { "attach", k, m->target, m->opts };
	int fd[5] = { m->fuse_fd, m->pidns_fd, m->mntns_fd, m->keep_fd,
		      m->mnt_fd };
	struct super_mount *copy = calloc(1, sizeof(*copy));

	if (copy) { /* this server's copy, for a supervisor it starts */
		*copy = *m;
		copy->borrowed = true;
		copy->init_req = NULL;
		copy->target = strdup(m->target);
		copy->opts = strdup(m->opts);
		pthread_mutex_lock(&s->lock);
		copy->next = s->mounts;
		s->mounts = copy;
		pthread_mutex_unlock(&s->lock);
	}
	snprintf(k, sizeof(k), "%" PRIu64, m->key);
	return tell(s, field, 4, fd, m->mnt_fd >= 0 ? 5 : 4);
}

int super_tell_gone(struct super *s, uint64_t key)
{
	char k[24];
	const char *field[2] = { "gone", k };
	struct super_mount *m;

	pthread_mutex_lock(&s->lock);
	m = find(s, key);
	if (m && m->key != SUPER_KEY_OWN) {
		unlink_mount(s, m);
		m->borrowed = true; /* attach closes them */
		mount_free(m);
	}
	pthread_mutex_unlock(&s->lock);
	snprintf(k, sizeof(k), "%" PRIu64, key);
	return tell(s, field, 2, NULL, 0);
}

int super_tell_end(struct super *s, int status)
{
	char k[24];
	const char *field[2] = { "end", k };

	snprintf(k, sizeof(k), "%d", status);
	return tell(s, field, 2, NULL, 0);
}

int super_tell_upgrade(struct super *s, int sock)
{
	const char *field[1] = { "upgrade" };

	return tell(s, field, 1, &sock, 1);
}

void super_adopt(struct super *s, struct super_mount *m)
{
	pthread_mutex_lock(&s->lock);
	m->borrowed = true;
	pthread_mutex_unlock(&s->lock);
}

int super_respawn(struct super *s)
{
	char state[48], **envp;
	size_t n = 0, i, j;
	int sv[2], fd, old;
	pid_t pid;

	while (environ[n])
		n++;
	envp = calloc(n + 2, sizeof(*envp));
	if (!envp)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		free(envp);
		return -errno;
	}
	fd = save_state(s, MODE_ADOPT, getpid(), sv[1], -1);
	if (fd < 0) {
		close(sv[0]);
		close(sv[1]);
		free(envp);
		return fd;
	}
	snprintf(state, sizeof(state), "%s=%d", SUPER_STATE_ENV, fd);
	for (i = j = 0; i < n; i++)
		if (strncmp(environ[i], SUPER_STATE_ENV "=",
			    sizeof(SUPER_STATE_ENV)))
			envp[j++] = environ[i];
	envp[j] = state;
	/* Threads run here: the child makes only system calls. */
	pid = fork();
	if (pid == 0) {
		setsid();
		execve(s->self, s->argv, envp);
		_exit(127);
	}
	free(envp);
	close(fd);
	close(sv[1]);
	mounts_cloexec(s, true);
	if (pid < 0) {
		close(sv[0]);
		return -errno;
	}
	old = __atomic_exchange_n(&s->chan, sv[0], __ATOMIC_SEQ_CST);
	close_fd(old);
	log_msg(LOG_NOTICE, "started a new supervisor, pid %d", (int)pid);
	return 0;
}
