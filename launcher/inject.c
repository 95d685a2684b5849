#include "inject.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[INJ_MAX] = {
	[INJ_KILL] = "kill", [INJ_STALL] = "stall", [INJ_CORRUPT] = "corrupt",
	[INJ_KILL_HOST] = "kill-host", [INJ_CUT] = "cut", [INJ_HOLD] = "hold",
	[INJ_HEAL] = "release", [INJ_MIGRATE] = "migrate", [INJ_EVICT] = "evict",
};

int inject_kind(const char *name)
{
	for (int k = 1; k < INJ_MAX; k++)
		if (names[k] && !strcmp(names[k], name))
			return k;
	return -1;
}

const char *inject_name(int kind)
{
	return kind > 0 && kind < INJ_MAX ? names[kind] : "?";
}

/* splitmix64: a seeded draw that is the same on every machine */
static uint64_t draw(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int parse_when(const char *w, struct inj *in)
{
	char *end;

	if (!strncmp(w, "send=", 5)) {
		if (in->kind != INJ_CORRUPT)
			return -1;
		in->arg = (uint32_t)strtoul(w + 5, &end, 10);
		if (*end || in->arg == 0)
			return -1;
		in->arg--; /* the daemon counts sends to skip */
		in->at = 0;
		in->from_start = true;
		return 0;
	}
	in->at = strtod(w, &end);
	if (!strcmp(end, "ms"))
		in->at /= 1000;
	else if (strcmp(end, "s") && *end)
		return -1;
	return in->at < 0 ? -1 : 0;
}

static int parse_target(const char *t, struct inj *in, uint64_t *seed, uint32_t n, uint32_t r,
			uint32_t m)
{
	bool host_kind = in->kind == INJ_KILL_HOST || in->kind == INJ_CUT || in->kind == INJ_EVICT;
	char *end, *arrow = strstr(t, "->");

	if (in->kind == INJ_MIGRATE) {
		/* migrate G.K->H, or G.K alone: the daemon picks the host */
		in->arg = UINT32_MAX;
		if (arrow) {
			in->arg = (uint32_t)strtoul(arrow + 2, &end, 10);
			if (*end || in->arg >= m)
				return -1;
			*arrow = 0;
		}
	}
	if (!strcmp(t, "?")) {
		if (host_kind) {
			in->host = (uint32_t)(draw(seed) % m);
		} else {
			in->group = (uint32_t)(draw(seed) % n);
			in->rep = (uint32_t)(draw(seed) % r);
		}
		return 0;
	}
	if (host_kind) {
		in->host = (uint32_t)strtoul(t, &end, 10);
		return *end || in->host >= m ? -1 : 0;
	}
	in->group = (uint32_t)strtoul(t, &end, 10);
	if (*end != '.')
		return -1;
	in->rep = (uint32_t)strtoul(end + 1, &end, 10);
	return *end || in->group >= n || in->rep >= r ? -1 : 0;
}

/* cut's optional third word: how long (ms) the host stays cut off. */
static int parse_cut_ms(const char *dur, struct inj *in)
{
	char *end;

	if (!*dur)
		return 0;
	if (in->kind != INJ_CUT)
		return -1;
	in->arg = (uint32_t)strtoul(dur, &end, 10);
	if (end == dur || in->arg == 0 || in->arg > 3600000 || (*end && strcmp(end, "ms")))
		return -1;
	return 0;
}

int inject_parse(const char *spec, uint64_t seed, uint32_t n, uint32_t r, uint32_t m,
		 struct inj **out, size_t *count, char *why, size_t whylen)
{
	char *copy = strdup(spec), *save = NULL, *item;
	struct inj *v = NULL;
	size_t c = 0;

	for (item = strtok_r(copy, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
		char kind[32], target[64], when[64] = "0s", dur[32] = "";
		struct inj in = { 0 };
		char *at;

		while (*item == ' ')
			item++;
		if (!*item)
			continue;
		at = strchr(item, '@');
		if (at) {
			*at = 0;
			snprintf(when, sizeof(when), "%s", at + 1);
			for (char *e = when + strlen(when); e > when && e[-1] == ' '; )
				*--e = 0;
		}
		if (sscanf(item, "%31s %63s %31s", kind, target, dur) < 2 ||
		    (int)(in.kind = (uint8_t)inject_kind(kind)) <= 0 ||
		    parse_target(target, &in, &seed, n, r, m) || parse_when(when, &in) ||
		    parse_cut_ms(dur, &in)) {
			snprintf(why, whylen, "cannot read injection '%s%s%s' (want KIND TARGET@WHEN, "
				 "e.g. 'kill 1.2@0.5s', 'corrupt 0.1@send=3', 'kill-host 2@1s', "
				 "'cut 2 800@1s' (800 ms; without it, for good))",
				 item, at ? "@" : "", at ? when : "");
			free(copy);
			free(v);
			return -1;
		}
		v = realloc(v, (c + 1) * sizeof(*v));
		v[c++] = in;
	}
	free(copy);
	*out = v;
	*count = c;
	return 0;
}

uint32_t inject_host(const struct inj *in, uint32_t r, uint32_t m, const uint32_t *loc)
{
	if (in->kind == INJ_KILL_HOST || in->kind == INJ_CUT || in->kind == INJ_EVICT)
		return in->host;
	if (loc)
		return loc[(size_t)in->group * r + in->rep];
	return (uint32_t)(((uint64_t)in->group * r + in->rep) % m);
}

void inject_frame(const struct inj *in, struct frame *f)
{
	memset(f, 0, sizeof(*f));
	f->h.type = F_INJECT;
	f->h.flags = in->from_start ? INJECT_F_FROM_START : 0;
	f->u.inject = (struct f_inject){ .kind = in->kind, .group = in->group,
					 .rep = (uint16_t)in->rep, .arg = in->arg };
}
