/* SPDX-License-Identifier: MIT */
/* ckpt_capture: the calling process writes its own image.  Order matters:
 * everything that allocates or changes process memory happens before the
 * registers are saved; after that only the private arena changes while
 * pages stream out, so the image is one consistent instant. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture_int.h"
#include "ksys.h"
#include "cpu.h"

#define ARENA_SIZE (96u << 20)

static void *g_rs;       /* runtime state copy, valid after a restore */
static size_t g_rs_len;
static pid_t g_writer;   /* live snapshot writer */
static struct ckpt_error *g_wr_err; /* shared page the writer reports into */

const void *ckpt_runtime_state(size_t *len)
{
	if (len)
		*len = g_rs_len;
	return g_rs;
}

static void add_excl(struct ckpt_ctx *c, uintptr_t s, uintptr_t e)
{
	if (c->n_ex >= CKPT_MAX_EXCL || s >= e)
		return;
	c->ex_start[c->n_ex] = s & ~(uintptr_t)(CKPT_PAGE_SIZE - 1);
	c->ex_end[c->n_ex] = (e + CKPT_PAGE_SIZE - 1) & ~(uintptr_t)(CKPT_PAGE_SIZE - 1);
	c->n_ex++;
}

/* The runtime state must survive in restored memory: copy it to the heap
 * now (before registers are saved), not point at the caller's buffer. */
static int keep_runtime_state(struct ckpt_ctx *c)
{
	const struct ckpt_opts *o = c->o;
	free(g_rs);
	g_rs = NULL;
	g_rs_len = 0;
	if (!o || !o->runtime_state || !o->runtime_state_len)
		return 0;
	g_rs = malloc(o->runtime_state_len);
	if (!g_rs)
		return ckpt_fail(c, CKPT_E_NOMEM, "runtime state copy");
	memcpy(g_rs, o->runtime_state, o->runtime_state_len);
	g_rs_len = o->runtime_state_len;
	return 0;
}

static int collect(struct ckpt_ctx *c, const uint64_t *blocked);
static int prepare(struct ckpt_ctx **cp, int out_fd, const struct ckpt_opts *o, struct ckpt_error *err,
		   sigset_t *old, int dry, int keep, int bare);

/* errno is process state the image carries (it is saved with memory after
 * this): the probes here (e.g. fcntl on unused descriptor numbers) must not
 * leave theirs in it. */
int ckpt_collect(struct ckpt_ctx *c, const uint64_t *blocked)
{
	int saved = errno;
	int r = collect(c, blocked);
	errno = saved;
	return r;
}

/* A dry collection (ckpt_prewarm) goes on past a refusal, so that every
 * step runs once; the first error is the one reported. */
static int more(const struct ckpt_ctx *c, int r)
{
	return !r || c->dry;
}

static int first(int r, int r2)
{
	return r ? r : r2;
}

static int collect(struct ckpt_ctx *c, const uint64_t *blocked)
{
	int r = ckpt_check_threads(c);
	ckpt_trace("threads");
	if (more(c, r))
		r = first(r, ckpt_collect_fds(c));
	ckpt_trace("fds");
	if (!r && !c->dry) /* a dry run keeps the runtime state of a restore */
		r = keep_runtime_state(c);
	if (more(c, r))
		r = first(r, ckpt_collect_vmas(c));
	ckpt_trace("vmas");
	if (more(c, r))
		r = first(r, ckpt_check_process(c));
	ckpt_trace("process checks");
	if (more(c, r))
		r = first(r, ckpt_collect_ident(c));
	ckpt_trace("ident");
	if (more(c, r))
		r = first(r, ckpt_collect_mm(c));
	ckpt_trace("mm");
	if (more(c, r))
		r = first(r, ckpt_collect_signals(c, blocked));
	ckpt_trace("signals");
	if (more(c, r)) {
		ckpt_cpu_probe_once(&c->cpu);
		r = first(r, ckpt_collect_thread(c));
	}
	ckpt_trace("cpu+thread");
	return r;
}

/* Blocks signals (a handler must not change memory mid-stream), sets up the
 * arena and collects all metadata.  *cp is in the arena. */
