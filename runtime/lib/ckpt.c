/* Capture at the safe point (DESIGN §7). msgd answers a blocked receive
 * with L_CKPT and passes a socket to the target host's restorer; the image
 * goes straight into it. The runtime's own descriptors are not the
 * application's: they are left out and re-created on the target, where the
 * restored process finds a fresh connection to its new msgd on fd 3. */
#include <errno.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ckpt/ckpt.h"
#include "lib/lib.h"
#include "msg.h"

/* Which engine took the last live copy (L_CKPT_DONE's header flags tell
 * msgd, whose migrate-captured event names it). */
static uint8_t g_snap_engine;

/* What the last live copy by pre-copy cost this process, for
 * MSG_CKPT_REPORT (bench/migration): wall and thread CPU time of its begin,
 * its steps and its stop. msgd holds the receive meanwhile, so all of it
 * is the process's extra time unless the receive had to wait anyway; the
 * CPU time is what it costs where the process has a core of its own. */
static struct copy_cost {
	uint64_t begin_us, steps_us, stop_us, begin_cpu, steps_cpu, stop_cpu;
	uint64_t runq_us;   /* of the wall time: runnable, waiting for a CPU */
	long blocked;       /* times it slept (voluntary context switches) */
	int steps;
	bool valid;
} g_cost;

/* MSG_CKPT_REPORT=1 (bench/migration): what live copies cost, on stderr */
static bool report_on(void)
{
	return getenv("MSG_CKPT_REPORT") != NULL;
}

/* Time this thread spent runnable but not running (schedstat's second
 * field), and its voluntary context switches: where a copy's wall time
 * beyond its CPU time went, for MSG_CKPT_REPORT only (a /proc read). */
static void off_cpu(uint64_t *runq_us, long *blocked)
{
	unsigned long long run = 0, wait = 0;
	struct rusage ru;
	FILE *f;

	*runq_us = 0;
	*blocked = 0;
	if (!report_on())
		return;
	f = fopen("/proc/thread-self/schedstat", "r");
	if (f) {
		if (fscanf(f, "%llu %llu", &run, &wait) == 2)
			*runq_us = wait / 1000u;
		fclose(f);
	}
	if (!getrusage(RUSAGE_THREAD, &ru))
		*blocked = ru.ru_nvcsw;
}

static uint64_t cpu_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static int done(int status, uint8_t flags)
{
	struct frame f = { .h.type = L_CKPT_DONE, .h.flags = flags };

	f.u.ckpt_done.status = status;
	return lib_write_frame(&f, NULL, 0);
}

static int reconnect(void)
{
	struct frame f = { .h.type = L_HELLO };
	int ret;

	f.u.hello = (struct l_hello){ .version = MSG_API_VERSION, .flags = HELLO_F_RESTORED };
	ret = lib_write_frame(&f, NULL, 0);
	/* a daemon that expected a kernel-module image says "resumed" first
	 * (msgd fell back to this engine after msgmig.ko refused): we are */
	do {
		if (!ret)
			ret = lib_read_frame(&f);
	} while (!ret && f.h.type == L_CKPT && f.u.ckpt.mode == MIG_RESUMED);
	if (!ret && f.h.type != L_WELCOME)
		ret = MSG_EPROTO;
	return ret;
}

int lib_resumed(void)
{
	msg_lib.restores++;
	return reconnect();
}

