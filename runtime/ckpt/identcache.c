/* SPDX-License-Identifier: MIT */
#include "identcache.h"

#include "crc32c.h"
#include "fmt.h"

static uint32_t ent_check(const struct ckpt_idc_ent *e)
{
	uint32_t c = ckpt_crc32c(0, e, 44);
	return c ? c : 1;
}

static int same(const struct ckpt_idc_ent *e, const struct ckpt_idc_key *k)
{
	return e->dev == k->dev && e->ino == k->ino && e->size == k->size && e->mtime_ns == k->mtime_ns &&
	       e->ctime_ns == k->ctime_ns;
}

int ckpt_idc_lookup(const struct ckpt_idc_ent *tab, const struct ckpt_idc_key *k, uint32_t *crc)
{
	for (unsigned i = 0; i < CKPT_IDCACHE_N; i++)
		if (tab[i].check && same(&tab[i], k) && tab[i].check == ent_check(&tab[i])) {
			*crc = tab[i].crc;
			return 1;
		}
	return 0;
}

void ckpt_idc_insert(struct ckpt_idc_ent *tab, const struct ckpt_idc_key *k, uint32_t crc)
{
	unsigned at = CKPT_IDCACHE_N;
	for (unsigned i = 0; i < CKPT_IDCACHE_N && at == CKPT_IDCACHE_N; i++)
		if (tab[i].check && tab[i].dev == k->dev && tab[i].ino == k->ino)
			at = i;
	for (unsigned i = 0; i < CKPT_IDCACHE_N && at == CKPT_IDCACHE_N; i++)
		if (!tab[i].check)
			at = i;
	if (at == CKPT_IDCACHE_N)
		at = (unsigned)((k->ino * 2654435761u + k->dev) % CKPT_IDCACHE_N);
	struct ckpt_idc_ent *e = &tab[at];
	e->dev = k->dev, e->ino = k->ino, e->size = k->size, e->mtime_ns = k->mtime_ns, e->ctime_ns = k->ctime_ns;
	e->crc = crc;
	e->check = ent_check(e);
}

void ckpt_idc_path(char *buf, unsigned cap, unsigned long uid, long tmp_pid)
{
	if (tmp_pid > 0)
		ckpt_fmt(buf, cap, "%s/msg-ckpt-ident-%lu.%ld", CKPT_IDCACHE_DIR, uid, tmp_pid);
	else
		ckpt_fmt(buf, cap, "%s/msg-ckpt-ident-%lu", CKPT_IDCACHE_DIR, uid);
}
