#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct output {
	uint32_t n, r;
	bool all;
	uint64_t *emitted;   /* [n][2]: bytes of stdout/stderr emitted per group */
	bool *midline;       /* [n][r][2]: --output all: inside a line */
};

struct output *output_new(uint32_t n, uint32_t r, bool all)
{
	struct output *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->n = n;
	o->r = r;
	o->all = all;
	o->emitted = calloc((size_t)n * 2, sizeof(uint64_t));
	o->midline = calloc((size_t)n * r * 2, sizeof(bool));
	if (!o->emitted || !o->midline) {
		output_free(o);
		return NULL;
	}
	return o;
}

static void put(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w <= 0)
			return; /* the reader went away: nothing better to do */
		c += w;
		n -= (size_t)w;
	}
}

static void take_all(struct output *o, const struct f_output *f, int fd)
{
	bool *mid = &o->midline[((size_t)f->group * o->r + f->rep) * 2 + (f->stream - 1)];
	char prefix[32];
	int plen = snprintf(prefix, sizeof(prefix), "[%u.%u] ", f->group, f->rep);
	uint32_t i, start = 0;

	for (i = 0; i < f->len; i++) {
		if (!*mid) {
			put(fd, prefix, (size_t)plen);
			*mid = true;
		}
		if (f->bytes[i] == '\n') {
			put(fd, f->bytes + start, i + 1 - start);
			start = i + 1;
			*mid = false;
		}
	}
	if (start < f->len)
		put(fd, f->bytes + start, f->len - start);
}

void output_take(struct output *o, const struct f_output *f)
{
	int fd = f->stream == OUT_STDERR ? 2 : 1;
	uint64_t *done;

	if (f->group >= o->n || f->rep >= o->r)
		return;
	if (o->all) {
		take_all(o, f, fd);
		return;
	}
	done = &o->emitted[(size_t)f->group * 2 + (f->stream - 1)];
	if (f->off + f->len <= *done || f->off > *done)
		return; /* already shown; or a gap that an earlier chunk fills */
	put(fd, f->bytes + (*done - f->off), (size_t)(f->off + f->len - *done));
	*done = f->off + f->len;
}

void output_free(struct output *o)
{
	if (!o)
		return;
	free(o->emitted);
	free(o->midline);
	free(o);
}
