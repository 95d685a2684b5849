/* SPDX-License-Identifier: MIT */
/* Kernel-held state of the process: descriptors, cwd, umask, personality,
 * signals, itimers, mm fields (brk!), tid address, rseq, TLS base. */
#include "../ckpt.h"
#include "restorer.h"
#include "sys.h"

static int kept(const struct r_opts *o, long fd)
{
	for (int i = 0; i < o->n_keep; i++)
		if (o->keep[i] == fd)
			return 1;
	return 0;
}

static const struct ckpt_fd *image_fd(const struct ckpt_meta *m, long fd)
{
	for (uint32_t i = 0; i < m->n_fds; i++)
		if (m->fds[i].fd == fd)
			return &m->fds[i];
	return 0;
}

/* Everything the launcher left open that the image does not have goes,
 * except --keep-fd descriptors (e.g. the runtime's link to msgd). */
static void close_foreign(const struct ckpt_meta *m, const struct r_opts *o)
{
	long lo = 0; /* close_range over the gaps between kept/image fds */
	for (long fd = 0; fd <= 1024; fd++)
		if (fd == 1024 || kept(o, fd) || image_fd(m, fd)) {
			if (fd > lo)
				sys3(__NR_close_range, lo, fd == 1024 ? ~0u : (unsigned long)(fd - 1), 0);
			lo = fd + 1;
		}
}

static void reopen(const struct ckpt_fd *f)
{
	long flags = (long)(f->open_flags & ~(uint32_t)(R_O_CREAT | R_O_TRUNC | R_O_EXCL));
	long fd = sys4(__NR_openat, R_AT_FDCWD, f->path, flags, 0);
	if (fd < 0)
		r_die(CKPT_E_FILE, "fd %d: cannot reopen %s (errno %ld)", f->fd, f->path, -fd);
	if (fd != f->fd) {
		if (sys3(__NR_dup3, fd, f->fd, 0) < 0)
			r_die(CKPT_E_FILE, "fd %d: dup3 failed", f->fd);
		sys1(__NR_close, fd);
	}
	if (f->kind == CKPT_FD_REG && sys3(__NR_lseek, f->fd, (long)f->offset, R_SEEK_SET) != (long)f->offset)
		r_die(CKPT_E_FILE, "fd %d: cannot seek %s to %llu", f->fd, f->path, (unsigned long long)f->offset);
	if (f->fd_flags & 1)
		sys3(__NR_fcntl, f->fd, R_F_SETFD, 1);
}

void r_restore_fds(const struct ckpt_meta *m, const struct r_opts *o)
{
	for (int i = 0; i < o->n_keep; i++)
		if (image_fd(m, o->keep[i]))
			r_die(CKPT_E_INVAL, "--keep-fd %d collides with the image's fd %d", o->keep[i], o->keep[i]);
	close_foreign(m, o);
	for (uint32_t i = 0; i < m->n_fds; i++)
		if (m->fds[i].kind != CKPT_FD_STDIO)
			reopen(&m->fds[i]);
}

void r_restore_misc(const struct ckpt_meta *m)
{
	long r = sys1(__NR_chdir, m->mm->cwd);
	if (r < 0)
		r_die(CKPT_E_FILE, "cannot chdir to %s (errno %ld)", m->mm->cwd, -r);
	sys1(__NR_umask, m->mm->umask);
	sys1(__NR_personality, m->mm->personality);
}

struct r_stack_t {
	uint64_t sp;
	int32_t flags, pad;
	uint64_t size;
};

/* Signals pending at the capture are raised again (every signal is blocked
 * here; the final mask lets them through as it did in the original). */
static void raise_pending(uint64_t pending)
{
	long pid = sys0(__NR_getpid), tid = sys0(__NR_gettid);
	for (int i = 1; i <= 64; i++)
		if ((pending >> (i - 1) & 1) && i != 9 && i != 19) /* never SIGKILL, SIGSTOP */
			if (sys3(__NR_tgkill, pid, tid, i) < 0)
				r_die(CKPT_E_KERNEL, "cannot raise pending signal %d again", i);
}

/* The restorer's own dispositions, read before the image's first byte
 * (r_prestart; nothing here changes them later): a signal whose action in
 * the image is already the one in effect (most are SIG_DFL in both) needs
 * no rt_sigaction (62 calls were a tenth of the state phase). */
static struct ckpt_sigaction r_own_act[64];
static int r_own_known;

void r_read_own_signals(void)
{
	for (int i = 1; i <= 64; i++)
		if (sys4(__NR_rt_sigaction, i, 0, &r_own_act[i - 1], 8) < 0)
			return; /* unknown: every action is set */
	r_own_known = 1;
}

