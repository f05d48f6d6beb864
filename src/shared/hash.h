/*
 * hash: a chained hash table of nodes embedded in the caller's records,
 * grown as they come.
 *
 * The caller hashes its key (hash_mix() and hash_golden() help), adds
 * its record's node with that hash, and finds it again by walking the
 * nodes of the same hash (hash_first(), hash_next()) and comparing its
 * own key. The table keeps each node's hash, so that it can grow
 * without asking the caller again: it doubles its buckets when it holds
 * twice as many nodes as buckets, so a walk compares two nodes on
 * average. It never shrinks.
 *
 * The table allocates its bucket array only; records are the caller's
 * to allocate and free. Not thread safe: the caller locks.
 */
#ifndef TIMINGFS_HASH_H
#define TIMINGFS_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hash_node {
	struct hash_node *next; /* in its bucket's chain */
	uint64_t hash;
};

struct hash_table {
	struct hash_node **bucket;
	size_t nbuckets; /* a power of two; 0 before the first node */
	size_t count; /* nodes in the table */
};

/* hash_init / hash_destroy - an empty table; the bucket array freed
 * (the nodes are the caller's). */
void hash_init(struct hash_table *t);
void hash_destroy(struct hash_table *t);

/* hash_mix - a hash of two 64-bit words, spread over every bit. */
uint64_t hash_mix(uint64_t a, uint64_t b);

/*
 * hash_golden - @x times 2^64 / phi (0x9e3779b97f4a7c15, the golden
 * ratio's Fibonacci hashing), modulo 2^64. Each bit of the product
 * depends on @x's bits at and below it only, so the high bits are the
 * well-spread ones: take a bucket from the top (hash_golden(x) >> (64 -
 * bits)), or mix the product further (hash_mix() does). Numbers in a
 * run land far apart. A pure function: the same @x gives the same
 * product in every process and version.
 */
static inline uint64_t hash_golden(uint64_t x)
{
	return x * 0x9e3779b97f4a7c15ULL;
}

/*
 * hash_add - add @n under @hash. 0, or -ENOMEM when the table has no
 * buckets yet and cannot get any (a table that cannot grow just grows
 * its chains).
 */
int hash_add(struct hash_table *t, struct hash_node *n, uint64_t hash);

/* hash_del - take @n, which is in @t, out of it. */
void hash_del(struct hash_table *t, struct hash_node *n);

/*
 * hash_first / hash_next - the first node added under @hash, and the
 * node after @n under the same hash; NULL when there is no more.
 */
struct hash_node *hash_first(const struct hash_table *t, uint64_t hash);
struct hash_node *hash_next(const struct hash_node *n);

/*
 * hash_filter - call @drop for every node; each for which it returns
 * true is taken out of the table first, so that @drop may free it.
 * @drop must not add nodes. Returns how many were taken out.
 */
size_t hash_filter(struct hash_table *t,
		   bool (*drop)(void *ctx, struct hash_node *n), void *ctx);

/* container_of - the record that holds @ptr as its @member. */
#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr)-offsetof(type, member)))
#endif

#endif
