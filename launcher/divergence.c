#include "divergence.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TOLD 16 /* a corrupt sender diverges on many messages: tell a few */

struct divergences {
	char prog[PATH_MAX];
	struct { uint32_t src, dst; uint64_t seq; } told[MAX_TOLD];
	unsigned ntold;
	char list[MAX_TOLD * 200];
};

struct divergences *divergences_new(void)
{
	return calloc(1, sizeof(struct divergences));
}

void divergences_free(struct divergences *d)
{
	free(d);
}

void divergences_program(struct divergences *d, const char *prog)
{
	snprintf(d->prog, sizeof(d->prog), "%s", prog);
}

/* "key":value out of a flat JSON object (a string's quotes dropped) */
static void field(const char *json, const char *key, char *out, size_t len)
{
	char pat[40];
	const char *p, *q;

	out[0] = 0;
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	if (!(p = strstr(json, pat)))
		return;
	p += strlen(pat);
	if (*p == '"')
		p++;
	for (q = p; *q && *q != '"' && *q != ',' && *q != '}'; q++)
		;
	snprintf(out, len, "%.*s", (int)(q - p), p);
}

/* JSON-safe in place: the names come from the program's debug info */
static void tame(char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20)
			*s = '?';
}

/* Read what the child writes, at most 2 s: addr2line on a huge binary must
 * not hold the launcher's loop. */
static size_t read_bounded(int fd, char *buf, size_t len)
{
	size_t got = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (got + 1 < len && poll(&p, 1, 2000) == 1) {
		ssize_t r = read(fd, buf + got, len - 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = 0;
	return got;
}

/* addr2line -f -C -e prog ADDR: "function\nfile:line\n"; 0 when resolved */
static int addr2line(const char *prog, uint64_t addr, char *fn, size_t fnlen, char *where,
		     size_t wlen)
{
	char arg[32], out[1024], *nl, *disc;
	int pfd[2], status;
	pid_t pid;

	snprintf(arg, sizeof(arg), "0x%" PRIx64, addr);
	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(pfd[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		execlp("addr2line", "addr2line", "-f", "-C", "-e", prog, arg, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	read_bounded(pfd[0], out, sizeof(out));
	close(pfd[0]);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	if (!(nl = strchr(out, '\n')))
		return -1;
	*nl = 0;
	snprintf(fn, fnlen, "%.*s", (int)fnlen - 1, out);
	snprintf(where, wlen, "%.*s", (int)wlen - 1, nl + 1);
	where[strcspn(where, "\n")] = 0;
	if ((disc = strstr(where, " (discriminator")))
		*disc = 0;
	tame(fn);
	tame(where);
	/* "??:0" or "file:?" when the program has no line table for it */
	if (!strncmp(where, "??", 2) || !strcmp(where + strcspn(where, ":"), ":?") ||
	    !strcmp(where + strcspn(where, ":"), ":0"))
		return -1;
	return 0;
}

/* site "exe+0xOFF" (an offset into the program) or "0xADDR" (elsewhere) */
static void resolve(const struct divergences *d, const char *site, char *fn, size_t fnlen,
		    char *where, size_t wlen)
{
	uint64_t off;

	snprintf(fn, fnlen, "?");
	if (strncmp(site, "exe+", 4) || !d->prog[0]) {
		snprintf(where, wlen, "outside the program (%s), not resolved", site);
		return;
	}
	off = strtoull(site + 4, NULL, 16);
	/* a return address: the call is the instruction before it */
	if (!off || addr2line(d->prog, off - 1, fn, fnlen, where, wlen)) {
		snprintf(fn, fnlen, "?");
		snprintf(where, wlen, "%.*s+%s (not resolved: no debug info or no addr2line)", (int)wlen / 2, d->prog, site + 4);
	}
}

int divergences_take(struct divergences *d, const char *json, char *fields, size_t flen,
		     char *line, size_t llen)
{
	char kind[32], src[16], dst[16], seq[24], rep[16], byte[24], site[40];
	char fn[256], where[512], *base;
	uint32_t s, t;
	uint64_t q;

	field(json, "event", kind, sizeof(kind));
	if (strcmp(kind, "mismatch") || d->ntold == MAX_TOLD)
		return 0;
	field(json, "src", src, sizeof(src));
	field(json, "dst", dst, sizeof(dst));
	field(json, "seq", seq, sizeof(seq));
	s = (uint32_t)strtoul(src, NULL, 10);
	t = (uint32_t)strtoul(dst, NULL, 10);
	q = strtoull(seq, NULL, 10);
	for (unsigned i = 0; i < d->ntold; i++)
		if (d->told[i].src == s && d->told[i].dst == t && d->told[i].seq == q)
			return 0;
	d->told[d->ntold].src = s;
	d->told[d->ntold].dst = t;
	d->told[d->ntold++].seq = q;
	field(json, "from_rep", rep, sizeof(rep));
	field(json, "byte", byte, sizeof(byte));
	field(json, "site", site, sizeof(site));
	resolve(d, site, fn, sizeof(fn), where, sizeof(where));
	snprintf(fields, flen,
		 "\"src\":%u,\"dst\":%u,\"seq\":%" PRIu64 ",\"from_rep\":%s,\"byte\":%s,"
		 "\"site\":\"%s\",\"function\":\"%s\",\"line\":\"%s\"",
		 s, t, q, rep[0] ? rep : "-1", byte[0] ? byte : "-1", site, fn, where);
	base = strrchr(where, '/');
	snprintf(line, llen,
		 "divergence: message %u -> %u seq %" PRIu64 ": the copies differ from byte %s "
		 "(replica %u.%s's against the first received); sent from %s at %s", s, t, q,
		 byte, s, rep, fn,
		 base && strchr(where, ':') > base ? base + 1 : where);
	if (strlen(d->list) + strlen(line) + 4 < sizeof(d->list))
		snprintf(d->list + strlen(d->list), sizeof(d->list) - strlen(d->list), "  %s\n",
			 line);
	return 1;
}

const char *divergences_list(const struct divergences *d)
{
	return d->list;
}
