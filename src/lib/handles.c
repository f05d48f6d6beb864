/*
 * handles.c: the table of HANDLEs (handles.h). A handle's value is its
 * slot's index + 1 in bits 2..13 and the slot's generation above bit 16,
 * so that it is a multiple of 4 as Windows's are, never NULL, and never
 * one of the pseudo-handles (-1, -2). A slot's generation moves on when
 * its handle is closed, so the old value names nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "handles.h"

#define HANDLES_MAX 4096

struct slot {
	int fd;
	unsigned int gen; /* of the handle that has it, or the next one */
	unsigned char kind; /* enum handle_kind; 0: closed */
	unsigned int uses; /* handle_get()s not yet put */
};

static struct slot slots[HANDLES_MAX];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

/* A child forked while another thread held the lock gets it unlocked,
 * and the handles (descriptors it inherits) with it. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&slots_lock);
}

static void fork_done(void)
{
	pthread_mutex_unlock(&slots_lock);
}

__attribute__((constructor)) static void handles_init(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}

static uintptr_t encode(unsigned int idx, unsigned int gen)
{
	return (uintptr_t)gen << 16 | (uintptr_t)(idx + 1) << 2;
}

/* The slot @h names (locked), or NULL. */
static struct slot *lookup(void *h)
{
	uintptr_t v = (uintptr_t)h;
	unsigned int idx = (unsigned int)((v >> 2) & 0x3fff);

	if (idx == 0 || idx > HANDLES_MAX)
		return NULL;
	idx--;
	if (!slots[idx].kind || encode(idx, slots[idx].gen) != v)
		return NULL;
	return &slots[idx];
}

int handle_new(int fd, enum handle_kind kind, void **h)
{
	unsigned int i;
	int ret = -EMFILE;

	pthread_mutex_lock(&slots_lock);
	for (i = 0; i < HANDLES_MAX; i++) {
		struct slot *s = &slots[i];

		if (s->kind || s->uses)
			continue;
		if (!s->gen)
			s->gen = 1;
		s->fd = fd;
		s->kind = (unsigned char)kind;
		*h = (void *)encode(i, s->gen);
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&slots_lock);
	return ret;
}

int handle_get(void *h, enum handle_kind kind, int *fd)
{
	struct slot *s;
	int ret = -EBADF;

	pthread_mutex_lock(&slots_lock);
	s = lookup(h);
	if (s && s->kind == kind) {
		s->uses++;
		*fd = s->fd;
		ret = 0;
	}
	pthread_mutex_unlock(&slots_lock);
	return ret;
}

/* The slot's descriptor closed where it is closed and no longer used. */
static void release(struct slot *s)
{
	if (s->kind || s->uses)
		return;
	close(s->fd);
	s->fd = -1;
}

void handle_put(void *h)
{
	uintptr_t v = (uintptr_t)h;
	unsigned int idx = (unsigned int)((v >> 2) & 0x3fff) - 1;

	/* Only a value handle_get() accepted comes here: its slot is held
	 * even if the handle was closed meanwhile. */
	pthread_mutex_lock(&slots_lock);
	slots[idx].uses--;
	release(&slots[idx]);
	pthread_mutex_unlock(&slots_lock);
}

int handle_close(void *h)
{
	struct slot *s;
	int ret = -EBADF;

	pthread_mutex_lock(&slots_lock);
	s = lookup(h);
	if (s) {
		s->kind = 0;
		s->gen++;
		if (!s->gen)
			s->gen = 1;
		release(s);
		ret = 0;
	}
	pthread_mutex_unlock(&slots_lock);
	return ret;
}
