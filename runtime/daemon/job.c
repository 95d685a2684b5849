/* A job on this daemon: created by JOB_START from the launcher, its local
 * replicas launched on JOB_GO (once every daemon holds the job, so no frame
 * reaches a daemon that does not know it), ended by JOB_END, by the
 * launcher's disappearance, or by a signal. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/daemon.h"
#include "util/log.h"

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void job_clock(struct job *j)
{
	core_now(j->core, mono_ns());
}

bool daemon_cut(void)
{
	return g_msgd.cut_until && mono_ns() < g_msgd.cut_until;
}

/* An event goes to the log and to the launcher's event stream. */
void job_event(struct job *j, const char *json)
{
	struct frame f = { .h.type = F_EVENT };

	if (strstr(json, "\"group-lost\"") || strstr(json, "\"isolated\""))
		log_warn("job %llx: %s", (unsigned long long)j->id, json);
	else
		log_info("job %llx: %s", (unsigned long long)j->id, json);
	if (!j->control)
		return;
	f.u.event = (struct f_event){ .mono_ns = mono_ns(), .host = j->cfg.host,
				      .len = (uint32_t)strlen(json), .json = (const uint8_t *)json };
	conn_send(j->control, &f, NULL, 0, 0);
}

struct job *job_find(uint64_t id)
{
	struct job *j;

	for (j = g_msgd.jobs; j; j = j->next)
		if (j->id == id && !j->ending)
			return j;
	return NULL;
}

struct job *job_create(struct conn *control, struct frame *start, char *why, size_t whylen)
{
	struct f_job_start *s = &start->u.job_start;
	struct job *j = calloc(1, sizeof(*j));

	if (!j) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	j->id = s->job;
	auth_job_key(j->key, g_msgd.site_key, j->id);
	j->cfg = (struct core_cfg){ .host = s->host, .n = s->n, .r = s->r, .m = s->m,
				    .mode = s->mode, .flags = s->flags,
				    .hb_period_ns = (uint64_t)s->hb_period_ms * 1000000,
				    .hb_timeout_ns = (uint64_t)s->hb_timeout_ms * 1000000,
				    .lag_floor_ns = (uint64_t)s->lag_floor_ms * 1000000 };
	j->core = core_new(&j->cfg);
	if (j->core && (s->flags & JOB_F_NO_REGEN))
		core_set_regen(j->core, false);
	if (j->core && getenv("MSG_TEST_PRECOPY_MAX_MS")) /* tests: a fault inside a pre-copy */
		core_set_precopy_max(j->core, strtoull(getenv("MSG_TEST_PRECOPY_MAX_MS"), NULL, 10) * 1000000ull);
	if (j->core && (s->flags & JOB_F_REJOIN))
		core_rejoin(j->core); /* holds nothing; fetches the map on launch */
	j->peer_out = calloc(s->m, sizeof(*j->peer_out));
	j->lps = calloc(s->n, sizeof(*j->lps));
	if (!j->core || !j->peer_out || !j->lps) {
		snprintf(why, whylen, "invalid job (n=%u r=%u m=%u host=%u) or out of memory",
			 s->n, s->r, s->m, s->host);
		core_free(j->core);
		free(j->peer_out);
		free(j->lps);
		free(j);
		return NULL;
	}
	/* take the strings over from the decoded frame */
	j->spec = *s;
	s->hosts = s->argv = s->envp = NULL;
	s->jobdir = s->keepdir = NULL;
	j->control = control;
	j->next = g_msgd.jobs;
	g_msgd.jobs = j;
	g_msgd.njobs_seen++;
	log_info("job %llx: host %u of %u, n=%u r=%u", (unsigned long long)j->id,
		 j->cfg.host, j->cfg.m, j->cfg.n, j->cfg.r);
	return j;
}

static void report_ready(struct job *j)
{
	struct frame f = { .h.type = F_JOB_READY };

	f.u.job_ready.host = j->cfg.host;
	f.u.job_ready.nprocs = j->nlocal;
	if (j->control)
		conn_send(j->control, &f, NULL, 0, 0);
}

void job_launch(struct job *j)
{
	uint32_t g, rep;

	if (j->launched)
		return;
	j->launched = true;
	for (g = 0; g < j->cfg.n; g++) {
		if (!core_is_local(j->core, g, &rep))
			continue;
		if (spawn_proc(j, g, rep)) {
			job_end(j, "a process could not be started");
			return;
		}
		j->nlocal++;
	}
	report_ready(j);
	/* now, not at the next tick: a move planned right at the start
	 * (tests, --plan) may reach this host within the first tick */
	spawn_spare_tick(j);
	job_run_actions(j);
}