void lib_reap_snapshot(void)
{
	struct ckpt_error err = { 0 };
	int r;

	if (!msg_lib.snapshot_pending)
		return;
	msg_lib.snapshot_pending = false;
	if (g_snap_engine == CKPT_DONE_F_PRECOPY) {
		r = ckpt_precopy_wait(&err);
		ckpt_precopy_release();
	} else {
		r = ckpt_snapshot_wait(&err);
	}
	if (r < 0)
		fprintf(stderr, "msg: a live copy of this process failed: %s\n", err.what);
	if (g_cost.valid && report_on())
		fprintf(stderr, "msg: rank %u.%u: live copy cost: begin %llu us (cpu %llu), %d steps %llu us (cpu %llu), "
			"stop %llu us (cpu %llu); runnable without a CPU %llu us, blocked %ld times\n",
			msg_lib.id, msg_lib.rep, (unsigned long long)g_cost.begin_us,
			(unsigned long long)g_cost.begin_cpu, g_cost.steps, (unsigned long long)g_cost.steps_us,
			(unsigned long long)g_cost.steps_cpu, (unsigned long long)g_cost.stop_us,
			(unsigned long long)g_cost.stop_cpu, (unsigned long long)g_cost.runq_us,
			g_cost.blocked);
	g_cost.valid = false;
	/* MSG_CKPT_REPORT=1 (bench/migration): what the background snapshot's
	 * write faults after its stop cost this process (not in the stop) */
	struct ckpt_bg_stats st;
	if (g_snap_engine == CKPT_DONE_F_PRECOPY && report_on() && ckpt_precopy_stats(&st))
		fprintf(stderr, "msg: rank %u.%u: live copy: %llu write faults after the stop, waited <= %llu us "
			"(service %llu us), %llu of %llu KiB saved by faults, all saved %llu us after the cut\n",
			msg_lib.id, msg_lib.rep, (unsigned long long)st.faults_post,
			(unsigned long long)st.post_wait_bound_ns / 1000, (unsigned long long)st.post_service_ns / 1000,
			(unsigned long long)st.fault_bytes >> 10, (unsigned long long)st.saved_bytes >> 10,
			(unsigned long long)(st.arm_ns + st.copy_ns) / 1000);
}

/* How much the next step may send: 0 once the process would no longer be
 * blocked (a frame from msgd: the message this receive waits for is
 * there), else what the image socket takes without waiting. The process
 * must never wait for the stream's reader (a slow or lost target host):
 * what is left goes into the stop's sink and the helper writes it. */
#define STEP_MAX (256u << 10)

static size_t step_room(int img)
{
	struct pollfd p[2] = { { .fd = msg_lib.fd, .events = POLLIN }, { .fd = img, .events = POLLOUT | POLLRDHUP } };
	int sndbuf = 0, queued = 0;
	socklen_t len = sizeof(sndbuf);
	long room;

	if (poll(p, 2, 0) < 0 || (p[0].revents & (POLLIN | POLLHUP | POLLERR)) || !(p[1].revents & POLLOUT) ||
	    (p[1].revents & (POLLHUP | POLLERR | POLLRDHUP)))
		return 0;
	if (getsockopt(img, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) || ioctl(img, SIOCOUTQ, &queued))
		return STEP_MAX; /* no socket (tests use pipes): POLLOUT it is */
	/* the kernel doubles SO_SNDBUF for its own overhead: half is data room */
	room = (long)sndbuf / 2 - queued - (64 << 10);
	return room <= 0 ? 0 : room > STEP_MAX ? STEP_MAX : (size_t)room;
}

/* A regeneration copy by pre-copy (DESIGN §7), spread over receives: the
 * first L_CKPT only begins it (userfaultfd write-protection, the layout
 * into the stream) and the process goes on (L_CKPT_DONE PENDING: msgd
 * delivers again, nothing is cut); the pages go out while later receives
 * wait anyway, as much as the image socket takes; when every page went
 * once, READY asks msgd for the cut, and at the next receive its L_CKPT
 * (no socket) has the short stop copy what was written since (the
 * restorer applies later page records over earlier ones). Nothing before
 * the cut means anything to the protocol: a failure drops it all and the
 * copy fails as a capture does. A step never waits for the stream's
 * reader (a slow or lost target host): what is left at the cut goes into
 * the stop's sink and the helper writes it. Refusals and I/O errors are
 * the copy's failure; a kernel that cannot track some region fails begin
 * before anything is written: fork then. */
