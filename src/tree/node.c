/*
 * node: packing a node into an inode number and back.
 */

#include "node.h"

#define VIEW_SHIFT NODE_KIND_BITS
#define NUM0_SHIFT (VIEW_SHIFT + VIEW_SLOT_BITS)
#define NUM1_SHIFT (NUM0_SHIFT + NODE_NUM_BITS)

_Static_assert(NUM1_SHIFT + NODE_NUM_BITS <= 64, "a node fits in 64 bits");

uint64_t node_ino(const struct node *n)
{
	return (uint64_t)n->kind | (uint64_t)n->view << VIEW_SHIFT |
	       (uint64_t)n->num[0] << NUM0_SHIFT |
	       (uint64_t)n->num[1] << NUM1_SHIFT;
}

void node_of(uint64_t ino, struct node *n)
{
	n->kind = (unsigned int)(ino & ((1U << NODE_KIND_BITS) - 1));
	n->view = (unsigned int)(ino >> VIEW_SHIFT) & (VIEW_SLOTS - 1);
	n->num[0] = (uint32_t)(ino >> NUM0_SHIFT) & NODE_NUM_MAX;
	n->num[1] = (uint32_t)(ino >> NUM1_SHIFT) & NODE_NUM_MAX;
	n->rec = 0;
}