int ckpt_prepare(struct ckpt_ctx **cp, int out_fd, const struct ckpt_opts *o, struct ckpt_error *err,
		   sigset_t *old)
{
	return prepare(cp, out_fd, o, err, old, 0, 0, 0);
}

/* The same without the metadata (the prepared stop's begin: its cut
 * collects everything). */
int ckpt_prepare_bare(struct ckpt_ctx **cp, int out_fd, const struct ckpt_opts *o, struct ckpt_error *err,
		      sigset_t *old)
{
	return prepare(cp, out_fd, o, err, old, 0, 0, 1);
}

/* keep: a synchronous capture, whose arena is the kept one (arena.c);
 * pre-copy and live snapshots hand theirs to a helper or a writer. */
static int prepare(struct ckpt_ctx **cp, int out_fd, const struct ckpt_opts *o, struct ckpt_error *err,
		   sigset_t *old, int dry, int keep, int bare)
{
	struct arena a = { 0 };
	sigset_t all;
	k_sigprocmask(SIG_BLOCK, NULL, old); /* every exit path restores *old */
	if (!dry)
		ckpt_precopy_release(); /* a finished pre-copy's tracker */
	if (err) {
		err->code = 0;
		err->what[0] = 0;
	}
	if ((out_fd < 0 && !bare) || (o && (o->n_exclude_fds < 0 || o->n_exclude_fds > 16 || o->n_exclude_ranges < 0 ||
				 o->n_exclude_ranges > 8))) {
		struct ckpt_ctx tmp = { .err = err };
		return ckpt_fail(&tmp, CKPT_E_INVAL, "bad out_fd or options");
	}
	memset(&all, 0, sizeof(all)); /* all but libc's internal 32 and 33, as sigfillset */
	all.__val[0] = ~(3ul << 31);
	k_sigprocmask(SIG_SETMASK, &all, old);
	ckpt_trace(NULL);
	int mr = ckpt_probe_mcl_future(err);
	if (mr) {
		k_sigprocmask(SIG_SETMASK, old, NULL);
		return mr;
	}
	if (!keep)
		ckpt_arena_drop_kept(); /* not carried into their images */
	if (keep ? ckpt_arena_take(&a, ARENA_SIZE) : ckpt_arena_init(&a, ARENA_SIZE)) {
		struct ckpt_ctx tmp = { .err = err };
		return ckpt_fail(&tmp, CKPT_E_NOMEM, "capture arena of %u MiB", ARENA_SIZE >> 20);
	}
	struct ckpt_ctx *c = ckpt_alloc(&a, sizeof(*c));
	c->a = a;
	c->o = o;
	c->err = err;
	c->out_fd = out_fd;
	c->dry = dry;
	c->keep_arena = keep;
	c->pagemap_fd = c->mem_fd = -1;
	c->pages_type = CKPT_S_PAGES;
	for (int i = 0; i < 4; i++)
		c->own_fds[i] = -1;
	add_excl(c, (uintptr_t)a.base, (uintptr_t)a.base + a.cap);
	for (int i = 0; o && i < o->n_exclude_ranges; i++)
		add_excl(c, o->exclude_ranges[i].start, o->exclude_ranges[i].end);
	*cp = c;
	ckpt_trace("mlockall probe + arena");
	uint64_t blocked;
	memcpy(&blocked, old, sizeof(blocked));
	return bare ? 0 : ckpt_collect(c, &blocked);
}

void ckpt_finish_ctx(struct ckpt_ctx *c, const sigset_t *old)
{
	if (c) {
		struct arena a = c->a;
		if (c->keep_arena)
			ckpt_arena_keep(&a);
		else
			ckpt_arena_free(&a);
	}
	k_sigprocmask(SIG_SETMASK, old, NULL);
}

/* First thing a restored process does: drop the restorer's range. */
int ckpt_on_restored(void)
{
	k_munmap((void *)(uintptr_t)CKPT_RESTORER_BASE, CKPT_RESTORER_SPAN);
	ckpt_cpu_forget(); /* probed on the source host */
	return CKPT_RESTORED;
}

