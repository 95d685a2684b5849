#include "util/mbuf.h"

#include <stdlib.h>
#include <sys/mman.h>

/* Large payloads get their own mapping so freeing them returns memory to the
 * system at once (a 1 GiB message must not linger in a malloc arena). */
#define MBUF_MMAP_MIN (1u << 20)

static void (*unmapper)(void *p, size_t len);

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
	if (total >= MBUF_MMAP_MIN) {
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
	else if (sizeof(struct mbuf) + m->len >= MBUF_MMAP_MIN)
		munmap(m, sizeof(struct mbuf) + m->len);
	else
		free(m);
}
