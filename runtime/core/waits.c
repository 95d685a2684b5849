/* What each local replica waits for, as events (msgd on SIGUSR1): for a job
 * that makes no progress and no detector fires (campaign run 165 of
 * session 5: every fault repaired, then nothing until --timeout), the
 * event log then says which receive is blocked, on which channel, and which
 * sender replicas' copies of the next message are there. */
#include "core/core_impl.h"

#include <stdio.h>
#include <string.h>

#include "msg.h"

/* (an event's text is 192 bytes: short names, flags as one string) */
static void chan_wait_event(struct core *c, uint32_t g, const struct lproc *p, const struct chan *ch)
{
	const struct entry *e = chan_entry((struct chan *)ch, ch->consumed_low + 1);
	uint32_t alive = 0, joining = 0;

	for (uint32_t k = 0; k < c->cfg.r; k++) {
		alive |= core_alive(c, ch->src, k) ? 1u << k : 0;
		joining |= core_joining(c, ch->src, k) ? 1u << k : 0;
	}
	core_event(c, "wait-chan",
		   "\"group\":%u,\"rep\":%u,\"src\":%u,\"contig\":%llu,\"low\":%llu,\"navail\":%u,"
		   "\"seen\":%u,\"nvar\":%u,\"chosen\":%d,\"alive\":%u,\"joining\":%u",
		   g, p->rep, ch->src, (unsigned long long)ch->contig,
		   (unsigned long long)ch->consumed_low, ch->navail, e ? e->seen : 0,
		   e ? e->nvar : 0, e ? e->chosen : -9, alive, joining);
}

static void add_flag(char *buf, size_t len, bool on, const char *name)
{
	size_t n = strlen(buf);

	if (on)
		snprintf(buf + n, len - n, "%s%s", n ? " " : "", name);
}

void core_dump_waits(struct core *c)
{
	for (uint32_t g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];
		char fl[96] = "";

		if (!p->present)
			continue;
		add_flag(fl, sizeof(fl), p->running, "running");
		add_flag(fl, sizeof(fl), p->want, "want");
		add_flag(fl, sizeof(fl), p->capturing, p->cap_sent ? "capture-sent" : "capture");
		add_flag(fl, sizeof(fl), p->restoring, p->state_ready ? "restoring-ready" : "restoring");
		add_flag(fl, sizeof(fl), p->fwd, "fwd");
		add_flag(fl, sizeof(fl), p->finalized, "finalized");
		add_flag(fl, sizeof(fl), p->fenced, "fenced");
		add_flag(fl, sizeof(fl), p->leading, "leading");
		add_flag(fl, sizeof(fl), c->isolated, "isolated");
		core_event(c, "wait-state",
			   "\"group\":%u,\"rep\":%u,\"src\":%d,\"tag\":%d,\"any_next\":%llu,\"epoch\":%u,"
			   "\"flags\":\"%s\"",
			   g, p->rep, p->want ? p->want_src : -9, p->want ? p->want_tag : -9,
			   (unsigned long long)p->any_next, c->epoch[g], fl);
		for (uint32_t i = 0; i < p->nchan_list; i++) {
			const struct chan *ch = p->chans[p->chan_list[i]];

			/* the channel it waits on, and any with messages not consumed */
			if (ch && ((p->want && (int32_t)ch->src == p->want_src) || ch->navail ||
				   ch->contig != ch->consumed_low))
				chan_wait_event(c, g, p, ch);
		}
	}
}
