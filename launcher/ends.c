/* How msgrun judges the job's end from what the daemons report: a replica's
 * end (on_exit_frame), one still running after its rank's majority finished
 * (check_laggards), a host declared lost by a majority of the hosts left
 * (host_lost_vote, lose_host), a rank said to have lost every replica
 * (confirm_lost). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "run.h"

static void describe(char *buf, size_t len, int st)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exited with code %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "ended with status %#x", st);
}

static int code_of(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* How many replicas of a rank make its answer (r = 2: either one; there is
 * no majority to wait for). */
static uint32_t majority(const struct run *R)
{
	return R->o.r == 2 ? 1 : R->o.r / 2 + 1;
}

void on_exit_frame(struct run *R, const struct f_proc_exit *e)
{
	uint32_t r = R->o.r, k, left = 0, good = 0;
	int *st;
	char what[96];

	if (e->group >= R->o.n || e->rep >= r)
		return;
	st = &R->status[(size_t)e->group * r + e->rep];
	if (*st != -1)
		return;
	*st = e->status;
	if (e->status != 0) {
		describe(what, sizeof(what), e->status);
		fprintf(stderr, "msgrun: rank %u (replica %u.%u on host %u) %s\n", e->group,
			e->group, e->rep, e->host, what);
	}
	for (k = 0; k < r; k++) {
		int s = R->status[(size_t)e->group * r + k];

		left += s == -1;
		good += s == 0;
	}
	if (e->status != 0 && !good && !left) {
		/* every replica of the rank failed: the job cannot go on */
		if (!R->failed) {
			R->failed = true;
			R->exit_code = code_of(e->status);
			fprintf(stderr, "msgrun: rank %u failed; ending the job\n", e->group);
			kill_job(R, SIGKILL);
		}
	}
	/* (or one finished and the ended make a majority: a replica killed
	 * for good cannot finish, and a stalled one whose copy source it was
	 * blocks that copy: nobody would ever suspect it once the rank's
	 * receivers are done) */
	if ((good >= majority(R) || (good && r - left >= majority(R))) && !R->majority_at[e->group])
		R->majority_at[e->group] = run_now();
	if (!left && !R->done[e->group]) {
		R->done[e->group] = true;
		R->groups_done++;
	}
}

/* A replica still running long after a majority of its rank's replicas
 * finished (msgFinalize, exit 0), or after one finished and the others
 * ended, is a laggard: stalled near the end, with
 * nothing left to compare that would expose it, or a copy regenerated late
 * that waits for a sibling that is gone. The rank's answer is the
 * majority's (every byte of output is emitted once, whichever replica wrote
 * it), so the job does not wait for it: after the grace the rank counts as
 * finished and the laggard is ended with the job. The grace is four times
 * the stall bound's floor (the bound grows with the load up to that) plus
 * two seconds. */
void check_laggards(struct run *R)
{
	double grace = 4 * (R->o.stall_min_ms ? R->o.stall_min_ms : 750) / 1000.0 + 2, now = run_now();
	char fields[128];

	if (R->failed)
		return;
	for (uint32_t g = 0; g < R->o.n; g++) {
		if (R->done[g] || !R->majority_at[g] || now - R->majority_at[g] < grace)
			continue;
		for (uint32_t k = 0; k < R->o.r; k++) {
			size_t i = (size_t)g * R->o.r + k;

			if (R->status[i] != -1)
				continue;
			R->status[i] = 0;
			snprintf(fields, sizeof(fields), "\"group\":%u,\"rep\":%u,\"host\":%u,"
				 "\"waited_s\":%.1f", g, k, R->loc[i], now - R->majority_at[g]);
			events_note(R->ev, "laggard", fields);
			if (R->o.verbose)
				fprintf(stderr, "msgrun: replica %u.%u (host %u) still runs %.1f s after "
					"a majority of rank %u finished; not waited for\n", g, k,
					R->loc[i], now - R->majority_at[g], g);
		}
		R->done[g] = true;
		R->groups_done++;
	}
}

/* Daemon x declared host h lost (its heartbeats stopped). A majority of the
 * job's hosts saying so, none of them cut off itself, is the job's verdict:
 * the coordinators fenced h's replicas, so they count as ended here even if
 * h's daemon cannot tell us (a real link cut also cuts our connection to it,
 * which TCP may keep open for many minutes). The majority is of the hosts
 * not lost already, as the daemons count it (runtime/core/detect.c,
 * quorum_hosts). */
void host_lost_vote(struct run *R, uint32_t h, uint32_t x)
{
	uint32_t m = R->hosts.m, y, votes = 0, base = m;

	R->lost_votes[(size_t)h * m + x] = 1;
	for (y = 0; y < m; y++) {
		if (R->gone[y] && y != h && !(R->o.flags & JOB_F_TEST_FIXED_QUORUM)) {
			base--;
			continue;
		}
		votes += R->lost_votes[(size_t)h * m + y] && !R->isolated[y];
	}
	if (votes * 2 > base && !R->gone[h] && !R->failed)
		lose_host(R, h);
}

/* A daemon's connection ended. With replication the job goes on while every
 * rank keeps a replica elsewhere; its processes count as ended. */
int lose_host(struct run *R, uint32_t h)
{
	uint32_t g, k, lost = 0;
	char fields[32];

	if (R->gone[h])
		return 0;
	R->gone[h] = true;

	fprintf(stderr, "msgrun: lost host %u (%s)\n", h, R->hosts.addr[h]);
	snprintf(fields, sizeof(fields), "\"gone\":%u", h);
	events_note(R->ev, "host-gone", fields);
	for (g = 0; g < R->o.n; g++)
		for (k = 0; k < R->o.r; k++) {
			struct f_proc_exit e = { .group = g, .rep = (uint16_t)k, .host = h,
						 .status = SIGKILL };

			if (R->loc[(size_t)g * R->o.r + k] == h &&
			    R->status[(size_t)g * R->o.r + k] == -1) {
				lost++;
				on_exit_frame(R, &e);
			}
		}
	/* a host every process moved off (migration, eviction) is no loss */
	if (R->o.r == 1 && lost && !R->failed) {
		fprintf(stderr, "msgrun: without replicas the job cannot go on\n");
		R->failed = true;
		R->exit_code = 1;
		kill_job(R, SIGKILL);
		return -1;
	}
	return 0;
}

/* A daemon said a rank has no replica left. A daemon cut off from the rest
 * says so of every rank, and then says it is isolated: give that a moment
 * (three heartbeat timeouts) before ending the job, naming the rank. */
void confirm_lost(struct run *R)
{
	double wait = 3 * (R->o.hb_timeout_ms ? R->o.hb_timeout_ms : 250) / 1000.0, now = run_now();

	if (R->failed)
		return;
	for (uint32_t g = 0; g < R->o.n; g++) {
		uint32_t k, left = 0;

		if (!R->lost_at[g] || now - R->lost_at[g] < wait)
			continue;
		for (k = 0; k < R->o.r; k++) {
			int st = R->status[(size_t)g * R->o.r + k];

			if (st == 0)
				break; /* it finished: nothing was lost */
			left += st == -1;
		}
		if (k < R->o.r || !left) {
			R->lost_at[g] = 0;
			continue;
		}
		fprintf(stderr, "msgrun: rank %u lost every replica (see --events); ending the job\n", g);
		R->failed = true;
		R->exit_code = 1;
		kill_job(R, SIGKILL);
		return;
	}
}