static uint64_t wall_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

#define PRE_PENDING 2 /* copy_precopy: begun, the cut comes at a later receive */

struct pre {
	bool on;            /* a copy begun at an earlier receive awaits its cut */
	int img;            /* its image stream, or -1 (a prepared stop begun early: it comes with the cut) */
	bool ready;         /* READY sent */
	int steps;
	uint64_t t0;
	uint64_t begin_us, begin_cpu; /* its begin, for MSG_CKPT_REPORT at the cut */
	long prep_total;    /* a prepared stop: the bytes its helper had to populate */
	struct ckpt_opts o; /* the engine keeps a pointer to it until the cut */
};
static struct pre g_pre = { .img = -1 };

static bool env_on(const char *name);

static bool trace_on(void)
{
	return env_on("MSG_CKPT_TRACE");
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && *v != '0';
}

/* MSG_CKPT_SPREAD=1: spread the pre-copy over receives. Off by default: on
 * a process that rewrites its memory faster than the stream carries it
 * (Dirichlet: half its image each sweep) the cut copies the whole image
 * anyway, and the spread only adds its own duration to the time back to r
 * replicas (bench/migration/README.md, session 7). */
static bool spread_allowed(void)
{
	return env_on("MSG_CKPT_SPREAD");
}

/* How long a prepared stop's buffer may take: MSG_CKPT_PREPARE_MS, 100 ms
 * by default (51 MB took 8-130 ms with a core to itself here, fresh huge
 * pages being dear on this VM), and up to 4 times that for a helper whose
 * pace says it will be done by then. A cut that comes while the helper
 * still populates races it: each of its huge-page faults holds a vCPU for
 * milliseconds on this VM (the host backs the page), and the survivor's
 * stop waited 3-5 ms for a CPU at 51 and 114 MB (bench/migration, session
 * 15: 114 MB took 150-210 ms, the stop then met its target 3 times of 3
 * against 1 of 3). A helper starved of CPU (0.4-0.9 s on a loaded
 * machine) is still cut off at the soft bound, not to hold back the copy. */
static bool prepare_done_waiting(long left)
{
	const char *v = getenv("MSG_CKPT_PREPARE_MS");
	uint64_t soft = (v && *v ? strtoull(v, NULL, 10) : 100) * 1000, t = wall_us() - g_pre.t0;
	long done;

	if (g_pre.prep_total < left)
		g_pre.prep_total = left;
	done = g_pre.prep_total - left;
	if (t < soft)
		return false;
	if (t >= 4 * soft || done <= 0)
		return true;
	/* the pace so far: all of it by 4 x soft? */
	return (double)t * (double)g_pre.prep_total / (double)done > 4.0 * (double)soft;
}

/* The prepared stop (runtime/ckpt/prepare.c), the default copy: the first
 * receive only has the stop's buffer made ready while the process runs on,
 * the cut at a later one copies everything into it (bench/migration,
 * session 14: the survivor's stop at 51 MB 13-18 ms against 21-34 for the
 * capture inside one receive). MSG_CKPT_PREPARE=0 gives the latter (the
 * write-protected pre-copy with steps while the receive would block);
 * the spread pre-copy and the background snapshot track writes instead. */
static bool prepare_wanted(void)
{
	const char *v = getenv("MSG_CKPT_PREPARE");

	return !(v && *v == '0') && !spread_allowed() && !env_on("MSG_CKPT_BGSNAP");
}

/* Steps while the stream takes them without waiting. */
static long precopy_steps(int img, int *steps, struct ckpt_error *err)
{
	long left = 1;
	size_t room;

	if (ckpt_precopy_prepared()) { /* nothing to send: is the buffer ready? */
		(*steps)++;
		left = ckpt_precopy_step(0, err);
		/* not waiting on past the bound (prepare_done_waiting): the stop
		 * copies into what is ready and the helper populates on ahead */
		return left > 0 && prepare_done_waiting(left) ? 0 : left;
	}
	while (left > 0 && (room = step_room(img)) >= (16u << 10)) {
		left = ckpt_precopy_step(room, err);
		(*steps)++;
	}
	return left;
}

