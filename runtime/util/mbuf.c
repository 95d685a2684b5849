#include "util/mbuf.h"

#include <stdlib.h>
#include <sys/mman.h>

/* Large payloads get their own mapping so freeing them returns memory to the
 * system at once (a 1 GiB message must not linger in a malloc arena). */
#define MBUF_MMAP_MIN (1u << 20)

static void (*unmapper)(void *p, size_t len);

/* Recently freed mappings of a few MiB are kept for the next message of the
 * same size: a fresh mapping costs a page fault and a cleared page per 4 KiB
 * (about a third of a daemon's time on a stream of 1 MiB messages). A
 * stream keeps a few dozen messages in flight between two daemons, so a
 * handful of slots saw most of them miss (docs/datapath.md); at most
 * MBUF_CACHE_BYTES stay cached. Per thread: no locking. */
#define MBUF_CACHE_LEN_MAX (8u << 20)
#define MBUF_CACHE_SLOTS 32
#define MBUF_CACHE_BYTES (32u << 20)
static _Thread_local size_t cached_bytes;
static _Thread_local struct {
	void *p;
	size_t len;
} cache[MBUF_CACHE_SLOTS];

static size_t page_round(size_t total)
{
	return (total + 4095) & ~(size_t)4095;
}

static void *cache_take(size_t total)
{
	size_t len = page_round(total);
	int i;

	for (i = 0; i < MBUF_CACHE_SLOTS; i++)
		if (cache[i].p && cache[i].len == len) {
			void *p = cache[i].p;

			cache[i].p = NULL;
			cached_bytes -= len;
			return p;
		}
	return NULL;
}

static int cache_keep(void *p, size_t total)
{
	int i;

	if (total > MBUF_CACHE_LEN_MAX || cached_bytes + page_round(total) > MBUF_CACHE_BYTES)
		return -1;
	for (i = 0; i < MBUF_CACHE_SLOTS; i++)
		if (!cache[i].p) {
			cache[i].p = p;
			cache[i].len = page_round(total);
			cached_bytes += cache[i].len;
			return 0;
		}
	return -1;
}

void mbuf_set_unmapper(void (*unmap)(void *p, size_t len))
{
	unmapper = unmap;
}

struct mbuf *mbuf_new(size_t len)
{
	size_t total = sizeof(struct mbuf) + len;
	struct mbuf *m;

	if (total < len)
		return NULL;
	if (total >= MBUF_MMAP_MIN && (m = cache_take(total)) != NULL) {
		/* reused mapping */
	} else if (total >= MBUF_MMAP_MIN) {
		void *p = mmap(NULL, total, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		m = p == MAP_FAILED ? NULL : p;
	} else {
		m = malloc(total);
	}
	if (!m)
		return NULL;
	m->refs = 1;
	m->len = len;
	m->hctx = NULL;
	m->hfree = NULL;
	m->hashed = 0;
	m->halg = 0;
	m->digested = 0;
	return m;
}

struct mbuf *mbuf_get(struct mbuf *m)
{
	m->refs++;
	return m;
}

void mbuf_put(struct mbuf *m)
{
	if (!m || --m->refs)
		return;
	if (m->hctx && m->hfree)
		m->hfree(m->hctx);
	if (sizeof(struct mbuf) + m->len >= MBUF_UNMAP_ASYNC_MIN && unmapper)
		unmapper(m, sizeof(struct mbuf) + m->len);
	else if (sizeof(struct mbuf) + m->len >= MBUF_MMAP_MIN) {
		if (cache_keep(m, sizeof(struct mbuf) + m->len))
			munmap(m, sizeof(struct mbuf) + m->len);
	} else {
		free(m);
	}
}
