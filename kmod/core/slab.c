// SPDX-License-Identifier: GPL-2.0
/* KV block allocation with grace-period reclamation; see slab.h. */
#include "slab.h"

void cider_slab_init(struct cider_slab *s, u32 unit, u32 nr_cls, u64 chunk_size,
		     u64 grace_ns, struct cider_slab_ent *ring, u32 cap)
{
	memset(s, 0, sizeof(*s));
	s->unit = unit;
	s->nr_cls = nr_cls < CIDER_NR_CLASSES ? nr_cls : CIDER_NR_CLASSES;
	s->chunk_size = chunk_size;
	s->grace_ns = grace_ns;
	s->ring = ring;
	s->cap = cap;
	s->fence_ok = ~0ULL;
}

void cider_slab_use_fence(struct cider_slab *s)
{
	s->fence_ok = 0;
}

static u64 cider_slab_size(const struct cider_slab *s, u32 cls)
{
	return (u64)s->unit << cls;
}

static struct cider_slab_ent *cider_slab_at(struct cider_slab *s, u32 cls, u32 i)
{
	return &s->ring[(u64)cls * s->cap + (s->head[cls] + i) % s->cap];
}

static bool cider_slab_graced(const struct cider_slab *s, const struct cider_slab_ent *e, u64 now)
{
	return e->t == CIDER_SLAB_NOW || now - e->t >= s->grace_ns;
}

bool cider_slab_fence_due(struct cider_slab *s, u32 cls, u64 now)
{
	struct cider_slab_ent *e;

	if (!s->n[cls])
		return false;
	e = cider_slab_at(s, cls, 0);
	if (!cider_slab_graced(s, e, now) || e->t == CIDER_SLAB_NOW || e->t <= s->fence_ok)
		return false;
	if (s->fence_asked && now - s->fence_asked < s->grace_ns / 4)
		return false;
	s->fence_asked = now;
	return true;
}

void cider_slab_fence_clear(struct cider_slab *s, u64 asked)
{
	if (asked > s->fence_ok)
		s->fence_ok = asked;
}

int cider_slab_alloc(struct cider_slab *s, u32 cls, u64 now, u64 *off)
{
	u64 size = cider_slab_size(s, cls);
	struct cider_slab_ent *e;

	/* The oldest freed block first, once its grace period is over. */
	if (s->n[cls]) {
		e = cider_slab_at(s, cls, 0);
		if (cider_slab_graced(s, e, now) &&
		    (e->t == CIDER_SLAB_NOW || e->t <= s->fence_ok)) {
			*off = e->off;
			s->head[cls] = (s->head[cls] + 1) % s->cap;
			s->n[cls]--;
			s->live += size;
			return 0;
		}
	}
	if (s->next[cls] + size > s->end[cls])
		return 1;
	*off = s->next[cls];
	s->next[cls] += size;
	s->live += size;
	return 0;
}

void cider_slab_add_chunk(struct cider_slab *s, u32 cls, u64 off)
{
	s->next[cls] = off;
	s->end[cls] = off + s->chunk_size;
	s->claimed += s->chunk_size;
}

bool cider_slab_free(struct cider_slab *s, u32 cls, u64 off, u64 now)
{
	struct cider_slab_ent *e;

	s->live -= cider_slab_size(s, cls);
	if (s->n[cls] == s->cap) {
		s->leaked += cider_slab_size(s, cls);
		return false;
	}
	e = cider_slab_at(s, cls, s->n[cls]++);
	e->off = off;
	e->t = now;
	return true;
}

void cider_slab_unused(struct cider_slab *s, u32 cls, u64 off)
{
	struct cider_slab_ent *e;

	s->live -= cider_slab_size(s, cls);
	if (s->n[cls] == s->cap) {
		s->leaked += cider_slab_size(s, cls);
		return;
	}
	/* Nobody can hold a pointer to it: back at the head, no grace. */
	s->head[cls] = (s->head[cls] + s->cap - 1) % s->cap;
	s->n[cls]++;
	e = cider_slab_at(s, cls, 0);
	e->off = off;
	e->t = CIDER_SLAB_NOW;
}
