/* SPDX-License-Identifier: MIT */
/* Process state outside memory: mm layout, auxv, cwd, umask, personality,
 * signal dispositions, sigaltstack, itimers, TLS/rseq registration. */
#include <asm/prctl.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "capture_int.h"
#include "ksys.h"

/* glibc >= 2.35 exports where it registered rseq (0 size: not registered). */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

#define RSEQ_SIG_X86 0x53053053u

/* Fields of /proc/self/stat, numbered as in proc(5). */
static int stat_fields(struct ckpt_ctx *c, unsigned long long *f, int maxf)
{
	size_t len;
	char *s = ckpt_read_proc(c, "/proc/self/stat", &len);
	char *p = s ? strrchr(s, ')') : NULL;
	if (!p)
		return ckpt_fail(c, CKPT_E_PROC, "cannot parse /proc/self/stat");
	p += 3; /* past ") S": field 3 is the state letter */
	int i = 4;
	for (; i < maxf; i++) {
		char *e;
		f[i] = strtoull(p, &e, 10);
		if (e == p)
			break;
		p = e;
	}
	return i >= 52 ? 0 : ckpt_fail(c, CKPT_E_PROC, "short /proc/self/stat");
}

static int read_auxv(struct ckpt_ctx *c, struct ckpt_mm *m)
{
	size_t len;
	char *s = ckpt_read_proc(c, "/proc/self/auxv", &len);
	if (!s)
		return CKPT_E_PROC;
	size_t words = len / 8;
	if (words > CKPT_AUXV_WORDS || words < 2)
		return ckpt_fail(c, CKPT_E_PROC, "auxv of %zu words", words);
	memcpy(m->auxv, s, words * 8);
	m->auxv_words = (uint32_t)words;
	return 0;
}

/* The layout fields of /proc/self/stat and the auxv change only with
 * exec, prctl(PR_SET_MM*) (CAP_SYS_RESOURCE: checkpoint tools, or
 * msg-restore in a restored process, whose pid is another) and nothing
 * else: read once per process (ckpt_prewarm does it at start-up), two
 * /proc reads less per capture.  A restored process has them from the
 * image (PR_SET_MM_MAP must succeed), the same values.  Written only
 * while metadata is collected, never while pages are written. */
static struct layout {
	long pid; /* 0: not read yet */
	uint64_t f[11]; /* start_code .. env_end, as in struct ckpt_mm */
	uint32_t auxv_words;
	uint64_t auxv[CKPT_AUXV_WORDS];
} g_mm;

static int read_layout(struct ckpt_ctx *c, struct ckpt_mm *m)
{
	unsigned long long f[64] = { 0 };
	int r = stat_fields(c, f, 60);
	if (r)
		return r;
	m->start_code = f[26], m->end_code = f[27], m->start_stack = f[28];
	m->start_data = f[45], m->end_data = f[46], m->start_brk = f[47];
	m->arg_start = f[48], m->arg_end = f[49], m->env_start = f[50], m->env_end = f[51];
	return read_auxv(c, m);
}

static void layout_out(struct layout *g, const struct ckpt_mm *m)
{
	const uint64_t f[11] = { m->start_code, m->end_code, m->start_data, m->end_data, m->start_brk, m->start_stack,
				 m->arg_start,	m->arg_end,  m->env_start,  m->env_end,	 0 };
	memcpy(g->f, f, sizeof(f));
	g->auxv_words = m->auxv_words;
	memcpy(g->auxv, m->auxv, (size_t)m->auxv_words * 8);
}

static void layout_in(const struct layout *g, struct ckpt_mm *m)
{
	m->start_code = g->f[0], m->end_code = g->f[1], m->start_data = g->f[2], m->end_data = g->f[3];
	m->start_brk = g->f[4], m->start_stack = g->f[5], m->arg_start = g->f[6], m->arg_end = g->f[7];
	m->env_start = g->f[8], m->env_end = g->f[9];
	m->auxv_words = g->auxv_words;
	memcpy(m->auxv, g->auxv, (size_t)g->auxv_words * 8);
}

extern void *__curbrk __attribute__((weak)); /* glibc: the break as sbrk last set or read it */

