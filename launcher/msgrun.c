/* msgrun: start a replicated msg job and return its exit status.
 *
 *   msgrun -n N [-r R] [options] program [args...]
 *
 * Without a host file it starts virtual hosts (one msgd each on this
 * machine). It sends the job to every daemon, starts it once all hold it,
 * shows the job's output once per byte, fans stdin out to rank 0, and tears
 * everything down on the job's end, on a failed rank (r = 1) or on
 * SIGINT/SIGTERM. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "events.h"
#include "hosts.h"
#include "inject.h"
#include "jobdir.h"
#include "jobinfo.h"
#include "options.h"
#include "output.h"
#include "run.h"

extern char **environ;

double run_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* PATH search like execvp, but done here so every host gets the same path. */
static int resolve_program(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(prog, '/')) {
		if (!realpath(prog, out) || access(out, X_OK))
			return -1;
		return 0;
	}
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t dl = colon ? (size_t)(colon - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)dl, dl ? path : ".", prog);
		if (!access(buf, X_OK) && realpath(buf, out))
			return 0;
		path = colon ? colon + 1 : NULL;
	}
	(void)len;
	return -1;
}

/* The replicas' environment: ours, plus where libmsg finds msgd. Identical
 * in every replica (DESIGN §5, the determinism contract). */
static char **job_env(uint32_t *count)
{
	size_t n = 0, i, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 2, sizeof(char *));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "MSG_FD=", 7))
			env[k++] = environ[i];
	env[k++] = "MSG_FD=3";
	*count = (uint32_t)k;
	return env;
}

/* JOB_START for host h (flags: extra JOB_F_* such as REJOIN). */
static int send_job(struct run *R, uint32_t h, uint32_t flags)
{
	struct frame f = { .h.type = F_JOB_START };

	f.u.job_start = (struct f_job_start){
		.job = R->job, .n = R->o.n, .r = R->o.r, .m = R->hosts.m, .host = h,
		.mode = R->o.mode,
		.flags = R->o.flags | flags | (R->o.output_all ? JOB_F_OUTPUT_ALL : 0),
		.hb_period_ms = R->o.hb_period_ms, .hb_timeout_ms = R->o.hb_timeout_ms,
		.lag_floor_ms = R->o.stall_min_ms,
		.n_hosts = R->hosts.m, .hosts = R->hosts.addr,
		.argc = (uint32_t)R->o.argc, .argv = R->o.argv,
		.envc = R->envc, .envp = R->env, .jobdir = R->dir,
		.keepdir = R->keepdir,
	};
	return client_send(&R->cl[h], &f);
}

static int write_jobinfo(struct run *R)
{
	struct jobinfo ji = { .job = R->job, .n = R->o.n, .r = R->o.r, .m = R->hosts.m,
			      .hosts = R->hosts.addr,
			      .key_file = R->o.hostfile ? NULL : R->keyfile };

	return jobinfo_write(R->dir, &ji);
}

/* Wait for host h's acknowledgement of JOB_START (bounded). */
static int wait_created(struct run *R, uint32_t h)
{
	char why[256];
	struct frame f;

	for (int i = 0; i < 100; i++) {
		int ret = client_wait(&R->cl[h], &f, 10000, why, sizeof(why));

		if (ret != 1)
			return -1;
		frame_release(&f);
		if (f.h.type == F_JOB_READY && (f.h.flags & JOB_READY_F_CREATED))
			return 0;
	}
	return -1;
}

