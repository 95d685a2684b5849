/* msgctl: inspect a running msg job and inject faults into it.
 *
 *   msgctl [--job-dir DIR] [--key-file K] COMMAND [ARGS]
 *
 * It reads <jobdir>/job.info (written by msgrun) to find the job's daemons,
 * proves the job key to each, and sends them status requests or injections. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "inject.h"
#include "jobinfo.h"

struct ctl {
	struct jobinfo ji;
	uint8_t key[AUTH_KEY_LEN];
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: msgctl [--job-dir DIR] [--key-file FILE] COMMAND [ARGS]\n"
		"\n"
		"Commands:\n"
		"  status               hosts, replicas per rank, processes per host\n"
		"  ps                   every replica: rank.replica, host, state, pid\n"
		"  kill G.K             kill replica K of rank G (a crash)\n"
		"  stall G.K            make it stop progressing (alive, inside libmsg)\n"
		"  corrupt G.K [N]      flip a bit in its next (or N-th next) message\n"
		"  kill-host H          host H dies with every process on it\n"
		"  cut H [MS]           isolate host H from its peers (for MS ms, else for good)\n"
		"  migrate G.K [HOST]   move a replica to HOST (default: least loaded)\n"
		"  evict H              move every process off host H\n"
		"  add-host H [ADDR]    a fresh host takes over lost host H: ADDR is its\n"
		"                       running msgd; for virtual hosts msgctl starts one\n"
		"  hold G.K             suspend failure detection for a replica\n"
		"  release G.K          resume it\n"
		"\n"
		"The job is the one in --job-dir, $MSG_JOB_DIR, or the only one under $TMPDIR.\n"
		"--key-file (or MSG_KEY_FILE) is the site key of a --hostfile job.\n");
}

static int open_host(struct ctl *c, uint32_t h, struct client *cl)
{
	char why[512];

	if (client_open(cl, c->ji.hosts[h], c->ji.job, c->key, why, sizeof(why))) {
		fprintf(stderr, "msgctl: host %u: %s\n", h, why);
		return -1;
	}
	return 0;
}

static int parse_replica(const char *s, const struct jobinfo *ji, uint32_t *g, uint32_t *k)
{
	char *end;

	*g = (uint32_t)strtoul(s, &end, 10);
	if (*end != '.' || *g >= ji->n)
		goto bad;
	*k = (uint32_t)strtoul(end + 1, &end, 10);
	if (*end || *k >= ji->r)
		goto bad;
	return 0;
bad:
	fprintf(stderr, "msgctl: '%s' is not a replica RANK.REPLICA of this job (n=%u r=%u)\n", s,
		ji->n, ji->r);
	return -1;
}

/* Daemons learn of changes at different times: keep the most advanced view
 * of a replica (a newer incarnation; for one incarnation dead is final and
 * verified beats joining). Pids are known only to a replica's own daemon. */
static void merge(struct f_status_rep *best, const struct f_status_rep *e)
{
	int32_t pid = e->local ? e->pid : best->pid;

	if (e->inc > best->inc ||
	    (e->inc == best->inc && best->state != MEMBER_DEAD &&
	     (e->state == MEMBER_DEAD || (e->state == MEMBER_LIVE && best->state == MEMBER_JOINING))))
		*best = *e;
	if (e->local || e->inc >= best->inc)
		best->host = e->local ? e->host : best->host;
	best->pid = pid;
}

