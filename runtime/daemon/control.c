/* Frames from a launcher (msgrun) or msgctl on an authenticated control
 * connection. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"

static void send_stats(struct conn *c, struct job *j)
{
	const struct core_stats *s = core_stats(j->core);
	struct frame f = { .h.type = F_STATS };

	f.u.stats = (struct f_stats){ .host = j->cfg.host, .delivered = s->delivered,
				      .duplicates = s->duplicates, .mismatches = s->mismatches,
				      .decisions = s->decisions, .forwarded = s->forwarded };
	conn_send(c, &f, NULL, 0, 0);
}

static void write_stdin(struct job *j, const struct f_stdin *in)
{
	struct lp *lp = j->lps[0];

	if (!lp || lp->stdin_fd < 0)
		return;
	if (in->len && write(lp->stdin_fd, in->bytes, in->len) != (ssize_t)in->len)
		log_warn("stdin of 0.%u: short write, input dropped", lp->rep);
	if (in->eof) {
		close(lp->stdin_fd);
		lp->stdin_fd = -1;
	}
}

/* msgctl add-host: the launcher starts the job on the new daemon; tell it. */
static void host_add_request(struct job *j, const struct f_host_add *a)
{
	char ev[256];

	if (a->host >= j->cfg.m || a->host == j->cfg.host || strlen(a->addr) > 64 ||
	    strchr(a->addr, '"')) {
		log_warn("add-host: bad request for host %u", a->host);
		return;
	}
	snprintf(ev, sizeof(ev), "{\"event\":\"host-add\",\"host\":%u,\"addr\":\"%s\"}", a->host,
		 a->addr);
	job_event(j, ev);
}

/* The launcher says host h is back at addr (a replacement daemon). */
static void host_up(struct job *j, const struct f_host_add *a)
{
	char *addr;

	if (a->host >= j->cfg.m || a->host == j->cfg.host || !(addr = strdup(a->addr)))
		return;
	free(j->spec.hosts[a->host]);
	j->spec.hosts[a->host] = addr;
	if (j->peer_out[a->host])
		conn_close(j->peer_out[a->host], "host replaced");
	core_host_up(j->core, a->host);
	job_run_actions(j);
}

static void control_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	struct job *j = c->owner;
	uint64_t proved;
	char why[256];

	mbuf_put(payload);
	memcpy(&proved, c->nonce, sizeof(proved));
	if (f->h.type == F_JOB_START) {
		if (j || f->u.job_start.job != proved) {
			conn_close(c, "JOB_START for another job");
			return;
		}
		j = job_create(c, f, why, sizeof(why));
		if (!j) {
			log_err("job %llx refused: %s", (unsigned long long)proved, why);
			conn_close(c, why);
			return;
		}
		c->owner = j;
		{
			/* the launcher sends JOB_GO only once every daemon holds the
			 * job: a peer must never be refused as of an unknown job */
			struct frame ack = { .h.type = F_JOB_READY, .h.flags = JOB_READY_F_CREATED };

			ack.u.job_ready.host = j->cfg.host;
			conn_send(c, &ack, NULL, 0, 0);
		}
		return;
	}
	if (!j) {
		conn_close(c, "control frame before JOB_START");
		return;
	}
	job_clock(j);
	switch (f->h.type) {
	case F_JOB_GO:
		job_launch(j);
		break;
	case F_STDIN:
		write_stdin(j, &f->u.in);
		break;
	case F_JOB_KILL:
		job_kill(j, f->u.job_kill.signo > 0 && f->u.job_kill.signo < 65 ?
			    f->u.job_kill.signo : SIGKILL);
		break;
	case F_JOB_END:
		job_end(j, "ended by the launcher");
		break;
	case F_STATS_REQ:
		send_stats(c, j);
		break;
	case F_STATUS_REQ:
		status_send(j, c);
		break;
	case F_INJECT:
		inject_apply(j, c, &f->u.inject, f->h.flags);
		break;
	case F_HOST_ADD:
		host_add_request(j, &f->u.host_add);
		break;
	case F_HOST_UP:
		host_up(j, &f->u.host_add);
		break;
	default:
		conn_close(c, "unexpected frame on a control connection");
	}
}

static void control_closed(struct conn *c, const char *why)
{
	struct job *j = c->owner;

	if (j && j->control == c) {
		j->control = NULL;
		if (!j->ending) {
			log_warn("job %llx: launcher connection lost (%s): ending the job",
				 (unsigned long long)j->id, why);
			job_end(j, "launcher gone");
		}
	}
}

const struct conn_ops control_ops = {
	.frame = control_frame,
	.payload = NULL,
	.closed = control_closed,
};
