/*
 * super_int: what the supervisor's files share (super.c, super_state.c,
 * super_store.c, supervisor.c), and no other file includes: the
 * supervisor's state and the steps one of them takes for another.
 *
 * Locking: a server's copy of the registry (mounts) is under s->lock;
 * the supervisor is one thread and takes no lock.
 */
#ifndef TIMINGFS_SUPER_INT_H
#define TIMINGFS_SUPER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/types.h>

#include "super.h"

/* How a supervisor came to be. */
enum super_mode {
	MODE_FRESH, /* it mounted */
	MODE_UPGRADE, /* exec'd by the last one: its server is a child */
	MODE_ADOPT, /* started by a server whose supervisor died */
	MODE_STORE, /* started by systemd from its descriptor store */
};

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

/* ---- super.c: the registry and its regions ---- */

/* super_close_fd, _cloexec - close @fd, set its FD_CLOEXEC; -1 allowed. */
void super_close_fd(int fd);
void super_cloexec(int fd, bool on);

/* super_alloc - an empty state, every descriptor -1; NULL: no memory. */
struct super *super_alloc(void);

/*
 * super_map_regions - map the request slots, the view records and the
 * history from their memfds, or make new ones. 0 or -ENOMEM.
 */
int super_map_regions(struct super *s);

/* super_mount_free - free @m, closing what it holds unless borrowed. */
void super_mount_free(struct super_mount *m);

/* super_find - the mount of @key, or NULL. Caller holds s->lock if shared. */
struct super_mount *super_find(struct super *s, uint64_t key);

/* super_unlink_mount - take @m out of the list, closing nothing. */
void super_unlink_mount(struct super *s, struct super_mount *m);

/* super_parse_u64 - a decimal number, all of @text. 0 or -EINVAL. */
int super_parse_u64(const char *text, uint64_t *v);

/* super_hex_of - @len bytes as hex, "-" for none: a new string or NULL. */
char *super_hex_of(const void *p, size_t len);

/*
 * super_unhex - the bytes of @hex into a new buffer, NUL-terminated
 * ("-": *@out NULL). 0, -EINVAL or -ENOMEM.
 */
int super_unhex(const char *hex, void **out, size_t *len);

/* ---- super_state.c: the state through exec ---- */

/* super_mounts_cloexec - FD_CLOEXEC on every descriptor the state names. */
void super_mounts_cloexec(struct super *s, bool on);

/* super_write_state - the state into the memfd @fd from its start. */
int super_write_state(struct super *s, int fd, enum super_mode mode,
		      pid_t server, int chan, int reply);

/*
 * super_save_state - the state in a new memfd, it and what it names
 * left open across exec: its descriptor, or -errno.
 */
int super_save_state(struct super *s, enum super_mode mode, pid_t server,
		     int chan, int reply);

/* ---- super_store.c: systemd's descriptor store ---- */

/* super_store_xlat - a descriptor's number in the state, now; -1: lost. */
int super_store_xlat(int fd);

/* super_store_kept - whether a service manager keeps the descriptors. */
bool super_store_kept(void);

/* super_store_begin - hand everything to the store, the state first. */
void super_store_begin(struct super *s);

/* super_store_mount - keep @m's descriptors in the store, or drop them. */
void super_store_mount(const struct super_mount *m, bool keep);

/* super_store_write - the state, as the store keeps it, written anew. */
void super_store_write(struct super *s);

#endif