static int status(struct ctl *c, bool ps)
{
	uint32_t h, m = c->ji.m, *live = calloc(c->ji.n, sizeof(uint32_t)), *load = calloc(m, sizeof(uint32_t));
	struct f_status best = { 0 };
	struct frame *keep = calloc(1, sizeof(*keep));
	int reachable = 0;

	if (!live || !load || !keep)
		return 1;
	printf("job %016llx: %u ranks x %u replicas on %u hosts\n", (unsigned long long)c->ji.job,
	       c->ji.n, c->ji.r, m);
	for (h = 0; h < m; h++) {
		struct client cl;
		struct frame f = { .h.type = F_STATUS_REQ };
		char why[256];
		int ret;

		if (open_host(c, h, &cl)) {
			printf("host %u %-21s unreachable\n", h, c->ji.hosts[h]);
			continue;
		}
		client_send(&cl, &f);
		while ((ret = client_wait(&cl, &f, 5000, why, sizeof(why))) == 1 && f.h.type != F_STATUS)
			frame_release(&f);
		if (ret != 1) {
			printf("host %u %-21s no answer\n", h, c->ji.hosts[h]);
			client_close(&cl);
			continue;
		}
		reachable++;
		for (uint32_t i = 0; i < f.u.status.count; i++) {
			struct f_status_rep *e = &f.u.status.reps[i];

			if (e->local && e->pid && e->state == MEMBER_LIVE)
				load[h]++;
		}
		printf("host %u %-21s up, %u processes\n", h, c->ji.hosts[h], load[h]);
		if (!best.reps) { /* the first answer's view of the map */
			*keep = f;
			best = f.u.status;
		} else {
			for (uint32_t i = 0; i < f.u.status.count && i < best.count; i++)
				merge(&best.reps[i], &f.u.status.reps[i]);
			frame_release(&f);
		}
		client_close(&cl);
	}
	for (uint32_t i = 0; i < best.count; i++)
		if (best.reps[i].state == MEMBER_LIVE && best.reps[i].group < c->ji.n)
			live[best.reps[i].group]++;
	if (ps) {
		printf("%-10s %-6s %-8s %-5s %s\n", "replica", "host", "state", "inc", "pid");
		for (uint32_t i = 0; i < best.count; i++) {
			struct f_status_rep *e = &best.reps[i];

			printf("%u.%-8u %-6u %-8s %-5u %d\n", e->group, e->rep, e->host,
			       e->state == MEMBER_LIVE ? "live" : e->state == MEMBER_JOINING ? "joining" :
			       "dead", e->inc, e->pid);
		}
	} else {
		printf("rank  verified live replicas\n");
		for (uint32_t g = 0; g < c->ji.n && best.reps; g++)
			printf("%-5u %u/%u\n", g, live[g], c->ji.r);
	}
	frame_release(keep);
	free(keep);
	free(live);
	free(load);
	return reachable ? 0 : 1;
}

/* Where replica g.k runs now: the daemon that has it as a local process (it
 * may have moved or been regenerated since the placement put it somewhere).
 * UINT32_MAX when no daemon has it. */
static uint32_t locate(struct ctl *c, uint32_t g, uint32_t k)
{
	for (uint32_t h = 0; h < c->ji.m; h++) {
		struct client cl;
		struct frame f = { .h.type = F_STATUS_REQ };
		char why[256];
		bool here = false;
		int ret;

		if (client_open(&cl, c->ji.hosts[h], c->ji.job, c->key, why, sizeof(why)))
			continue;
		client_send(&cl, &f);
		while ((ret = client_wait(&cl, &f, 5000, why, sizeof(why))) == 1 && f.h.type != F_STATUS)
			frame_release(&f);
		if (ret == 1) {
			for (uint32_t i = 0; i < f.u.status.count; i++) {
				const struct f_status_rep *e = &f.u.status.reps[i];

				/* a daemon it moved away from still has its (reaped)
				 * process entry: only a running one (pid) counts */
				here |= e->local && e->pid > 0 && e->group == g && e->rep == k &&
					e->state != MEMBER_DEAD;
			}
			frame_release(&f);
		}
		client_close(&cl);
		if (here)
			return h;
	}
	return UINT32_MAX;
}

static int inject(struct ctl *c, int kind, int argc, char **argv)
{
	struct inj in = { .kind = (uint8_t)kind };
	struct client cl;
	struct frame f;
	bool host_kind = kind == INJ_KILL_HOST || kind == INJ_CUT || kind == INJ_EVICT;
	bool all = kind == INJ_HOLD || kind == INJ_HEAL;
	uint32_t h, to = UINT32_MAX;

	if (argc < 1) {
		fprintf(stderr, "msgctl: %s needs a target\n", inject_name(kind));
		return 2;
	}
	if (host_kind) {
		char *end;

		in.host = (uint32_t)strtoul(argv[0], &end, 10);
		if (*end || in.host >= c->ji.m) {
			fprintf(stderr, "msgctl: '%s' is not a host of this job (0..%u)\n", argv[0],
				c->ji.m - 1);
			return 2;
		}
	} else if (parse_replica(argv[0], &c->ji, &in.group, &in.rep)) {
		return 2;
	}
	if (kind == INJ_MIGRATE)
		in.arg = UINT32_MAX;
	if (argc > 1) {
		char *end;

		in.arg = (uint32_t)strtoul(argv[1], &end, 10) - (kind == INJ_CORRUPT ? 1 : 0);
		if (*end || (kind == INJ_MIGRATE && in.arg >= c->ji.m)) {
			fprintf(stderr, "msgctl: bad argument '%s'\n", argv[1]);
			return 2;
		}
	}
	inject_frame(&in, &f);
	if (!host_kind && !all) {
		/* to the replica's daemon: where it runs now, not where it started */
		uint32_t at = locate(c, in.group, in.rep);

		to = at != UINT32_MAX ? at : inject_host(&in, c->ji.r, c->ji.m, NULL);
	}
	for (h = 0; h < c->ji.m; h++) {
		if (!all && h != (host_kind ? inject_host(&in, c->ji.r, c->ji.m, NULL) : to))
			continue;
		if (open_host(c, h, &cl))
			return 1;
		if (client_send(&cl, &f)) {
			fprintf(stderr, "msgctl: host %u did not take the command\n", h);
			client_close(&cl);
			return 1;
		}
		client_close(&cl);
	}
	return 0;
}