static void pre_drop(void)
{
	ckpt_precopy_abort();
	if (g_pre.img >= 0)
		close(g_pre.img);
	g_pre = (struct pre){ .img = -1 };
}

static int copy_precopy(int img, const struct ckpt_opts *o, struct ckpt_error *err)
{
	long left = 1;
	uint64_t t0 = wall_us(), t1, t2, c0 = cpu_us(), c1, c2, q0, q1;
	int r = 0, steps = 0;
	bool cut = g_pre.on;
	long b0, b1;

	off_cpu(&q0, &b0);

	g_cost.valid = false;
	if (!cut) {
		g_pre.o = *o;
		g_pre.o.prepare = prepare_wanted();
		r = ckpt_precopy_begin(img, &g_pre.o, err);
		/* a memory region userfaultfd cannot track: begin failed before
		 * it wrote anything, so the fork engine can still use the stream
		 * (msgd's event and log say fork) */
		if (r == CKPT_E_KERNEL) {
			g_snap_engine = CKPT_DONE_F_FORK;
			return ckpt_snapshot_live(img, o, err);
		}
		if (r)
			return r;
		if (spread_allowed() || g_pre.o.prepare) {
			g_pre = (struct pre){ .on = true, .img = img, .t0 = t0, .o = g_pre.o, .begin_us = wall_us() - t0,
					      .begin_cpu = cpu_us() - c0 };
			if (trace_on())
				fprintf(stderr, "msg: live copy at %llu us: begin %llu us, %s\n", (unsigned long long)t0,
					(unsigned long long)(wall_us() - t0),
					g_pre.o.prepare ? "the stop prepared" : "spread over receives");
			return PRE_PENDING;
		}
	}
	t1 = wall_us(), c1 = cpu_us();
	/* (not at a spread pre-copy's cut: its reader drains while we are
	 * stopped, so steps "while there is room" went on for seconds under
	 * load; the stop's sink takes what is left at memory speed) */
	/* (nor in a background snapshot: its helper streams what is not sent
	 * after the cut while we run on; steps here only lengthen the stop,
	 * ~12 ms for 5 of 51 MB at load 10) */
	left = cut || ckpt_precopy_background() ? 0 : precopy_steps(img, &steps, err);
	if (left < 0) {
		if (cut)
			g_pre = (struct pre){ .img = -1 }; /* lib_capture closes its stream */
		ckpt_precopy_abort();
		return (int)left;
	}
	t2 = wall_us(), c2 = cpu_us();
	r = ckpt_precopy_finish(cut ? &g_pre.o : o, err);
	if (r == CKPT_RESTORED) { /* a new process: no pre-copy here, no stream */
		g_pre = (struct pre){ .img = -1 };
		g_cost.valid = false;
		return r;
	}
	g_cost.begin_us = cut ? g_pre.begin_us : t1 - t0, g_cost.begin_cpu = cut ? g_pre.begin_cpu : c1 - c0;
	g_cost.steps_us = t2 - t1, g_cost.steps_cpu = c2 - c1, g_cost.steps = steps;
	g_cost.stop_us = wall_us() - t2, g_cost.stop_cpu = cpu_us() - c2;
	off_cpu(&q1, &b1);
	g_cost.runq_us = q1 - q0, g_cost.blocked = b1 - b0;
	g_cost.valid = r == CKPT_CAPTURED;
	/* MSG_CKPT_TRACE: where a live copy's stop goes, wall clock */
	if (trace_on() && r == CKPT_CAPTURED)
		fprintf(stderr, "msg: live copy at %llu us: %s%llu us, %d steps %llu us (%ld bytes left), "
			"stop %llu us%s\n", (unsigned long long)t0, cut ? "cut, steps between receives " : "begin ",
			(unsigned long long)(cut ? (uint64_t)g_pre.steps : t1 - t0), steps,
			(unsigned long long)(t2 - t1), left, (unsigned long long)(wall_us() - t2),
			cut && g_pre.ready ? " (ready)" : "");
	g_pre = (struct pre){ .img = -1 }; /* lib_capture closes its stream */
	return r;
}

