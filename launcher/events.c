#include "events.h"
#include "divergence.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_KINDS 32

struct events {
	FILE *f;
	uint64_t t0;
	struct { char name[32]; unsigned count; } kinds[MAX_KINDS];
	unsigned nkinds;
	char fences[2048];     /* short list for the report */
	char suspicions[2048];
	struct divergences *div;
};

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct events *events_open(const char *path, char *why, size_t whylen)
{
	struct events *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->t0 = mono();
	if (!(e->div = divergences_new())) {
		snprintf(why, whylen, "out of memory");
		free(e);
		return NULL;
	}
	if (path && !(e->f = fopen(path, "w"))) {
		snprintf(why, whylen, "cannot write the event log %s: %s", path, strerror(errno));
		divergences_free(e->div);
		free(e);
		return NULL;
	}
	return e;
}

/* "key":"value" out of a flat JSON object, into out. */
static void field(const char *json, const char *key, char *out, size_t len)
{
	char pat[40];
	const char *p, *q;

	out[0] = 0;
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (!p)
		return;
	p += strlen(pat);
	if (*p == '"')
		p++;
	q = p;
	while (*q && *q != '"' && *q != ',' && *q != '}')
		q++;
	snprintf(out, len, "%.*s", (int)(q - p), p);
}

static void count(struct events *e, const char *json)
{
	char kind[32], a[32], b[32], line[160];
	unsigned i;

	field(json, "event", kind, sizeof(kind));
	for (i = 0; i < e->nkinds; i++)
		if (!strcmp(e->kinds[i].name, kind))
			break;
	if (i == e->nkinds && i < MAX_KINDS)
		snprintf(e->kinds[e->nkinds++].name, sizeof(e->kinds[0].name), "%s", kind);
	if (i < MAX_KINDS)
		e->kinds[i].count++;
	if (!strcmp(kind, "fence") || !strcmp(kind, "suspicion")) {
		char *list = kind[0] == 'f' ? e->fences : e->suspicions;

		field(json, "group", a, sizeof(a));
		field(json, "rep", b, sizeof(b));
		snprintf(line, sizeof(line), "  %s.%s", a, b);
		field(json, kind[0] == 'f' ? "reason" : "detector", a, sizeof(a));
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " (%s)\n", a);
		if (strlen(list) + strlen(line) < sizeof(e->fences) - 1)
			strcat(list, line);
	}
}

static void write_line(struct events *e, uint64_t ns, int host, const char *json)
{
	count(e, json);
	if (!e->f || json[0] != '{')
		return;
	fprintf(e->f, "{\"t\":%.6f,\"mono_ns\":%llu,", (double)(ns - e->t0) / 1e9,
		(unsigned long long)ns);
	if (host >= 0)
		fprintf(e->f, "\"host\":%d,", host);
	fprintf(e->f, "%s\n", json + 1);
	fflush(e->f);
}

/* --keep-fenced: say where each fenced replica's core went, or why not */
static void tell_kept(const char *json)
{
	char kind[16], g[16], k[16], path[EVENT_TEXT_MAX], why[160];

	field(json, "event", kind, sizeof(kind));
	if (strcmp(kind, "kept"))
		return;
	field(json, "group", g, sizeof(g));
	field(json, "rep", k, sizeof(k));
	field(json, "core", path, sizeof(path));
	field(json, "why", why, sizeof(why));
	if (strcmp(path, "null"))
		fprintf(stderr, "msgrun: fenced replica %s.%s: core kept in %s\n", g, k, path);
	else
		fprintf(stderr, "msgrun: fenced replica %s.%s: no core kept: %s\n", g, k, why);
}

void events_program(struct events *e, const char *prog)
{
	divergences_program(e->div, prog);
}

/* the first mismatch of a message: say where it was sent from */
static void tell_divergence(struct events *e, const char *json)
{
	char fields[EVENT_TEXT_MAX], line[1024];

	if (!divergences_take(e->div, json, fields, sizeof(fields), line, sizeof(line)))
		return;
	fprintf(stderr, "msgrun: %s\n", line);
	events_note(e, "divergence", fields);
}

