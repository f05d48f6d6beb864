/*
 * hash: buckets of singly linked chains, a power of two of them, the
 * bucket of a node the low bits of its hash.
 */
#include <errno.h>
#include <stdlib.h>

#include "hash.h"

#define HASH_MIN_BUCKETS 64

void hash_init(struct hash_table *t)
{
	t->bucket = NULL;
	t->nbuckets = 0;
	t->count = 0;
}

void hash_destroy(struct hash_table *t)
{
	free(t->bucket);
	hash_init(t);
}

uint64_t hash_mix(uint64_t a, uint64_t b)
{
	uint64_t h = hash_golden(a) ^ b * 0xc2b2ae3d27d4eb4fULL;

	/* The buckets take the low bits: fold the high ones into them. */
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ h >> 29;
}

static struct hash_node **bucket_of(const struct hash_table *t, uint64_t hash)
{
	return &t->bucket[hash & (t->nbuckets - 1)];
}

/* Twice the buckets (HASH_MIN_BUCKETS at first); fails harmlessly. */
static void grow(struct hash_table *t)
{
	size_t n = t->nbuckets ? t->nbuckets * 2 : HASH_MIN_BUCKETS, i;
	struct hash_node **bucket = calloc(n, sizeof(*bucket)), *node;

	if (!bucket)
		return;
	for (i = 0; i < t->nbuckets; i++)
		while ((node = t->bucket[i])) {
			t->bucket[i] = node->next;
			node->next = bucket[node->hash & (n - 1)];
			bucket[node->hash & (n - 1)] = node;
		}
	free(t->bucket);
	t->bucket = bucket;
	t->nbuckets = n;
}

int hash_add(struct hash_table *t, struct hash_node *n, uint64_t hash)
{
	struct hash_node **head;

	if (t->count >= t->nbuckets * 2)
		grow(t);
	if (!t->nbuckets)
		return -ENOMEM;
	n->hash = hash;
	head = bucket_of(t, hash);
	n->next = *head;
	*head = n;
	t->count++;
	return 0;
}

void hash_del(struct hash_table *t, struct hash_node *n)
{
	struct hash_node **p = bucket_of(t, n->hash);

	while (*p != n)
		p = &(*p)->next;
	*p = n->next;
	t->count--;
}

/* @n or the first node after it in its chain with @hash. */
static struct hash_node *same_hash(struct hash_node *n, uint64_t hash)
{
	while (n && n->hash != hash)
		n = n->next;
	return n;
}

struct hash_node *hash_first(const struct hash_table *t, uint64_t hash)
{
	if (!t->nbuckets)
		return NULL;
	return same_hash(*bucket_of(t, hash), hash);
}

struct hash_node *hash_next(const struct hash_node *n)
{
	return same_hash(n->next, n->hash);
}

size_t hash_filter(struct hash_table *t,
		   bool (*drop)(void *ctx, struct hash_node *n), void *ctx)
{
	struct hash_node **p, *n;
	size_t i, dropped = 0;

	for (i = 0; i < t->nbuckets; i++) {
		p = &t->bucket[i];
		while ((n = *p)) {
			/* Unlinked before @drop sees it: @drop may free it. */
			*p = n->next;
			if (drop(ctx, n)) {
				dropped++;
				continue;
			}
			*p = n;
			p = &n->next;
		}
	}
	t->count -= dropped;
	return dropped;
}