/* A spread pre-copy between receives: steps while the stream has room and
 * no frame from msgd is there; wait: until one is (the receive would block
 * anyway). A failure drops the pre-copy and tells msgd (the copy failed). */
void lib_precopy_progress(bool wait)
{
	struct ckpt_error err = { 0 };
	long left = 1;

	if (g_pre.on) /* held sends go out before pages do */
		lib_flush();
	while (g_pre.on && !g_pre.ready) {
		struct pollfd p[2] = { { .fd = msg_lib.fd, .events = POLLIN },
				       { .fd = g_pre.img, .events = POLLOUT | POLLRDHUP } };

		left = precopy_steps(g_pre.img, &g_pre.steps, &err);
		if (!left && env_on("MSG_TEST_PRECOPY_NO_READY"))
			left = 1; /* tests: never ready, the stream goes on (a fault inside it) */
		if (left <= 0)
			break;
		if (poll(p, 2, 0) < 0 || (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			return;
		/* the reader never writes: a shutdown from its side (POLLRDHUP,
		 * its FIN) is a closed stream too; a background snapshot's steps
		 * stop writing once every page went, so no EPIPE would tell */
		if (p[1].revents & (POLLHUP | POLLERR | POLLRDHUP)) {
			left = CKPT_E_IO;
			snprintf(err.what, sizeof(err.what), "the image stream was closed by its reader");
			break;
		}
		if (!wait)
			return;
		/* a writable stream with less room than a step wants, or the
		 * stop's buffer not ready yet (no stream yet, maybe): look again soon */
		bool soon = (p[1].revents & POLLOUT) || ckpt_precopy_prepared();
		if (poll(p, soon ? 1 : 2, soon ? 2 : -1) < 0 &&
		    errno != EINTR)
			return;
	}
	if (!g_pre.on || g_pre.ready)
		return;
	if (left < 0) {
		fprintf(stderr, "msg: a live copy of this process failed: %s\n", err.what);
		pre_drop();
		done((int)left, CKPT_DONE_F_PRECOPY);
		return;
	}
	g_pre.ready = true; /* every page went once: the cut at the next receive */
	if (trace_on())
		fprintf(stderr, "msg: live copy ready after %d steps, %llu us\n", g_pre.steps,
			(unsigned long long)(wall_us() - g_pre.t0));
	done(0, CKPT_DONE_F_PRECOPY | CKPT_DONE_F_READY);
}

/* The process ends (or is captured otherwise) with a pre-copy under way. */
void lib_precopy_drop(void)
{
	if (!g_pre.on)
		return;
	pre_drop();
	done(CKPT_E_IO, CKPT_DONE_F_PRECOPY);
}

/* Pre-copy where the kernel allows it, else the fork engine (its cost:
 * copy-on-write faults in the survivor, DESIGN §7). */
static int live_copy(int img, const struct ckpt_opts *o, struct ckpt_error *err)
{
	if (g_pre.on) /* the cut of a pre-copy begun at an earlier receive */
		return copy_precopy(img, o, err);
	g_snap_engine = ckpt_precopy_available() ? CKPT_DONE_F_PRECOPY : CKPT_DONE_F_FORK;
	if (g_snap_engine == CKPT_DONE_F_PRECOPY)
		return copy_precopy(img, o, err);
	return ckpt_snapshot_live(img, o, err);
}

/* The cut of the copy under way: its stream is the one it holds, or (a
 * prepared stop begun early) the one that comes with the cut. */
static int cut_stream(int img)
{
	if (!g_pre.on || (img >= 0 && g_pre.img >= 0)) {
		if (img >= 0)
			close(img);
		return -1;
	}
	if (img >= 0) {
		g_pre.img = img;
		g_pre.o.exclude_fds[g_pre.o.n_exclude_fds++] = img;
		ckpt_precopy_stream(img);
	}
	return g_pre.img;
}

/* An EARLY L_CKPT (no stream yet): a copy this process takes by the
 * prepared stop begins now; any other asks msgd for its stream first. */
static bool early_ok(uint8_t mode)
{
	return mode == MIG_COPY && prepare_wanted() && ckpt_precopy_available();
}

int lib_capture(uint8_t mode, uint8_t lflags)
{
	struct ckpt_opts o = { .exclude_fds = { msg_lib.fd }, .n_exclude_fds = 1 };
	struct ckpt_error err = { 0 };
	int img = msg_lib.passed_fd, ret;
	uint8_t flags;

	msg_lib.passed_fd = -1;
	if (lflags & CKPT_F_DROP) { /* an early copy failed before its cut */
		if (img >= 0)
			close(img);
		if (g_pre.on && g_pre.img < 0)
			pre_drop();
		return 1;
	}
	if (g_pre.on && !(lflags & CKPT_F_CUT))
		pre_drop(); /* not its cut: a new capture */
	if ((lflags & CKPT_F_EARLY) && !early_ok(mode)) {
		if (img >= 0)
			close(img);
		return done(0, CKPT_DONE_F_WANT_STREAM) ? MSG_EDAEMON : 1;
	}
	if (!(lflags & CKPT_F_EARLY)) { /* (an early begin touches nothing of these) */
		fast_detach(true); /* the image carries the stash, never the mapping */
		if (direct_enabled())
			direct_leave(false); /* ...nor a socket */
	}
	lib_reap_snapshot(); /* one snapshot at a time */
	if (lflags & CKPT_F_CUT) {
		img = cut_stream(img);
		if (img < 0) {
			if (g_pre.on)
				pre_drop();
			return done(MSG_EPROTO, 0) ? MSG_EDAEMON : 1;
		}
	} else if (img < 0 && !(lflags & CKPT_F_EARLY))
		return done(MSG_EPROTO, 0) ? MSG_EDAEMON : 1;
	if (img >= 0)
		o.exclude_fds[o.n_exclude_fds++] = img;
	uint64_t tc0 = wall_us();
	ret = mode == MIG_COPY ? live_copy(img, &o, &err) : ckpt_capture(img, &o, &err);
	if (trace_on() && ret == CKPT_CAPTURED)
		fprintf(stderr, "msg: capture from %llu us to %llu us\n", (unsigned long long)tc0,
			(unsigned long long)wall_us());
	flags = mode == MIG_COPY ? g_snap_engine : 0;
	if (ret == PRE_PENDING) /* the stream stays open: the pages go out between receives */
		return done(0, flags | CKPT_DONE_F_PENDING) ? MSG_EDAEMON : 1;
	if (ret == CKPT_RESTORED) {
		/* a new process on the target: fd 3 is our new msgd */
		msg_lib.restores++;
		return reconnect();
	}
	/* A copy: the snapshot's writer (fork engine: the forked child; pre-copy:
	 * the helper with the stop's bytes) streams the rest by itself; the
	 * survivor goes on at once and reaps the writer later. */
	if (ret == CKPT_CAPTURED && mode == MIG_COPY)
		msg_lib.snapshot_pending = true;
	if (ret < 0) /* the application goes on here; say why it could not move */
		fprintf(stderr, "msg: capture refused: %s: %s\n", ckpt_err_name(ret), err.what);
	if (img >= 0)
		close(img);
	return done(ret, flags) ? MSG_EDAEMON : 1;
}
