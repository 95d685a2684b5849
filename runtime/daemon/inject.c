/* Fault injection (msgctl, msgrun --inject), status for msgctl, and the
 * periodic tick that drives the core's timers. An injected fault is made
 * to look real to the rest of the system: a killed process is SIGKILLed, a
 * stalled one stops inside libmsg (alive, but making no progress), a
 * corrupt one sends one wrong message, a killed host vanishes without a
 * word, a cut host stops talking to its peers. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "msg.h"
#include "util/log.h"

#define TICK_NS (20 * 1000 * 1000)

static struct ticker {
	struct op op;
	struct __kernel_timespec ts;
} tick;

static void tick_submit(void);

/* Runnable tasks per core, smoothed, from /proc/loadavg's instantaneous
 * count (field 4, "running/total"); read every 10th tick. */
static uint32_t host_load(void)
{
	static uint32_t ticks, milli = 1000;
	static long cores;
	char buf[128];
	unsigned running = 0;
	FILE *f;

	if (ticks++ % 10)
		return milli;
	if (!cores)
		cores = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
	f = fopen("/proc/loadavg", "r");
	if (!f)
		return milli;
	if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%*s %*s %*s %u", &running) == 1) {
		uint32_t now = (uint32_t)(running * 1000 / (unsigned long)cores);

		/* rise at once, fall slowly: a burst of load makes stalls likely */
		milli = now > milli ? now : milli - (milli - now) / 8;
	}
	fclose(f);
	return milli;
}

static void tick_done(struct op *op, int res)
{
	struct job *j;
	uint32_t load = host_load();

	(void)op;
	(void)res;
	priority_tick();
	links_tick(mono_ns());
	for (j = g_msgd.jobs; j; j = j->next) {
		if (!j->launched || j->ending)
			continue;
		/* cut off, the core still ticks: its heartbeats are dropped
		 * (run_peer) and peers' go unheard, so its lease runs out and it
		 * fences its own processes (rule 3) */
		core_set_load(j->core, load);
		core_tick(j->core, mono_ns());
		job_run_actions(j);
		spawn_spare_tick(j);
	}
	tick_submit();
}

static void tick_submit(void)
{
	struct io_uring_sqe *sqe = loop_sqe(g_loop, &tick.op);

	if (!sqe)
		return;
	tick.ts.tv_sec = 0;
	tick.ts.tv_nsec = TICK_NS;
	io_uring_prep_timeout(sqe, &tick.ts, 0, 0);
}

int ticker_start(void)
{
	tick.op.cb = tick_done;
	tick_submit();
	return 0;
}

static void cut_peers(struct job *j, uint32_t ms)
{
	if (g_msgd.cut_links && links_cut(ms) > 0)
		return; /* the links themselves are down: no pretending */
	g_msgd.cut_until = ms ? mono_ns() + (uint64_t)ms * 1000000 : UINT64_MAX;
	for (uint32_t h = 0; h < j->cfg.m; h++)
		if (j->peer_out[h])
			conn_close(j->peer_out[h], "cut off (injected partition)");
	/* inbound peer connections close on their next frame */
}

static void kill_host(void)
{
	/* a crash: no goodbyes, every process of every job dies with us */
	for (struct job *j = g_msgd.jobs; j; j = j->next)
		spawn_kill_all(j, SIGKILL);
	_exit(0);
}

static void migrate_one(struct job *j, uint32_t g, uint32_t k, uint32_t target)
{
	struct f_migrate m = { .group = g, .rep = (uint16_t)k, .src_rep = (uint16_t)k,
			       .target = target, .mode = MIG_MOVE };

	if (target == UINT32_MAX)
		m.target = target = core_choose_host(j->core, g);
	if (target == UINT32_MAX || core_migrate(j->core, &m))
		log_warn("cannot migrate %u.%u to host %u (busy, not here, or a sibling is there)",
			 g, k, target);
}