/* The first capture in a process paid for its first time: the CPU probe
 * (each CPUID traps to the hypervisor here, 4-7 us, 7 of them), the host's
 * identity cache, the capture's code and libc's lazily bound functions
 * (faults, PLT lookups).  None of that depends on the state being
 * captured; a dry collection at start-up pays it where nobody waits.
 * Its write path runs too (nothing sent, no CRCs): the pages of the arena
 * a capture writes are then resident in the kept arena (arena.c). */
int ckpt_prewarm(const struct ckpt_opts *o)
{
	struct ckpt_ctx *c = NULL;
	struct ckpt_error e;
	sigset_t old;
	int saved = errno;
	int r = prepare(&c, 0 /* nothing is written */, o, &e, &old, 1, 1, 0);
	if (!r) { /* the write path too, into no sink: its arena pages are kept */
		c->refs = 1;
		ckpt_write_image(c);
	}
	ckpt_finish_ctx(c, &old);
	ckpt_trace("prewarm");
	errno = saved;
	return r;
}

int ckpt_capture(int out_fd, const struct ckpt_opts *o, struct ckpt_error *err)
{
	struct ckpt_ctx *c = NULL;
	sigset_t old;
	int r = prepare(&c, out_fd, o, err, &old, 0, 1, 0);
	if (!r) {
		if (ckpt_arch_save(&c->th.regs, c->xsave, c->cpu.xcr0))
			return ckpt_on_restored();
		ckpt_trace(NULL);
		c->refs = 1; /* nothing changes memory until the image is out */
		r = ckpt_write_image(c);
		ckpt_trace("write");
	}
	ckpt_finish_ctx(c, &old);
	ckpt_trace("arena freed");
	return r;
}

/* The writer: a clone without exit signal (the application never sees a
 * SIGCHLD), sharing nothing but the error page. */
static void writer_main(struct ckpt_ctx *c)
{
	struct ckpt_error e = { 0 };
	c->err = &e;
	int r = ckpt_write_image(c);
	if (r && g_wr_err)
		*g_wr_err = e;
	syscall(SYS_exit_group, r ? -r : 0);
}

int ckpt_snapshot_live(int out_fd, const struct ckpt_opts *o, struct ckpt_error *err)
{
	struct ckpt_ctx *c = NULL;
	sigset_t old;
	if (g_writer > 0) {
		struct ckpt_ctx tmp = { .err = err };
		return ckpt_fail(&tmp, CKPT_E_INVAL, "a live snapshot is still being written");
	}
	int r = ckpt_prepare(&c, out_fd, o, err, &old);
	if (!r) {
		c->hflags |= CKPT_HF_LIVE;
		if (ckpt_arch_save(&c->th.regs, c->xsave, c->cpu.xcr0))
			return ckpt_on_restored();
		/* Mapped after the VMA list was taken: not part of the image. */
		g_wr_err = k_mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (g_wr_err == MAP_FAILED)
			g_wr_err = NULL;
		long pid = syscall(SYS_clone, 0, 0, NULL, NULL, 0);
		if (pid == 0)
			writer_main(c);
		if (pid < 0)
			r = ckpt_fail(c, CKPT_E_NOMEM, "clone of the writer failed");
		else
			g_writer = (pid_t)pid;
	}
	ckpt_finish_ctx(c, &old);
	return r;
}

int ckpt_snapshot_wait(struct ckpt_error *err)
{
	int st = 0, r = 0;
	if (g_writer <= 0)
		return 0;
	while (waitpid(g_writer, &st, __WALL) < 0)
		if (errno != EINTR) {
			st = 0x7f00; /* "exited 127": lost */
			break;
		}
	g_writer = 0;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		r = WIFEXITED(st) ? -WEXITSTATUS(st) : CKPT_E_IO;
		if (err)
			*err = g_wr_err && g_wr_err->code ? *g_wr_err
							  : (struct ckpt_error){ r, "snapshot writer died" };
	}
	if (g_wr_err)
		k_munmap(g_wr_err, 4096);
	g_wr_err = NULL;
	return r;
}
