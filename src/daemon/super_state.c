/*
 * super_state: the supervisor's state written into a memfd and read
 * back, through exec or systemd's descriptor store (super.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "super.h"
#include "super_int.h"

void super_mounts_cloexec(struct super *s, bool on)
{
	struct super_mount *m;

	for (m = s->mounts; m; m = m->next) {
		super_cloexec(m->fuse_fd, on);
		super_cloexec(m->keep_fd, on);
		super_cloexec(m->pidns_fd, on);
		super_cloexec(m->mntns_fd, on);
		super_cloexec(m->mnt_fd, on);
	}
	super_cloexec(s->slots_fd, on);
	super_cloexec(s->views_fd, on);
	super_cloexec(s->history_fd, on);
	super_cloexec(s->control_fd, on);
}

static int put_line(FILE *f, const char *tag, const char *hex)
{
	return fprintf(f, "%s %s\n", tag, hex) < 0 ? -EIO : 0;
}

/* The state, written into the memfd @fd from its start. */
int super_write_state(struct super *s, int fd, enum super_mode mode,
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
	self = super_hex_of(s->self, strlen(s->self));
	mp = super_hex_of(s->mountpoint, strlen(s->mountpoint));
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
		init = super_hex_of(m->init_req, m->init_len);
		target = super_hex_of(m->target,
				      m->target ? strlen(m->target) : 0);
		opts = super_hex_of(m->opts, m->opts ? strlen(m->opts) : 0);
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
int super_save_state(struct super *s, enum super_mode mode, pid_t server,
		     int chan, int reply)
{
	int fd = memfd_create("timingfs-state", 0), ret;

	if (fd < 0)
		return -errno;
	ret = super_write_state(s, fd, mode, server, chan, reply);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	super_mounts_cloexec(s, false);
	super_cloexec(chan, false);
	super_cloexec(reply, false);
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
	ret = super_unhex(init, &m->init_req, &m->init_len);
	if (ret == 0)
		ret = super_unhex(target, (void **)&m->target, &len);
	if (ret == 0)
		ret = super_unhex(opts, (void **)&m->opts, &len);
	if (ret < 0)
		goto out_fields;
	m->fuse_fd = super_store_xlat(m->fuse_fd);
	m->keep_fd = super_store_xlat(m->keep_fd);
	m->pidns_fd = super_store_xlat(m->pidns_fd);
	m->mntns_fd = super_store_xlat(m->mntns_fd);
	m->mnt_fd = super_store_xlat(m->mnt_fd);
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
			ret = hex ? super_unhex(hex, &bytes, &len) : -ENOMEM;
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
	s->control_fd = super_store_xlat(s->control_fd);
	s->slots_fd = super_store_xlat(s->slots_fd);
	s->views_fd = super_store_xlat(s->views_fd);
	s->history_fd = super_store_xlat(s->history_fd);
	s->chan = super_store_xlat(s->chan);
	s->reply_fd = super_store_xlat(s->reply_fd);
	if (ret == 0 && (mode < MODE_FRESH || mode > MODE_STORE || !s->self ||
			 !s->mountpoint || !s->nslots || !super_find(s, 0)))
		ret = -EINVAL;
	if (ret == 0)
		ret = super_map_regions(s);
	if (ret < 0) {
		snprintf(err, errlen, "the state handed over is not valid: %s",
			 strerror(-ret));
		super_free(s);
		return ret;
	}
	super_mounts_cloexec(s, true);
	super_cloexec(s->chan, true);
	super_cloexec(s->reply_fd, true);
	*out = s;
	return 0;
}
