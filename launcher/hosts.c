#include "hosts.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_PORT 7420

static int self_dir(char *dir, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", dir, len - 1);
	char *slash;

	if (n <= 0)
		return -1;
	dir[n] = 0;
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

static int alloc_hosts(struct hosts *h, uint32_t m)
{
	h->m = m;
	h->addr = calloc(m, sizeof(char *));
	h->slots = calloc(m, sizeof(uint32_t));
	h->pids = calloc(m, sizeof(pid_t));
	return h->addr && h->slots && h->pids ? 0 : -1;
}

static pid_t start_one(const char *msgd, const char *key_file, int verbose, const char *engine,
		       const char *tcp_cc, int *port)
{
	char fdarg[16], line[32], engarg[40];
	const char *args[14];
	int a = 0;
	int p[2];
	pid_t pid;
	ssize_t n;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
		snprintf(engarg, sizeof(engarg), "--ckpt-engine=%s", engine ? engine : "auto");
		args[a++] = "msgd";
		args[a++] = "--key-file";
		args[a++] = key_file;
		args[a++] = "--listen";
		args[a++] = "127.0.0.1:0";
		args[a++] = "--port-fd";
		args[a++] = fdarg;
		args[a++] = "--once";
		if (engine)
			args[a++] = engarg;
		if (tcp_cc) {
			args[a++] = "--tcp-congestion";
			args[a++] = tcp_cc;
		}
		if (verbose)
			args[a++] = verbose > 1 ? "-vv" : "-v";
		args[a] = NULL;
		execv(msgd, (char *const *)args);
		fprintf(stderr, "msgrun: cannot execute %s: %s\n", msgd, strerror(errno));
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	n = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	if (n <= 0) {
		waitpid(pid, NULL, 0);
		return -1;
	}
	line[n] = 0;
	*port = atoi(line);
	return pid;
}

int hosts_start_virtual(struct hosts *h, uint32_t m, const char *key_file, int verbose,
			const char *engine, const char *tcp_cc, char *why, size_t whylen)
{
	char dir[PATH_MAX], msgd[PATH_MAX + 8];
	uint32_t i;

	if (self_dir(dir, sizeof(dir)) || alloc_hosts(h, m)) {
		snprintf(why, whylen, "cannot locate msgd");
		return -1;
	}
	snprintf(msgd, sizeof(msgd), "%s/msgd", dir);
	if (access(msgd, X_OK)) {
		snprintf(why, whylen, "msgd not found beside msgrun (%s)", msgd);
		return -1;
	}
	for (i = 0; i < m; i++) {
		int port = 0;

		h->pids[i] = start_one(msgd, key_file, verbose, engine, tcp_cc, &port);
		if (h->pids[i] <= 0 || port <= 0) {
			h->pids[i] = 0;
			snprintf(why, whylen, "virtual host %u: msgd did not start", i);
			return -1;
		}
		if (asprintf(&h->addr[i], "127.0.0.1:%d", port) < 0)
			return -1;
		h->slots[i] = 1;
	}
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* name[:port] -> "ip:port" */
static int resolve(const char *name, char **out, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	char host[256], ip[INET_ADDRSTRLEN];
	const char *colon = strrchr(name, ':');
	int port = DEFAULT_PORT, err;
	size_t hl = colon ? (size_t)(colon - name) : strlen(name);

	if (hl == 0 || hl >= sizeof(host)) {
		snprintf(why, whylen, "bad host name '%s'", name);
		return -1;
	}
	memcpy(host, name, hl);
	host[hl] = 0;
	if (colon) {
		char *end;
		long p = strtol(colon + 1, &end, 10);

		if (*end || p <= 0 || p > 65535) {
			snprintf(why, whylen, "bad port in '%s'", name);
			return -1;
		}
		port = (int)p;
	}
	err = getaddrinfo(host, NULL, &hints, &ai);
	if (err) {
		snprintf(why, whylen, "cannot resolve host '%s': %s", host, gai_strerror(err));
		return -1;
	}
	inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, ip, sizeof(ip));
	freeaddrinfo(ai);
	return asprintf(out, "%s:%d", ip, port) < 0 ? -1 : 0;
}

int hosts_parse_file(struct hosts *h, const char *path, char *why, size_t whylen)
{
	FILE *f = fopen(path, "r");
	char line[1024], prefix[64];
	uint32_t lineno = 0;
	size_t w;

	memset(h, 0, sizeof(*h));
	if (!f) {
		snprintf(why, whylen, "cannot open host file %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *name, *opt, *save = NULL;
		uint32_t slots = 1;

		lineno++;
		snprintf(prefix, sizeof(prefix), "%s:%u: ", path, lineno);
		w = strlen(prefix);
		if ((s = strchr(line, '#')))
			*s = 0;
		s = trim(line);
		if (!*s)
			continue;
		name = strtok_r(s, " \t", &save);
		while ((opt = strtok_r(NULL, " \t", &save))) {
			char *end;

			if (strncmp(opt, "slots=", 6) || (slots = (uint32_t)strtoul(opt + 6, &end, 10)) == 0 ||
			    *end) {
				snprintf(why, whylen, "%sunknown or bad option '%s' (want slots=K)", prefix, opt);
				fclose(f);
				return -1;
			}
		}
		h->addr = realloc(h->addr, (h->m + 1) * sizeof(char *));
		h->slots = realloc(h->slots, (h->m + 1) * sizeof(uint32_t));
		h->pids = realloc(h->pids, (h->m + 1) * sizeof(pid_t));
		if (!h->addr || !h->slots || !h->pids)
			break;
		h->pids[h->m] = 0;
		h->slots[h->m] = slots;
		memcpy(why, prefix, w + 1);
		if (resolve(name, &h->addr[h->m], why + w, whylen - w)) {
			fclose(f);
			return -1;
		}
		h->m++;
	}
	fclose(f);
	if (!h->m) {
		snprintf(why, whylen, "host file %s lists no host", path);
		return -1;
	}
	return 0;
}

void hosts_stop_virtual(struct hosts *h, int grace_ms)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	uint32_t i, left;
	int waited = 0;

	do {
		left = 0;
		for (i = 0; i < h->m; i++) {
			if (h->pids[i] <= 0)
				continue;
			if (waitpid(h->pids[i], NULL, WNOHANG) == h->pids[i])
				h->pids[i] = 0;
			else
				left++;
		}
		if (left)
			nanosleep(&ts, NULL);
		waited += 10;
	} while (left && waited < grace_ms);
	for (i = 0; i < h->m; i++)
		if (h->pids[i] > 0) {
			kill(h->pids[i], SIGKILL);
			waitpid(h->pids[i], NULL, 0);
			h->pids[i] = 0;
		}
}

void hosts_free(struct hosts *h)
{
	for (uint32_t i = 0; i < h->m; i++)
		free(h->addr[i]);
	free(h->addr);
	free(h->slots);
	free(h->pids);
	memset(h, 0, sizeof(*h));
}
