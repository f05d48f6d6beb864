/*
 * super: the supervisor's registry of mounts, its shared regions, and
 * the server's side of the channel (super.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"
#include "daemon.h"
#include "log.h"
#include "serve.h"
#include "super.h"
#include "task.h"
#include "super_int.h"

void super_close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

void super_cloexec(int fd, bool on)
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

struct super *super_alloc(void)
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
	super_close_fd(s->history_fd);
	s->history_bytes = TASK_HISTORY_BYTES;
	s->history = shared_new("timingfs-history", s->history_bytes,
				&s->history_fd);
	return s->history ? 0 : -ENOMEM;
}

/* The shared regions, @nslots request slots, the view records and the
 * history. */
int super_map_regions(struct super *s)
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
	ret = super_map_regions(s);
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
void super_mount_free(struct super_mount *m)
{
	if (!m->borrowed) {
		if (m->key != SUPER_KEY_OWN)
			super_close_fd(m->fuse_fd);
		super_close_fd(m->keep_fd);
		super_close_fd(m->pidns_fd);
		super_close_fd(m->mntns_fd);
		super_close_fd(m->mnt_fd);
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
		super_mount_free(m);
	}
	if (s->slots)
		munmap(s->slots, s->slot_bytes * s->nslots);
	if (s->views)
		munmap(s->views, VIEW_SLOTS * sizeof(*s->views));
	if (s->history)
		munmap(s->history, s->history_bytes);
	super_close_fd(s->slots_fd);
	super_close_fd(s->views_fd);
	super_close_fd(s->history_fd);
	super_close_fd(s->chan);
	super_close_fd(s->sigfd);
	super_close_fd(s->server_fd);
	super_close_fd(s->reply_fd);
	free(s->self);
	free(s->mountpoint);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

struct super_mount *super_find(struct super *s, uint64_t key)
{
	struct super_mount *m;

	for (m = s->mounts; m && m->key != key; m = m->next)
		;
	return m;
}

/* Take @m out of the list, without closing anything. */
void super_unlink_mount(struct super *s, struct super_mount *m)
{
	struct super_mount **p;

	for (p = &s->mounts; *p; p = &(*p)->next)
		if (*p == m) {
			*p = m->next;
			return;
		}
}

int super_parse_u64(const char *text, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(text, &end, 10);
	return errno || end == text || *end ? -EINVAL : 0;
}

/* @len bytes as hex, or "-" for none: a new string. */
char *super_hex_of(const void *p, size_t len)
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
int super_unhex(const char *hex, void **out, size_t *len)
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
	char k[24], *hex = super_hex_of(req, len);
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
	m = super_find(s, key);
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
	m = super_find(s, key);
	if (m && m->key != SUPER_KEY_OWN) {
		super_unlink_mount(s, m);
		m->borrowed = true; /* attach closes them */
		super_mount_free(m);
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
	fd = super_save_state(s, MODE_ADOPT, getpid(), sv[1], -1);
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
	super_mounts_cloexec(s, true);
	if (pid < 0) {
		close(sv[0]);
		return -errno;
	}
	old = __atomic_exchange_n(&s->chan, sv[0], __ATOMIC_SEQ_CST);
	super_close_fd(old);
	log_msg(LOG_NOTICE, "started a new supervisor, pid %d", (int)pid);
	return 0;
}