void inject_apply(struct job *j, struct conn *from, const struct f_inject *in, uint8_t flags)
{
	struct lp *lp = in->group < j->cfg.n ? j->lps[in->group] : NULL;
	char ev[160];

	(void)from;
	if (in->kind != INJ_KILL_HOST && in->kind != INJ_CUT && in->kind != INJ_EVICT &&
	    (!lp || lp->rep != in->rep || lp->reaped)) {
		if (in->kind != INJ_HOLD && in->kind != INJ_HEAL) {
			log_warn("inject: replica %u.%u is not running here", in->group, in->rep);
			return;
		}
	}
	snprintf(ev, sizeof(ev), "{\"event\":\"injected\",\"fault\":\"%s\",\"group\":%u,\"rep\":%u,"
		 "\"arg\":%u}",
		 in->kind == INJ_KILL ? "kill" : in->kind == INJ_STALL ? "stall" :
		 in->kind == INJ_CORRUPT ? "corrupt" : in->kind == INJ_KILL_HOST ? "kill-host" :
		 in->kind == INJ_CUT ? "cut" : in->kind == INJ_HOLD ? "hold" :
		 in->kind == INJ_MIGRATE ? "migrate" : in->kind == INJ_EVICT ? "evict" : "release",
		 in->group, in->rep, in->arg);
	if (in->kind != INJ_CORRUPT)
		job_event(j, ev);
	switch (in->kind) {
	case INJ_KILL:
		kill(lp->pid, SIGKILL);
		break;
	case INJ_STALL: {
		/* libmsg stops inside its current or next receive, alive */
		struct frame f = { .h.type = L_ERROR };

		f.u.error.code = MSG_EINTERNAL_STALL;
		lp->stalled = true;
		/* not before its welcome (msgInitialize would fail): local.c
		 * sends it right after the welcome then */
		if (lp->conn && lp->connected)
			conn_send(lp->conn, &f, NULL, 0, 0);
		shmseg_poke(j, lp->g); /* off the rings, to where the error waits */
		break;
	}
	case INJ_CORRUPT:
		/* arg: messages to let pass, counted from the process's start
		 * (a schedule, reproducible) or from now (msgctl) */
		lp->corrupt_at = (flags & INJECT_F_FROM_START ? 0 : lp->sends) + in->arg + 1;
		if (lp->corrupt_at <= lp->sends)
			log_warn("inject: %u.%u sent %llu messages already; corrupting its next one",
				 in->group, in->rep, (unsigned long long)lp->sends);
		break;
	case INJ_KILL_HOST:
		kill_host();
		break;
	case INJ_CUT:
		cut_peers(j, in->arg);
		break;
	case INJ_HOLD:
	case INJ_HEAL:
		core_hold(j->core, in->group, in->rep, in->kind == INJ_HOLD);
		break;
	case INJ_MIGRATE:
		migrate_one(j, in->group, in->rep, in->arg);
		break;
	case INJ_EVICT:
		for (uint32_t g = 0; g < j->cfg.n; g++) {
			struct lp *x = j->lps[g];

			if (x && !x->reaped && core_alive(j->core, g, x->rep))
				migrate_one(j, g, x->rep, core_choose_host(j->core, g));
		}
		break;
	}
	job_run_actions(j);
}

void status_send(struct job *j, struct conn *to)
{
	struct frame f = { .h.type = F_STATUS };
	uint32_t g, k, n = 0, total = j->cfg.n * j->cfg.r;
	struct f_status_rep *v;

	if (total > STATUS_MAX)
		total = STATUS_MAX;
	v = calloc(total + 1, sizeof(*v));
	if (!v)
		return;
	for (g = 0; g < j->cfg.n && n < total; g++)
		for (k = 0; k < j->cfg.r && n < total; k++) {
			struct lp *lp = j->lps[g];
			bool local = lp && lp->rep == k;

			v[n++] = (struct f_status_rep){
				.group = g, .rep = (uint16_t)k, .host = core_host_of(j->core, g, k),
				.state = !core_alive(j->core, g, k) ? MEMBER_DEAD :
					 core_joining(j->core, g, k) ? MEMBER_JOINING : MEMBER_LIVE,
				.local = local, .inc = core_inc(j->core, g, k),
				.pid = local && !lp->reaped ? lp->pid : 0,
			};
		}
	f.u.status = (struct f_status){ .host = j->cfg.host, .n = j->cfg.n, .r = j->cfg.r,
					.m = j->cfg.m, .count = n, .reps = v };
	conn_send(to, &f, NULL, 0, 0);
	free(v);
}