static int same_act(const struct ckpt_sigaction *a, const struct ckpt_sigaction *b)
{
	return a->handler == b->handler && a->flags == b->flags && a->restorer == b->restorer && a->mask == b->mask;
}

void r_restore_signals(const struct ckpt_meta *m)
{
	const struct ckpt_signals *s = m->sig;
	for (int i = 1; i <= 64; i++) {
		if (i == 9 || i == 19 || (r_own_known && same_act(&s->act[i - 1], &r_own_act[i - 1])))
			continue;
		long r = sys4(__NR_rt_sigaction, i, &s->act[i - 1], 0, 8);
		if (r < 0)
			r_die(CKPT_E_KERNEL, "rt_sigaction(%d) failed (errno %ld)", i, -r);
	}
	struct r_stack_t ss = { s->altstack_sp, (int32_t)(s->altstack_flags & ~1u), 0, s->altstack_size };
	if (s->altstack_flags & 2) /* SS_DISABLE */
		ss = (struct r_stack_t){ 0, 2, 0, 0 };
	long r = sys2(__NR_sigaltstack, &ss, 0);
	if (r < 0)
		r_die(CKPT_E_KERNEL, "sigaltstack failed (errno %ld)", -r);
	for (int w = 0; w < 3; w++) {
		struct ckpt_itimer it = s->itimer[w];
		/* An interval ITIMER_REAL that fired and whose SIGALRM is still
		 * pending reads as value 0: the kernel re-arms it only at the
		 * dequeue, which it does not do for a timer set with value 0 (that
		 * disarms it).  Arm it one interval ahead: the pending SIGALRM
		 * raised below stands for the expiry that happened. */
		if (w == 0 && !it.value_sec && !it.value_usec && (s->pending >> (14 - 1) & 1))
			it.value_sec = it.interval_sec, it.value_usec = it.interval_usec;
		if (sys3(__NR_setitimer, w, &it, 0) < 0)
			r_die(CKPT_E_KERNEL, "setitimer(%d) failed", w);
	}
	raise_pending(s->pending);
}

void r_restore_mm(const struct ckpt_meta *m)
{
	const struct ckpt_mm *mm = m->mm;
	struct r_prctl_mm_map map = {
		mm->start_code, mm->end_code, mm->start_data, mm->end_data, mm->start_brk, mm->brk, mm->start_stack,
		mm->arg_start,	mm->arg_end,  mm->env_start,  mm->env_end,  (uint64_t)(uintptr_t)mm->auxv,
		mm->auxv_words * 8u, (uint32_t)-1,
	};
	/* /proc/self/exe: needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE and that
	 * the old exe (this restorer) is not mapped; without, it stays ours. */
	long exe = sys4(__NR_openat, R_AT_FDCWD, m->files[0].path, R_O_RDONLY | R_O_CLOEXEC, 0);
	map.exe_fd = exe >= 0 ? (uint32_t)exe : (uint32_t)-1;
	long r = sys5(__NR_prctl, R_PR_SET_MM, R_PR_SET_MM_MAP, &map, sizeof(map), 0);
	if (r < 0 && exe >= 0) {
		map.exe_fd = (uint32_t)-1;
		r = sys5(__NR_prctl, R_PR_SET_MM, R_PR_SET_MM_MAP, &map, sizeof(map), 0);
	}
	if (exe >= 0)
		sys1(__NR_close, exe);
	/* comm: the default one, the executable's name (first 15 bytes) */
	const char *name = m->files[0].path, *s = name;
	for (; *s; s++)
		if (*s == '/')
			name = s + 1;
	char comm[16] = { 0 };
	for (int i = 0; i < 15 && name[i]; i++)
		comm[i] = name[i];
	sys2(__NR_prctl, 15 /* PR_SET_NAME */, comm);
	if (r < 0)
		r_die(CKPT_E_KERNEL, "prctl(PR_SET_MM_MAP) failed (errno %ld): brk %p..%p", -r,
		      (void *)(uintptr_t)mm->start_brk, (void *)(uintptr_t)mm->brk);
}

void r_restore_thread(const struct ckpt_meta *m)
{
	const struct ckpt_thread *t = m->th;
	sys1(__NR_set_tid_address, t->clear_child_tid);
	if (t->rseq_addr) {
		long r = sys4(__NR_rseq, t->rseq_addr, t->rseq_len, 0, t->rseq_sig);
		if (r < 0)
			r_die(CKPT_E_KERNEL, "rseq registration at %p failed (errno %ld)", (void *)(uintptr_t)t->rseq_addr,
			      -r);
	}
	if (sys2(__NR_arch_prctl, R_ARCH_SET_GS, t->regs.gs_base) < 0 ||
	    sys2(__NR_arch_prctl, R_ARCH_SET_FS, t->regs.fs_base) < 0)
		r_die(CKPT_E_KERNEL, "cannot set the TLS base");
}