/* A virtual host's daemon, detached from us (it ends with the job). */
static int start_msgd(const char *key_file, char *addr, size_t len)
{
	char exe[PATH_MAX], line[32], fdarg[16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 8);
	int p[2];
	pid_t pid;

	if (n <= 0 || pipe(p))
		return -1;
	exe[n] = 0;
	snprintf(strrchr(exe, '/') + 1, 8, "msgd");
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		setsid();
		if (fork() == 0) {
			snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
			execl(exe, "msgd", "--key-file", key_file, "--listen", "127.0.0.1:0",
			      "--port-fd", fdarg, "--once", (char *)NULL);
			_exit(127);
		}
		_exit(0);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	waitpid(pid, NULL, 0);
	n = read(p[0], line, sizeof(line) - 1);
	close(p[0]);
	if (n <= 0)
		return -1;
	line[n] = 0;
	snprintf(addr, len, "127.0.0.1:%d", atoi(line));
	return 0;
}

static int add_host(struct ctl *c, const char *key_file, int argc, char **argv)
{
	struct frame f = { .h.type = F_HOST_ADD };
	char addr[80], *end;
	uint32_t h, via;
	struct client cl;

	if (argc < 1 || (h = (uint32_t)strtoul(argv[0], &end, 10), *end) || h >= c->ji.m) {
		fprintf(stderr, "msgctl: add-host needs a host number of this job (0..%u)\n", c->ji.m - 1);
		return 2;
	}
	if (argc > 1)
		snprintf(addr, sizeof(addr), "%s", argv[1]);
	else if (!c->ji.key_file || start_msgd(key_file, addr, sizeof(addr))) {
		fprintf(stderr, "msgctl: %s\n", c->ji.key_file ? "cannot start a msgd" :
			"this job's hosts are not virtual: give the new host's ADDR:PORT");
		return 1;
	}
	f.u.host_add = (struct f_host_add){ .host = h, .addr = addr };
	for (via = 0; via < c->ji.m; via++) {
		if (via == h || open_host(c, via, &cl))
			continue;
		if (!client_send(&cl, &f)) {
			client_close(&cl);
			printf("host %u: %s\n", h, addr);
			return 0;
		}
		client_close(&cl);
	}
	fprintf(stderr, "msgctl: no live host of the job took the request\n");
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "job-dir", required_argument, NULL, 'j' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *want = NULL, *key_file = getenv("MSG_KEY_FILE");
	char dir[PATH_MAX], why[512];
	uint8_t site[AUTH_KEY_LEN];
	struct ctl c;
	int o, kind, ret;

	while ((o = getopt_long(argc, argv, "+j:k:h", lo, NULL)) != -1) {
		switch (o) {
		case 'j': want = optarg; break;
		case 'k': key_file = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (auth_init() || jobinfo_find(want, dir, sizeof(dir), why, sizeof(why)) ||
	    jobinfo_read(dir, &c.ji, why, sizeof(why))) {
		fprintf(stderr, "msgctl: %s\n", why);
		return 1;
	}
	if (c.ji.key_file)
		key_file = c.ji.key_file;
	if (!key_file) {
		fprintf(stderr, "msgctl: this job needs --key-file (its site key)\n");
		return 2;
	}
	if (auth_load_key(key_file, site, why, sizeof(why))) {
		fprintf(stderr, "msgctl: %s\n", why);
		return 1;
	}
	auth_job_key(c.key, site, c.ji.job);
	if (!strcmp(argv[optind], "status") || !strcmp(argv[optind], "ps"))
		ret = status(&c, argv[optind][0] == 'p');
	else if (!strcmp(argv[optind], "add-host"))
		ret = add_host(&c, key_file, argc - optind - 1, argv + optind + 1);
	else if ((kind = inject_kind(argv[optind])) > 0)
		ret = inject(&c, kind, argc - optind - 1, argv + optind + 1);
	else {
		fprintf(stderr, "msgctl: unknown command '%s' (try --help)\n", argv[optind]);
		ret = 2;
	}
	jobinfo_free(&c.ji);
	return ret;
}