void events_take(struct events *e, const struct f_event *ev)
{
	char json[EVENT_TEXT_MAX + 1];

	memcpy(json, ev->json, ev->len);
	json[ev->len] = 0;
	/* daemons on one machine share CLOCK_MONOTONIC; elsewhere, ours */
	write_line(e, ev->mono_ns >= e->t0 ? ev->mono_ns : mono(), (int)ev->host, json);
	tell_kept(json);
	tell_divergence(e, json);
}

int events_relocation(const struct f_event *ev, uint32_t *g, uint32_t *k, uint32_t *host)
{
	char json[EVENT_TEXT_MAX + 1], kind[32], v[32];

	memcpy(json, ev->json, ev->len);
	json[ev->len] = 0;
	field(json, "event", kind, sizeof(kind));
	if (strcmp(kind, "migrate-moved") && strcmp(kind, "regen-copied"))
		return 0;
	field(json, "group", v, sizeof(v));
	*g = (uint32_t)strtoul(v, NULL, 10);
	field(json, "rep", v, sizeof(v));
	*k = (uint32_t)strtoul(v, NULL, 10);
	field(json, "target", v, sizeof(v));
	*host = (uint32_t)strtoul(v, NULL, 10);
	return 1;
}

static void kind_of(const struct f_event *ev, char *json, char *kind, size_t len)
{
	memcpy(json, ev->json, ev->len);
	json[ev->len] = 0;
	field(json, "event", kind, len);
}

int events_group_lost(const struct f_event *ev)
{
	char json[EVENT_TEXT_MAX + 1], kind[32], v[32];

	kind_of(ev, json, kind, sizeof(kind));
	if (strcmp(kind, "group-lost"))
		return -1;
	field(json, "group", v, sizeof(v));
	return v[0] ? (int)strtol(v, NULL, 10) : -1;
}

int events_host_lost(const struct f_event *ev)
{
	char json[EVENT_TEXT_MAX + 1], kind[32], v[32];

	kind_of(ev, json, kind, sizeof(kind));
	if (strcmp(kind, "host-lost"))
		return -1;
	field(json, "lost", v, sizeof(v));
	return v[0] ? (int)strtol(v, NULL, 10) : -1;
}

bool events_isolated(const struct f_event *ev)
{
	char json[EVENT_TEXT_MAX + 1], kind[32];

	kind_of(ev, json, kind, sizeof(kind));
	return !strcmp(kind, "isolated");
}

int events_host_add(const struct f_event *ev, uint32_t *h, char *addr, size_t len)
{
	char json[EVENT_TEXT_MAX + 1], kind[32], v[32];

	memcpy(json, ev->json, ev->len);
	json[ev->len] = 0;
	field(json, "event", kind, sizeof(kind));
	if (strcmp(kind, "host-add"))
		return 0;
	field(json, "host", v, sizeof(v));
	*h = (uint32_t)strtoul(v, NULL, 10);
	field(json, "addr", addr, len);
	return addr[0] != 0;
}

void events_note(struct events *e, const char *kind, const char *fields)
{
	char json[EVENT_TEXT_MAX + 64];

	snprintf(json, sizeof(json), "{\"event\":\"%s\"%s%s}", kind, *fields ? "," : "", fields);
	write_line(e, mono(), -1, json);
}

void events_report(struct events *e, FILE *out, int exit_code)
{
	fprintf(out, "\n==== msgrun report (%.3f s) ====\n", (double)(mono() - e->t0) / 1e9);
	fprintf(out, "%-20s %8s\n", "event", "count");
	for (unsigned i = 0; i < e->nkinds; i++)
		fprintf(out, "%-20s %8u\n", e->kinds[i].name, e->kinds[i].count);
	if (e->suspicions[0])
		fprintf(out, "suspicions (replica, detector):\n%s", e->suspicions);
	if (e->fences[0])
		fprintf(out, "fenced (replica, reason):\n%s", e->fences);
	if (divergences_list(e->div)[0])
		fprintf(out, "divergences (first differing copy of each message):\n%s",
			divergences_list(e->div));
	fprintf(out, "job exit status: %d\n", exit_code);
}

void events_close(struct events *e)
{
	if (!e)
		return;
	if (e->f)
		fclose(e->f);
	divergences_free(e->div);
	free(e);
}