/* The program break. brk(0) takes the mmap lock for writing: at a
 * prepared stop's cut it waited behind the helper that populates the sink
 * (a reader, preempted mid-chunk on a busy CPU: 4.3 ms of a 114 MB stop).
 * glibc's copy is the break unless something called the system call
 * behind its back, so it is taken when it agrees with the [heap] VMAs just
 * collected (they end at the break rounded up to a page; none: the break
 * is start_brk); anything else asks the kernel. */
static uint64_t program_break(const struct ckpt_ctx *c, uint64_t start_brk)
{
	uint64_t lib = &__curbrk && __curbrk ? (uint64_t)(uintptr_t)__curbrk : 0, end = 0;
	for (uint32_t i = 0; i < c->n_vmas; i++)
		if ((c->vmas[i].flags & CKPT_VMA_HEAP) && c->vmas[i].end > end)
			end = c->vmas[i].end;
	uint64_t up = (lib + CKPT_PAGE_SIZE - 1) & ~(uint64_t)(CKPT_PAGE_SIZE - 1);
	if (lib && (end ? up == end && lib > start_brk : lib == start_brk))
		return lib;
	return (uint64_t)sys1(__NR_brk, 0);
}

int ckpt_collect_mm(struct ckpt_ctx *c)
{
	struct ckpt_mm *m = &c->mm;
	long pid = sys0(__NR_getpid);
	if (g_mm.pid == pid) {
		layout_in(&g_mm, m);
	} else {
		int r = read_layout(c, m);
		if (r)
			return r;
		layout_out(&g_mm, m);
		g_mm.pid = pid;
	}
	m->brk = program_break(c, m->start_brk);
	m->personality = (uint32_t)k_personality(0xffffffff);
	mode_t um = k_umask(0);
	k_umask(um);
	m->umask = um;
	if (!k_getcwd(m->cwd, sizeof(m->cwd)))
		return ckpt_fail(c, CKPT_E_INVAL, "getcwd: %s", strerror(errno));
	return 0;
}

int ckpt_collect_signals(struct ckpt_ctx *c, const uint64_t *blocked)
{
	struct ckpt_signals *s = &c->sig;
	for (int i = 1; i <= 64; i++)
		if (sys4(__NR_rt_sigaction, i, NULL, &s->act[i - 1], 8) < 0)
			memset(&s->act[i - 1], 0, sizeof(s->act[i - 1]));
	s->blocked = *blocked;
	sys2(__NR_rt_sigpending, &s->pending, 8);
	stack_t ss;
	if (k_sigaltstack(NULL, &ss) == 0) {
		s->altstack_sp = (uintptr_t)ss.ss_sp;
		s->altstack_size = ss.ss_size;
		s->altstack_flags = (uint32_t)ss.ss_flags;
	}
	for (int w = 0; w < 3; w++) {
		struct itimerval it;
		if (k_getitimer(w, &it) < 0)
			continue;
		s->itimer[w] = (struct ckpt_itimer){ (uint64_t)it.it_interval.tv_sec, (uint64_t)it.it_interval.tv_usec,
						     (uint64_t)it.it_value.tv_sec, (uint64_t)it.it_value.tv_usec };
	}
	return 0;
}

int ckpt_collect_thread(struct ckpt_ctx *c)
{
	struct ckpt_thread *t = &c->th;
	unsigned long fs = 0, gs = 0;
	sys2(__NR_arch_prctl, ARCH_GET_FS, &fs);
	sys2(__NR_arch_prctl, ARCH_GET_GS, &gs);
	t->regs.fs_base = fs, t->regs.gs_base = gs;
	t->regs.cs = 0x33, t->regs.ss = 0x2b;
	if (&__rseq_size && &__rseq_offset && __rseq_size) {
		t->rseq_addr = fs + (uint64_t)__rseq_offset;
		t->rseq_len = __rseq_size < 32 ? 32 : __rseq_size;
		t->rseq_sig = RSEQ_SIG_X86;
	}
	void *tidp = NULL;
	if (k_prctl(PR_GET_TID_ADDRESS, (unsigned long)&tidp, 0, 0, 0) == 0)
		t->clear_child_tid = (uintptr_t)tidp;
	t->tid = (uint64_t)sys0(__NR_gettid);
	t->flags = CKPT_TH_USER_CAPTURE;
	t->xsave_len = c->cpu.xsave_size;
	c->xsave = ckpt_alloc(&c->a, t->xsave_len);
	return c->xsave ? 0 : ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
}