static int start_job(struct run *R)
{
	struct frame f = { .h.type = F_JOB_GO };
	char why[512], fields[256];
	uint32_t h;

	R->env = job_env(&R->envc);
	if (!R->env)
		return die("out of memory");
	if (resolve_program(R->o.argv[0], R->prog, sizeof(R->prog)))
		return die("cannot find an executable '%s'", R->o.argv[0]);
	R->o.argv[0] = R->prog;
	R->cl = calloc(R->hosts.m, sizeof(*R->cl));
	for (h = 0; h < R->hosts.m; h++) {
		if (client_open(&R->cl[h], R->hosts.addr[h], R->job, R->key, why, sizeof(why)))
			return die("host %u: %s", h, why);
		R->cl[h].host = h;
		if (send_job(R, h, 0))
			return die("host %u: cannot send the job", h);
	}
	for (h = 0; h < R->hosts.m; h++)
		if (wait_created(R, h))
			return die("host %u did not take the job", h);
	if (write_jobinfo(R))
		return die("cannot write %s/job.info", R->dir);
	snprintf(fields, sizeof(fields), "\"n\":%u,\"r\":%u,\"hosts\":%u,\"program\":\"%.180s\"",
		 R->o.n, R->o.r, R->hosts.m, R->prog);
	events_note(R->ev, "launch", fields);
	events_program(R->ev, R->prog);
	for (h = 0; h < R->hosts.m; h++)
		if (client_send(&R->cl[h], &f))
			return die("host %u: cannot start the job", h);
	return 0;
}

/* msgctl add-host: a fresh daemon stands for lost host h. Start the job on
 * it (it holds nothing and fetches the map) and tell every other daemon. */
static void add_host(struct run *R, uint32_t h, const char *addr)
{
	struct frame f = { .h.type = F_JOB_GO };
	struct client nc;
	char why[512], fields[128];
	char *copy = strdup(addr);

	if (h >= R->hosts.m || !copy ||
	    client_open(&nc, addr, R->job, R->key, why, sizeof(why))) {
		fprintf(stderr, "msgrun: add-host %u at %s: %s\n", h, addr, copy ? why : "bad host");
		free(copy);
		return;
	}
	free(R->hosts.addr[h]);
	R->hosts.addr[h] = copy;
	if (R->cl[h].fd >= 0)
		client_close(&R->cl[h]);
	R->cl[h] = nc;
	R->cl[h].host = h;
	R->isolated[h] = false;
	R->gone[h] = false;
	memset(R->lost_votes + (size_t)h * R->hosts.m, 0, R->hosts.m);
	if (send_job(R, h, JOB_F_REJOIN) || wait_created(R, h) || client_send(&R->cl[h], &f)) {
		fprintf(stderr, "msgrun: add-host %u: cannot start the job there\n", h);
		return;
	}
	f = (struct frame){ .h.type = F_HOST_UP };
	f.u.host_add = (struct f_host_add){ .host = h, .addr = copy };
	for (uint32_t x = 0; x < R->hosts.m; x++)
		if (x != h && R->cl[x].fd >= 0)
			client_send(&R->cl[x], &f);
	write_jobinfo(R);
	snprintf(fields, sizeof(fields), "\"added\":%u", h);
	events_note(R->ev, "host-added", fields);
	if (R->o.verbose)
		fprintf(stderr, "msgrun: host %u is back at %s\n", h, addr);
}

static void broadcast(struct run *R, const struct frame *f)
{
	for (uint32_t h = 0; h < R->hosts.m; h++)
		if (R->cl[h].fd >= 0)
			client_send(&R->cl[h], f);
}

void kill_job(struct run *R, int signo)
{
	struct frame f = { .h.type = F_JOB_KILL };

	f.u.job_kill.signo = signo;
	broadcast(R, &f);
}

static void print_stats(struct run *R)
{
	struct frame f = { .h.type = F_STATS_REQ };
	char why[256];

	broadcast(R, &f);
	for (uint32_t h = 0; h < R->hosts.m; h++) {
		for (int tries = 0; tries < 100; tries++) {
			int ret = client_wait(&R->cl[h], &f, 5000, why, sizeof(why));

			if (ret != 1)
				break;
			if (f.h.type != F_STATS)
				continue;
			fprintf(stderr, "msgrun: host %u: delivered %llu duplicates %llu mismatches %llu "
				"decisions %llu\n", h, (unsigned long long)f.u.stats.delivered,
				(unsigned long long)f.u.stats.duplicates,
				(unsigned long long)f.u.stats.mismatches,
				(unsigned long long)f.u.stats.decisions);
			break;
		}
	}
}