static void run_peer(struct job *j, struct action *a)
{
	struct conn *c = daemon_cut() ? NULL : peer_out(j, a->host);
	struct f_data *d = &a->f.u.data;
	uint64_t off = 0;

	if (!c && daemon_cut()) {
		mbuf_put(a->m);
		return;
	}
	if (!c) {
		log_warn("no connection to host %u: %s frame dropped", a->host,
			 frame_type_name(a->f.h.type));
		mbuf_put(a->m);
		return;
	}
	if (a->f.h.type == F_HEARTBEAT) {
		conn_send_urgent(c, &a->f);
		return;
	}
	if (a->f.h.type != F_DATA) {
		conn_send(c, &a->f, NULL, 0, 0);
		return;
	}
	/* chunks, so control frames interleave and peers read into place */
	do {
		uint64_t left = d->total - off;

		d->off = off;
		d->chunk = (uint32_t)(left > FRAME_CHUNK_MAX ? FRAME_CHUNK_MAX : left);
		conn_send(c, &a->f, mbuf_get(a->m), off, d->chunk);
		off += d->chunk;
	} while (off < d->total);
	mbuf_put(a->m);
}

static void run_local(struct job *j, struct action *a)
{
	struct lp *lp = j->lps[a->group];

	if (!lp || !lp->conn) {
		mbuf_put(a->m);
		return;
	}
	conn_send(lp->conn, &a->f, a->m, 0, a->m ? a->m->len : 0);
}

/* The launcher counts every replica's end, once. */
static void send_exit(struct lp *lp)
{
	struct frame f = { .h.type = F_PROC_EXIT };

	if (lp->exit_sent || !lp->job->control)
		return;
	lp->exit_sent = true;
	f.u.proc_exit = (struct f_proc_exit){ .group = lp->g, .rep = (uint16_t)lp->rep,
					      .host = lp->job->cfg.host, .status = lp->status };
	conn_send(lp->job->control, &f, NULL, 0, 0);
}

void job_run_actions(struct job *j)
{
	struct action *v;
	size_t n, i;

	/* actions may not produce further core events synchronously, but loop
	 * anyway in case a future action does */
	while ((v = core_take_actions(j->core, &n)) != NULL && n) {
		for (i = 0; i < n; i++) {
			struct action *a = &v[i];

			switch (a->kind) {
			case A_PEER:
				run_peer(j, a);
				frame_release(&a->f);
				break;
			case A_LOCAL:
				run_local(j, a);
				break;
			case A_EVENT:
				job_event(j, a->text);
				break;
			case A_KILL:
				if (j->lps[a->group] && !j->lps[a->group]->reaped)
					keep_fence(j->lps[a->group]);
				else if (j->lps[a->group] && j->lps[a->group]->restore_failed)
					send_exit(j->lps[a->group]); /* lost in its move */
				break;
			case A_CAPTURE:
				if (a->f.h.flags & CAPTURE_F_PRECOPIED)
					image_capture_cut(j, &a->f.u.migrate);
				else
					image_capture(j, &a->f.u.migrate);
				break;
			}
		}
		free(v);
	}
	free(v);
	shmseg_check(j);
	direct_check(j);
}

void job_proc_done(struct lp *lp)
{
	struct job *j = lp->job;

	if (lp->reported || !lp->reaped || lp->open_pipes > 0)
		return;
	lp->reported = true;
	job_clock(j);
	if (lp->superseded) {
		j->ndone++;
		return; /* the core already replaced it */
	}
	if (lp->restored && !lp->connected) {
		/* msg-restore failed before the process existed: the source keeps
		 * it, or (a move whose source already ended) the core fences it */
		log_warn("restore of %u.%u failed (msg-restore status %#x)", lp->g, lp->rep, lp->status);
		lp->restore_failed = true;
		j->ndone++;
		core_restore_failed(j->core, lp->g);
		job_run_actions(j);
		return;
	}
	core_local_exit(j->core, lp->g, lp->status);
	job_run_actions(j);
	if (lp->stdin_fd >= 0) {
		close(lp->stdin_fd);
		lp->stdin_fd = -1;
	}
	j->ndone++;
	if (lp->migrating || lp->superseded) /* it lives on elsewhere, or anew here */
		return;
	send_exit(lp);
}

void job_kill(struct job *j, int signo)
{
	j->killed = true;
	core_set_regen(j->core, false); /* no copy may outlive the kill */
	spawn_kill_all(j, signo);
}

static void job_unlink(struct job *j)
{
	struct job **pp;

	for (pp = &g_msgd.jobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			return;
		}
}

/* End a job: kill what still runs, close its connections. Its memory is
 * kept until the daemon exits: late completions may still name it. */
void job_end(struct job *j, const char *why)
{
	uint32_t h;

	if (j->ending)
		return;
	j->ending = true;
	log_info("job %llx ends: %s", (unsigned long long)j->id, why);
	spawn_kill_all(j, SIGKILL);
	shmseg_free(j);
	for (h = 0; h < j->cfg.m; h++)
		if (j->peer_out[h])
			conn_close(j->peer_out[h], "job ended");
	if (j->control) {
		struct conn *c = j->control;

		j->control = NULL;
		conn_close(c, "job ended");
	}
	job_unlink(j);
	if (g_msgd.once)
		g_loop->stop = true;
}
