// SPDX-License-Identifier: GPL-2.0-or-later
/* cache_lines.c — the cache's line buffers (reference-counted pages, copied on
 * write, kept for reuse) and the versions of dirty sectors a write replaced, which
 * a power cut may still find on the media. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "blackout/dev.h"
#include "blackout/util.h"
#include "dev/cache_int.h"

void cache_buf_free(struct lbuf *b)
{
	blk_page_free(b->data);
	free(b);
}

/* A buffer with ref 1. Its data may be one the medium gave back for a line it
 * adopted (write_swap): the contents are not the cache's business, only the
 * dirty sectors written into it are. */
struct lbuf *cache_buf_get(struct cache_dev *c)
{
	struct lbuf *b = c->nfree ? c->freebuf[--c->nfree] : calloc(1, sizeof(*b));
	if (b && !b->data && !(b->data = blk_page_alloc())) {
		free(b);
		return NULL;
	}
	if (b)
		b->ref = 1;
	return b;
}

void cache_buf_put(struct cache_dev *c, struct lbuf *b)
{
	if (!b || --b->ref)
		return;
	if (c->nfree < FREE_BUFS)
		c->freebuf[c->nfree++] = b;
	else
		cache_buf_free(b);
}

struct ver *cache_ver_get(struct cache_dev *c)
{
	struct ver *v = c->freever;
	if (v) {
		c->freever = v->next;
		c->nfreever--;
		return v;
	}
	return malloc(sizeof(*v));
}

void cache_ver_put(struct cache_dev *c, struct ver *v)
{
	while (v && --v->ref == 0) {
		struct ver *next = v->next;
		cache_buf_put(c, v->buf);
		if (c->nfreever < FREE_BUFS) {
			v->next = c->freever;
			c->freever = v;
			c->nfreever++;
		} else {
			free(v);
		}
		v = next;
	}
}

/* A copy of the first `keep` versions of chain v with their masks limited to
 * `mask`, versions left with no sector dropped; NULL (with *rc = -ENOMEM) when
 * memory runs out. The chain itself is shared, so it is never edited. */
struct ver *cache_ver_copy(struct cache_dev *c, const struct ver *v, uint32_t keep, uint32_t mask,
                           int *rc)
{
	struct ver *head = NULL, **tail = &head;
	for (; v && keep; v = v->next, keep--) {
		if (!(v->mask & mask))
			continue;
		struct ver *n = cache_ver_get(c);
		if (!n) {
			*rc = -ENOMEM;
			cache_ver_put(c, head);
			return NULL;
		}
		*n = (struct ver){.ref = 1, .mask = v->mask & mask, .buf = v->buf};
		v->buf->ref++;
		*tail = n;
		tail = &n->next;
	}
	uint32_t len = 0;
	for (struct ver *p = head; p; p = p->next)
		len++;
	for (struct ver *p = head; p; p = p->next)
		p->depth = len--;
	return head;
}

/* Sectors `mask` of line ln are about to be written, `over` of them dirty: their
 * current contents become an older version, and the line gets a buffer of its own
 * holding its other dirty sectors (the write fills the rest). A chain longer than
 * what a cut looks at is cut back in place when no clone shares it; a shared one
 * is copied once it reaches twice that, so memory stays bounded and the copying
 * is amortised. */
int cache_keep_version(struct cache_dev *c, struct line *ln, uint32_t mask, uint32_t over)
{
	struct lbuf *b = cache_buf_get(c);
	struct ver *v = b ? cache_ver_get(c) : NULL;
	if (!v) {
		cache_buf_put(c, b);
		return -ENOMEM;
	}
	size_t ss = c->dev.sector_size;
	for (uint32_t keep = ln->dirty & ~mask, k = 0; keep >> k; k++)
		if (keep >> k & 1)
			memcpy(b->data + k * ss, ln->buf->data + k * ss, ss);
	*v = (struct ver){.ref = 1, .mask = over, .buf = ln->buf, .next = ln->old};
	v->depth = 1 + (v->next ? v->next->depth : 0);
	ln->buf = b;
	ln->old = v;
	uint32_t room = c->versions - 1;
	if (v->depth <= room)
		return 0;
	struct ver *p = v;
	bool own = v->ref == 1;
	for (uint32_t k = 1; k < room && own; k++) {
		p = p->next;
		own = p->ref == 1;
	}
	if (own && room) {
		/* every kept node is this line's alone: drop the tail, renumber */
		cache_ver_put(c, p->next);
		p->next = NULL;
		uint32_t d = room;
		for (struct ver *q = v; q; q = q->next)
			q->depth = d--;
		return 0;
	}
	if (v->depth > 2 * room) {
		int rc = 0;
		struct ver *n = cache_ver_copy(c, v, c->versions - 1, ~0u, &rc);
		if (rc)
			return rc;
		cache_ver_put(c, v);
		ln->old = n;
	}
	return 0;
}