static void take_frame(struct run *R, uint32_t h, struct frame *f)
{
	switch (f->h.type) {
	case F_OUTPUT:
		output_take(R->out, &f->u.output);
		break;
	case F_PROC_EXIT:
		on_exit_frame(R, &f->u.proc_exit);
		break;
	case F_EVENT: {
		uint32_t g, k, host;
		char addr[80];
		int lost;

		events_take(R->ev, &f->u.event);
		if (events_isolated(&f->u.event)) {
			R->isolated[h] = true;
			for (g = 0; g < R->o.n; g++) /* its view of the others is void */
				if (R->lost_by[g] == h)
					R->lost_at[g] = 0;
		}
		if ((lost = events_group_lost(&f->u.event)) >= 0 && (uint32_t)lost < R->o.n &&
		    !R->isolated[h] && !R->lost_at[lost]) {
			R->lost_at[lost] = run_now();
			R->lost_by[lost] = h;
		}
		if ((lost = events_host_lost(&f->u.event)) >= 0 && (uint32_t)lost < R->hosts.m &&
		    !R->isolated[h])
			host_lost_vote(R, (uint32_t)lost, h);
		if (events_host_add(&f->u.event, &host, addr, sizeof(addr)))
			add_host(R, host, addr);
		if (events_relocation(&f->u.event, &g, &k, &host) && g < R->o.n && k < R->o.r &&
		    host < R->hosts.m) {
			R->loc[(size_t)g * R->o.r + k] = host;
			R->lost_at[g] = 0;
			/* a regenerated replica runs again (not once the job failed,
			 * nor once its rank counts as finished) */
			if (!R->failed && !R->done[g])
				R->status[(size_t)g * R->o.r + k] = -1;
		}
		break;
	}
	case F_JOB_READY:
		if (f->h.flags & JOB_READY_F_CREATED)
			break;
		if (R->o.verbose)
			fprintf(stderr, "msgrun: host %u ready with %u processes\n", h,
				f->u.job_ready.nprocs);
		break;
	default:
		break;
	}
}

static void forward_stdin(struct run *R, int *in_fd)
{
	struct frame f = { .h.type = F_STDIN };
	uint8_t buf[16384];
	ssize_t n = read(*in_fd, buf, sizeof(buf));

	if (n < 0 && errno == EINTR)
		return;
	f.u.in.eof = n <= 0;
	f.u.in.len = n > 0 ? (uint32_t)n : 0;
	f.u.in.bytes = buf;
	/* rank 0's replicas live on hosts 0..r-1 by the placement rule */
	for (uint32_t k = 0; k < R->o.r && k < R->hosts.m; k++)
		client_send(&R->cl[(0 * R->o.r + k) % R->hosts.m], &f);
	if (n <= 0)
		*in_fd = -1;
}

static int run_injections(struct run *R)
{
	double t = run_now() - R->t0;

	for (size_t i = 0; i < R->ninj; i++) {
		struct inj *in = &R->inj[i];
		uint32_t h = inject_host(in, R->o.r, R->hosts.m, R->loc);
		struct frame f;

		if (in->done || in->at > t)
			continue;
		in->done = true;
		inject_frame(in, &f);
		if (in->kind == INJ_HOLD || in->kind == INJ_HEAL) {
			broadcast(R, &f);
			continue;
		}
		if (R->o.verbose)
			fprintf(stderr, "msgrun: injecting %s at %.3fs\n", inject_name(in->kind), t);
		if (R->cl[h].fd >= 0)
			client_send(&R->cl[h], &f);
		if (in->kind == INJ_KILL_HOST && R->cl[h].fd >= 0) {
			/* it dies without a word: its connection is no longer ours
			 * to read, and its processes ended with it */
			client_close(&R->cl[h]);
			if (lose_host(R, h))
				return -1;
		}
	}
	return 0;
}

