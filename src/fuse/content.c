/*
 * content: a file's content, rendered by the tree for one reader and
 * charged to its budget (budget.h) while the daemon holds it; and the
 * mount's keep (keep.h), which holds the content of every open, with
 * the inode records and the opens' owners in its record area, where a
 * successor of this server finds them. Rendering is called from the
 * workers; the keep is set up before the session serves.
 */
#include <errno.h>
#include <stdlib.h>

#include "fs-internal.h"
#include "keep.h"
#include "opens.h"
#include "serve.h"

/* A file's content; inodes.h frees one it holds with text_free(). */
void text_free(struct rbuf *text)
{
	if (text)
		open_file_free(open_file_of(text));
}

/*
 * Charge @text, node @n's content, to reader @who, at what it takes:
 * its buffer (until an open keeps it: the charge stays), and its copy
 * in the keep (whole pages but for a content of KEEP_INLINE bytes or
 * less), with @extra bytes more (an entry of
 * the snapshot table its open made). The buffer grew by doubling: a
 * large one gives back what it does not use first. 0, or -ENOMEM past
 * the budget.
 */
static int text_charge(struct budget_reader *who, const struct node *n,
		       struct rbuf *text, size_t extra)
{
	char *fit;

	if (text->cap > 4096 && text->cap - text->len > text->len / 8) {
		fit = realloc(text->data, text->len + 1);
		if (fit) {
			text->data = fit;
			text->cap = text->len + 1;
		}
	}
	return budget_charge(who, node_ino(n),
			     budget_block_bytes(open_file_of(text)) +
				     budget_block_bytes(text->data) +
				     keep_cost(text->len) + extra,
			     &open_file_of(text)->charge);
}

/*
 * The content of file @n, now, for the reader of @r, in a new buffer.
 * While a table is made (milliseconds for thousands of tasks), other
 * workers take the mount's next requests.
 */
int render_text(struct request *r, const struct node *n, struct rbuf **out)
{
	struct open_file *of = open_file_new();
	int ret;

	if (!of)
		return -ENOMEM;
	if (tree_grows(n))
		serve_may_block();
	ret = tree_render(r, n, &of->text);
	if (ret < 0) {
		open_file_free(of);
		return ret;
	}
	*out = &of->text;
	return 0;
}

/* The keep's record area: the inode records, then the opens' owners. */
#define OWNERS_BYTES OPENS_AREA_BYTES(FS_KEEP_SLOTS)

int fs_set_keep(struct fs *fs, int fd)
{
	struct inodes *ins;
	void *area, *owners = NULL;
	size_t bytes;
	int ret;

	ret = keep_map(fd, &fs->keep);
	if (ret < 0)
		return ret;
	/* The records in the keep's memory, as a dead server left them
	 * (in this server's alone where the keep has no record area). */
	area = keep_records(fs->keep, &bytes);
	/* Who each content is charged to, after the records, where a
	 * keep made by this version has room for it. */
	if (area && bytes >= RECORDS_AREA_BYTES + OWNERS_BYTES) {
		owners = (char *)area + RECORDS_AREA_BYTES;
		bytes = RECORDS_AREA_BYTES;
	}
	ret = inodes_new(fs->env.views, area, bytes, text_free, &ins);
	if (ret < 0)
		return ret;
	__atomic_store_n(&fs->ins, ins, __ATOMIC_RELEASE);
	ret = opens_new(fs->keep, FS_KEEP_SLOTS, ins, owners, &fs->opens);
	if (ret < 0)
		return ret;
	return 0;
}

int fs_keep_create(size_t data_bytes)
{
	return keep_create(FS_KEEP_SLOTS, data_bytes,
			   RECORDS_AREA_BYTES + OWNERS_BYTES);
}

/*
 * The content of file @n, now, for the reader of @r, charged to @who
 * with @extra bytes more (render_text(), text_charge()). 0, -ENOMEM
 * past the budget, or the render's error.
 */
int render_charged(struct request *r, const struct node *n,
		   struct budget_reader *who, size_t extra, struct rbuf **out)
{
	int ret = render_text(r, n, out);

	if (ret == 0 && text_charge(who, n, *out, extra) < 0) {
		text_free(*out);
		*out = NULL;
		ret = -ENOMEM;
	}
	return ret;
}