static int wait_job(struct run *R, int sfd)
{
	uint32_t m = R->hosts.m, h;
	struct pollfd *p = calloc(m + 2, sizeof(*p));
	double deadline = R->o.timeout > 0 ? run_now() + R->o.timeout : 0;
	int in_fd = STDIN_FILENO;
	char why[256];

	if (!p)
		return die("out of memory");
	while (R->groups_done < R->o.n) {
		int timeout = R->ninj ? 10 : 100, ret;

		confirm_lost(R);
		check_laggards(R);
		if (R->groups_done >= R->o.n)
			break;
		if (run_injections(R)) {
			free(p);
			return -1;
		}
		for (h = 0; h < m; h++)
			p[h] = (struct pollfd){ .fd = R->cl[h].fd, .events = POLLIN };
		p[m] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		p[m + 1] = (struct pollfd){ .fd = in_fd, .events = POLLIN };
		ret = poll(p, m + 2, timeout);
		if (ret < 0 && errno != EINTR)
			break;
		if (R->failed && !R->kill_at)
			R->kill_at = run_now();
		if (R->failed && run_now() - R->kill_at > 10) {
			fprintf(stderr, "msgrun: processes still reported running 10 s after the job "
				"was ended; giving up on them\n");
			break;
		}
		if (deadline && run_now() > deadline && !R->failed) {
			fprintf(stderr, "msgrun: job ran past --timeout %.1fs; ending it\n", R->o.timeout);
			R->failed = true;
			R->exit_code = 124;
			kill_job(R, SIGKILL);
		}
		if (deadline && run_now() > deadline + 5) {
			/* ended 5 s ago and some process never reported its end */
			fprintf(stderr, "msgrun: processes still unaccounted for 5 s after "
				"--timeout; giving up on them\n");
			break;
		}
		if (p[m].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGCHLD) {
				fprintf(stderr, "msgrun: %s: ending the job\n", strsignal((int)si.ssi_signo));
				R->failed = true;
				R->exit_code = 128 + (int)si.ssi_signo;
				kill_job(R, SIGKILL);
				break;
			}
		}
		if (in_fd >= 0 && (p[m + 1].revents & (POLLIN | POLLHUP)))
			forward_stdin(R, &in_fd);
		for (h = 0; h < m; h++) {
			struct frame f;

			if (p[h].fd < 0 || !(p[h].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (client_fill(&R->cl[h])) {
				client_close(&R->cl[h]);
				if (lose_host(R, h)) {
					free(p);
					return -1;
				}
				continue;
			}
			while ((ret = client_next(&R->cl[h], &f, why, sizeof(why))) == 1) {
				take_frame(R, h, &f);
				frame_release(&f);
			}
			if (ret < 0) {
				fprintf(stderr, "msgrun: host %u: %s\n", h, why);
				client_close(&R->cl[h]);
			}
		}
	}
	free(p);
	return 0;
}

static int setup_hosts(struct run *R)
{
	char why[512], keyfile[PATH_MAX + 16];

	if (R->o.hostfile) {
		if (!R->o.key_file)
			return die("--hostfile needs --key-file (or MSG_KEY_FILE): the site key "
				   "the hosts' msgd were started with");
		if (auth_load_key(R->o.key_file, R->site, why, sizeof(why)))
			return die("%s", why);
		if (hosts_parse_file(&R->hosts, R->o.hostfile, why, sizeof(why)))
			return die("%s", why);
		if (R->o.r > R->hosts.m)
			return die("-r %u needs at least %u hosts: no two replicas of a rank may "
				   "share a host, and %s lists %u", R->o.r, R->o.r, R->o.hostfile,
				   R->hosts.m);
	} else {
		auth_random(R->site, sizeof(R->site));
		snprintf(keyfile, sizeof(keyfile), "%s/site.key", R->dir);
		snprintf(R->keyfile, sizeof(R->keyfile), "%s", keyfile);
		if (auth_write_key(keyfile, R->site))
			return die("cannot write %s: %s", keyfile, strerror(errno));
		if (hosts_start_virtual(&R->hosts, R->o.vhosts, keyfile, R->o.verbose,
					R->o.ckpt_engine, R->o.tcp_cc, why, sizeof(why)))
			return die("%s", why);
	}
	auth_job_key(R->key, R->site, R->job);
	return 0;
}

static int block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	return signalfd(-1, &set, SFD_CLOEXEC);
}

static void finish(struct run *R)
{
	struct frame f = { .h.type = F_JOB_END };

	char fields[64];

	snprintf(fields, sizeof(fields), "\"exit\":%d", R->exit_code);
	events_note(R->ev, "job-end", fields);
	if (R->o.report)
		events_report(R->ev, stderr, R->exit_code);
	if (R->cl) {
		if (R->o.stats && !R->failed)
			print_stats(R);
		broadcast(R, &f);
		for (uint32_t h = 0; h < R->hosts.m; h++)
			client_close(&R->cl[h]);
	}
	hosts_stop_virtual(&R->hosts, 3000);
	if (!R->o.keep_dir)
		jobdir_remove(R->dir);
	else
		fprintf(stderr, "msgrun: job directory kept: %s\n", R->dir);
}

int main(int argc, char **argv)
{
	struct run R = { .exit_code = 0 };
	size_t i;
	int sfd, ret;

	ret = parse_args(argc, argv, &R.o);
	if (ret)
		return ret;
	if (auth_init())
		return die("libsodium failed to initialise");
	signal(SIGPIPE, SIG_IGN);
	sfd = block_signals();
	auth_random(&R.job, sizeof(R.job));
	if (R.o.keep_fenced && keepdir_resolve(R.o.keep_fenced, !R.o.hostfile, R.keepdir,
					       sizeof(R.keepdir)))
		return 2;
	if (jobdir_create(R.o.job_dir, R.job, R.dir, sizeof(R.dir)))
		return die("cannot create the job directory: %s", strerror(errno));
	R.status = malloc((size_t)R.o.n * R.o.r * sizeof(int));
	R.out = output_new(R.o.n, R.o.r, R.o.output_all);
	if (!R.status || !R.out)
		return die("out of memory");
	for (i = 0; i < (size_t)R.o.n * R.o.r; i++)
		R.status[i] = -1;
	{
		char why[512];

		R.t0 = run_now();
		R.ev = events_open(R.o.events_path, why, sizeof(why));
		if (!R.ev)
			return die("%s", why);
	}
	ret = setup_hosts(&R);
	if (!ret) {
		R.loc = malloc((size_t)R.o.n * R.o.r * sizeof(uint32_t));
		R.lost_at = calloc(R.o.n, sizeof(double));
		R.lost_by = calloc(R.o.n, sizeof(uint32_t));
		R.isolated = calloc(R.hosts.m + 1, sizeof(bool));
		R.gone = calloc(R.hosts.m + 1, sizeof(bool));
		R.lost_votes = calloc((size_t)R.hosts.m * R.hosts.m + 1, 1);
		R.majority_at = calloc(R.o.n, sizeof(double));
		R.done = calloc(R.o.n, sizeof(bool));
		if (!R.loc || !R.lost_at || !R.lost_by || !R.isolated || !R.gone || !R.lost_votes ||
		    !R.majority_at || !R.done)
			return die("out of memory");
		for (i = 0; i < (size_t)R.o.n * R.o.r; i++)
			R.loc[i] = (uint32_t)(i % R.hosts.m);
	}
	if (!ret && R.o.inject) {
		char why[512];

		if (inject_parse(R.o.inject, R.o.inject_seed, R.o.n, R.o.r, R.hosts.m, &R.inj,
				 &R.ninj, why, sizeof(why)))
			ret = die("%s", why);
	}
	if (!ret)
		ret = start_job(&R);
	if (!ret)
		wait_job(&R, sfd);
	else
		R.exit_code = ret;
	finish(&R);
	output_free(R.out);
	events_close(R.ev);
	free(R.inj);
	free(R.loc);
	free(R.lost_at);
	free(R.lost_by);
	free(R.isolated);
	free(R.gone);
	free(R.lost_votes);
	free(R.env);
	free(R.status);
	free(R.cl);
	hosts_free(&R.hosts);
	return R.exit_code;
}
