/* SPDX-License-Identifier: MIT */
/*
 * Background snapshot (as QEMU's background-snapshot): the pre-copy's stop
 * copies nothing.  At the cut the pages the target does not have yet (not
 * sent, or written since sent) are write-protected again and the process
 * goes on at once; this helper saves them into the sink and then writes
 * the sink.  The userfaultfd is synchronous: a write to a protected page
 * blocks until the helper has copied the page's contents at the cut (a
 * whole chunk around it, then one ioctl unprotects the chunk), so the image
 * is exactly the memory at the cut.
 *
 * Why synchronous from begin on, not async (WP_ASYNC) until the cut: a VMA
 * belongs to one userfaultfd and WP_ASYNC is fixed at UFFDIO_API, so a
 * switch at the cut would unregister the async tracker, a page-table walk
 * (~1 ms per 10 MiB here) inside the stop, the very copy-sized cost this
 * removes.  Before the cut the helper resolves each write fault by
 * unprotecting a chunk (pre_chunk) and marking it written: one round trip
 * per chunk instead of one async fault per 4 KiB page, and a THP-backed
 * range stays huge (an async fault splits the huge page).
 *
 * The helper is a clone(CLONE_VM) of the process: it shares memory and TLS,
 * so raw system calls only, and it writes nothing but the arena and the sink
 * (a write to protected memory would wait for itself).  It holds the only
 * reference to the userfaultfd: if it ends for any reason (done, failed,
 * killed), the kernel drops all protection and wakes every waiting fault,
 * so the process is never left blocked.
 */
#include <linux/futex.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <errno.h>

#include "bgsnap.h"
#include "crc32c.h"
#include "dirty.h"
#include "restorer/sys.h"

#define PG CKPT_PAGE_SIZE
#define NMSG 16

static uint64_t h_now(void)
{
	struct timespec t;
	sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void h_fail(struct bg *b, long code, const char *why)
{
	if (b->result != 1)
		return;
	size_t n = strlen(why);
	n = n < sizeof(b->why) - 1 ? n : sizeof(b->why) - 1;
	memcpy(b->why, why, n);
	b->why[n] = 0;
	b->result = code;
}

static void h_ack(struct bg *b, int err)
{
	b->cmd_err = err;
	__atomic_add_fetch(&b->acks, 1, __ATOMIC_RELEASE);
	sys6(SYS_futex, (long)(uintptr_t)&b->acks, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

static long h_wp(struct bg *b, uint64_t s, uint64_t e, int on)
{
	struct uffdio_writeprotect wp = { .range = { s, e - s }, .mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0 };
	return sys3(SYS_ioctl, b->uffd, UFFDIO_WRITEPROTECT, &wp);
}

/* The faulting page writable again (and its waiter woken), whatever
 * became of the chunk around it. */
static void h_unprotect(struct bg *b, uint64_t s, uint64_t e, uint64_t a)
{
	if (!h_wp(b, s, e, 0) || !h_wp(b, a, a + PG, 0))
		return;
	struct uffdio_range r = { a, PG };
	sys3(SYS_ioctl, b->uffd, UFFDIO_WAKE, &r);
}

static struct bg_range *h_find(struct bg *b, uint64_t a)
{
	for (uint32_t i = 0; i < b->n_tr; i++)
		if (a >= b->tr[i].start && a < b->tr[i].end)
			return &b->tr[i];
	return 0;
}

static int bit(const uint64_t *m, uint64_t i)
{
	return m[i / 64] >> (i % 64) & 1;
}

/* The chunk of t around a (size ch, aligned). */
static void h_chunk(const struct bg_range *t, uint64_t a, uint64_t ch, uint64_t *s, uint64_t *e)
{
	*s = a & ~(ch - 1);
	*e = *s + ch;
	*s = *s < t->start ? t->start : *s;
	*e = *e > t->end ? t->end : *e;
}

/* One PAGES section of n pages at addr, read as they are now (protected:
 * as at the cut).  readable: the VMA was readable at the cut (the process
 * cannot unmap or discard it unseen: the events fail the capture first,
 * but an mprotect after the cut would make the memcpy fault, which ends
 * the helper: a failed capture); else process_vm_readv, which fails
 * instead of faulting, and /proc/self/mem, which reads past PROT_NONE. */
static int h_append(struct bg *b, uint64_t addr, uint64_t n, int readable)
{
	size_t data = n * PG, need = sizeof(struct ckpt_sect_hdr) + sizeof(struct ckpt_pages) + data + 4;
	if (b->len + need > b->sink_cap) {
		h_fail(b, CKPT_E_NOMEM, "background snapshot: the sink is full");
		return -1;
	}
	unsigned char *o = b->sink + b->len;
	struct ckpt_sect_hdr *h = (struct ckpt_sect_hdr *)(void *)o;
	memset(h, 0, sizeof(*h));
	h->magic = CKPT_SECT_MAGIC;
	h->type = CKPT_S_PAGES;
	h->stored_len = h->raw_len = sizeof(struct ckpt_pages) + data;
	struct ckpt_pages ph = { addr, n };
	memcpy(o + sizeof(*h), &ph, sizeof(ph));
	unsigned char *dst = o + sizeof(*h) + sizeof(ph);
	long got = -1;
	if (readable) { /* memcpy: 2-3x process_vm_readv's speed here */
		memcpy(dst, (const void *)(uintptr_t)addr, data);
		got = (long)data;
	} else {
		struct iovec l = { dst, data }, r = { (void *)(uintptr_t)addr, data };
		got = sys6(SYS_process_vm_readv, b->self, (long)(uintptr_t)&l, 1, (long)(uintptr_t)&r, 1, 0);
	}
	if (got != (long)data)
		got = sys4(SYS_pread64, b->mem_fd, dst, data, addr);
	if (got != (long)data) {
		h_fail(b, CKPT_E_IO, "background snapshot: memory to save could not be read");
		return -1;
	}
	b->len += need;
	b->st.saved_bytes += data;
	return 0;
}

/* Saves the pages of [s,e) that are present or swapped (the rest is absent
 * at the cut: the target has it absent too, or zero from the stop). */
static int h_save_run(struct bg *b, const struct bg_range *t, uint64_t s, uint64_t e)
{
	struct ckpt_page_region vec[32];
	for (uint64_t at = s; at < e;) {
		struct ckpt_pm_scan_arg a = {
			.size = sizeof(a), .start = at, .end = e, .vec = (uint64_t)(uintptr_t)vec, .vec_len = 32,
			.category_anyof_mask = CKPT_PAGE_IS_PRESENT | CKPT_PAGE_IS_SWAPPED,
			.return_mask = CKPT_PAGE_IS_PRESENT | CKPT_PAGE_IS_SWAPPED,
		};
		long n = sys3(SYS_ioctl, b->pagemap_fd, CKPT_PAGEMAP_SCAN, &a);
		if (n < 0) {
			h_fail(b, CKPT_E_KERNEL, "background snapshot: PAGEMAP_SCAN failed");
			return -1;
		}
		for (long i = 0; i < n; i++)
			for (uint64_t x = vec[i].start; x < vec[i].end; x += CKPT_MAX_PAGES_PER_SECT * PG) {
				uint64_t k = (vec[i].end - x) / PG;
				if (h_append(b, x, k > CKPT_MAX_PAGES_PER_SECT ? CKPT_MAX_PAGES_PER_SECT : k, t->readable == 1))
					return -1;
			}
		if (n < 32 || a.walk_end <= at)
			break;
		at = a.walk_end;
	}
	return 0;
}

/* Saves the to-do pages of [s,e) inside t (copy = 0: only forgets them,
 * the negative control's fault handler). */
static int h_save(struct bg *b, struct bg_range *t, uint64_t s, uint64_t e, int copy)
{
	uint64_t i = (s - t->start) / PG, n = (e - t->start) / PG;
	while (i < n) {
		if (!(i % 64) && !t->todo[i / 64]) {
			i += 64;
			continue;
		}
		if (!bit(t->todo, i)) {
			i++;
			continue;
		}
		uint64_t j = i;
		while (j < n && bit(t->todo, j))
			t->todo[j / 64] &= ~(1ull << (j % 64)), j++;
		if (copy && h_save_run(b, t, t->start + i * PG, t->start + j * PG))
			return -1;
		i = j;
	}
	return 0;
}

static int h_any_todo(struct bg *b, uint64_t s, uint64_t e)
{
	for (uint32_t k = 0; k < b->n_tr; k++) {
		struct bg_range *t = &b->tr[k];
		uint64_t lo = s > t->start ? s : t->start, hi = e < t->end ? e : t->end;
		for (uint64_t a = lo; a < hi; a += PG)
			if (bit(t->todo, (a - t->start) / PG))
				return 1;
	}
	return 0;
}

static void h_fault(struct bg *b, uint64_t addr, int cut)
{
	uint64_t a = addr & ~(uint64_t)(PG - 1), s = a, e = a + PG, t0 = h_now(), saved = b->st.saved_bytes;
	struct bg_range *t = h_find(b, a);
	if (t && !cut) { /* written since protected: sent again (or saved at the cut) */
		h_chunk(t, a, b->pre_chunk, &s, &e);
		for (uint64_t i = (s - t->start) / PG, n = (e - t->start) / PG; i < n; i++)
			__atomic_fetch_or(&t->dirty[i / 64], 1ull << (i % 64), __ATOMIC_RELAXED);
	} else if (t) {
		h_chunk(t, a, b->chunk, &s, &e);
		h_save(b, t, s, e, !b->no_copy_on_fault);
	}
	h_unprotect(b, s, e, a);
	if (!cut) {
		b->st.faults_pre++;
		return;
	}
	uint64_t t1 = h_now();
	b->st.faults_post++;
	b->st.post_service_ns += t1 - t0;
	b->st.post_wait_bound_ns += t1 - (b->last_look ? b->last_look : t0);
	b->st.fault_bytes += b->st.saved_bytes - saved;
}

static void h_event(struct bg *b, const struct uffd_msg *m, int cut)
{
	uint64_t r[2][2] = { { 0, 0 }, { 0, 0 } };
	if (m->event == UFFD_EVENT_REMOVE || m->event == UFFD_EVENT_UNMAP) {
		r[0][0] = m->arg.remove.start, r[0][1] = m->arg.remove.end;
		if (!cut && m->event == UFFD_EVENT_REMOVE)
			return; /* pages dropped before the cut: the stop sends them as zeros */
	} else if (m->event == UFFD_EVENT_REMAP) {
		r[0][0] = m->arg.remap.from, r[0][1] = m->arg.remap.from + m->arg.remap.len;
		r[1][0] = m->arg.remap.to, r[1][1] = m->arg.remap.to + m->arg.remap.len;
	} else
		return;
	for (int i = 0; i < 2 && r[i][1] > r[i][0]; i++) {
		if (cut) { /* they cannot be saved any more: a failed capture, not a wrong one */
			if (h_any_todo(b, r[i][0], r[i][1]))
				h_fail(b, CKPT_E_IO, "background snapshot: memory not yet saved was unmapped or "
						     "discarded by the process");
			continue;
		}
		uint32_t n = b->n_changed;
		if (n < BG_MAX_CHANGED) {
			b->changed[n][0] = r[i][0];
			b->changed[n][1] = r[i][1];
		}
		b->n_changed = n + 1;
	}
}

/* Reads and handles every queued message; 0 when there were none. */
static int h_drain(struct bg *b, int cut)
{
	struct uffd_msg m[NMSG];
	int any = 0;
	for (;;) {
		long n = sys3(SYS_read, b->uffd, m, sizeof(m));
		uint64_t now = h_now();
		if (n <= 0) {
			b->last_look = now;
			return any;
		}
		for (long i = 0; i < n / (long)sizeof(m[0]); i++) {
			if (m[i].event == UFFD_EVENT_PAGEFAULT)
				h_fault(b, m[i].arg.pagefault.address, cut);
			else
				h_event(b, &m[i], cut);
		}
		any = 1;
		b->last_look = now;
	}
}

/* At the cut: protect again what was unprotected before it and is to be
 * saved (the rest of the to-do pages were never unprotected). */
static int h_arm(struct bg *b)
{
	for (uint32_t k = 0; k < b->n_tr; k++) {
		struct bg_range *t = &b->tr[k];
		uint64_t n = (t->end - t->start) / PG;
		for (uint64_t i = 0; i < n;) {
			if (!(bit(t->todo, i) && bit(t->dirty, i))) {
				i++;
				continue;
			}
			uint64_t j = i;
			while (j < n && bit(t->todo, j) && bit(t->dirty, j))
				j++;
			if (h_wp(b, t->start + i * PG, t->start + j * PG, 1))
				return CKPT_E_KERNEL;
			i = j;
		}
	}
	return 0;
}

/* The sink's sections up to b->len numbered and checksummed (the stop's
 * part's CRCs first, once): the stream can take them. */
static void h_finalize(struct bg *b)
{
	if (!b->fixed) {
		for (uint32_t i = 0; i < b->n_fix; i++) {
			uint32_t crc = ckpt_crc32c(0, b->sink + b->fix[i].off, b->fix[i].len);
			memcpy(b->sink + b->fix[i].off + b->fix[i].len, &crc, 4);
		}
		b->fixed = 1;
		b->done = b->part2;
	}
	while (b->done < b->len) {
		struct ckpt_sect_hdr *h = (struct ckpt_sect_hdr *)(void *)(b->sink + b->done);
		unsigned char *pl = b->sink + b->done + sizeof(*h);
		h->seq = b->seq++;
		h->hdr_crc = ckpt_crc32c(0, h, 36);
		uint32_t crc = ckpt_crc32c(0, pl, h->stored_len);
		memcpy(pl + h->stored_len, &crc, 4);
		b->n_pages += ((const struct ckpt_pages *)(const void *)pl)->npages;
		b->done += sizeof(*h) + h->stored_len + 4;
	}
}

/* Writes what is finalized; wait = 0: only what the stream takes now (the
 * process's faults come first), else all of it.  0, or < 0 on error. */
static long h_send(struct bg *b, int wait)
{
	while (b->sent < b->done) {
		long r = sys6(SYS_sendto, b->out_fd, (long)(uintptr_t)(b->sink + b->sent), (long)(b->done - b->sent),
			      MSG_NOSIGNAL | (wait ? 0 : MSG_DONTWAIT), 0, 0);
		if (r == -ENOTSOCK) {
			if (!wait)
				return 0; /* a pipe or file: at the end, blocking */
			r = sys3(SYS_write, b->out_fd, (long)(uintptr_t)(b->sink + b->sent), (long)(b->done - b->sent));
		}
		if (r == -EINTR)
			continue;
		if (r == -EAGAIN) {
			if (!wait)
				return 0;
			struct pollfd pf = { b->out_fd, POLLOUT, 0 };
			sys3(SYS_poll, (long)(uintptr_t)&pf, 1, 1000);
			continue;
		}
		if (r <= 0)
			return r < 0 ? r : -EIO;
		b->sent += (size_t)r;
	}
	return 0;
}

/* After the last save (no protection left): the rest numbered, END, and
 * the rest of the sink to the stream. */
static void h_write_out(struct bg *b)
{
	h_finalize(b);
	struct ckpt_end e = { b->seq, b->n_pages, b->off + b->len };
	struct ckpt_sect_hdr h;
	memset(&h, 0, sizeof(h));
	h.magic = CKPT_SECT_MAGIC;
	h.type = CKPT_S_END;
	h.seq = b->seq;
	h.stored_len = h.raw_len = sizeof(e);
	h.hdr_crc = ckpt_crc32c(0, &h, 36);
	uint32_t crc = ckpt_crc32c(0, &e, sizeof(e));
	memcpy(b->sink + b->len, &h, sizeof(h));
	memcpy(b->sink + b->len + sizeof(h), &e, sizeof(e));
	memcpy(b->sink + b->len + sizeof(h) + sizeof(e), &crc, 4);
	b->done = b->len + sizeof(h) + sizeof(e) + 4;
	if (h_send(b, 1))
		h_fail(b, CKPT_E_IO, "background snapshot: writing the image failed");
}

/* After the cut: every to-do page saved, in address order, the process's
 * faults first (looked for between chunks). */
static void h_sweep(struct bg *b)
{
	uint64_t t0 = h_now();
	/* tests: only faults for a while, so that the process's writes after
	 * the cut surely find pages not saved yet, whatever the load */
	while (b->hold_ms && h_now() - t0 < b->hold_ms * 1000000ull && b->result == 1) {
		struct pollfd pf = { b->uffd, POLLIN, 0 };
		sys3(SYS_poll, (long)(uintptr_t)&pf, 1, 10);
		h_drain(b, 1);
	}
	for (uint32_t k = 0; k < b->n_tr && b->result == 1; k++) {
		struct bg_range *t = &b->tr[k];
		for (uint64_t s = t->start, e; s < t->end && b->result == 1; s = e) {
			h_chunk(t, s, b->chunk, &s, &e);
			if (h_any_todo(b, s, e)) {
				h_drain(b, 1);
				if (!h_save(b, t, s, e, 1))
					h_wp(b, s, e, 0);
				/* what is saved goes out while the stream takes it: the
				 * target restores while we save (never waiting here) */
				h_finalize(b);
				if (h_send(b, 0))
					h_fail(b, CKPT_E_IO, "background snapshot: writing the image failed");
			}
		}
	}
	h_drain(b, 1);
	b->st.copy_ns = h_now() - t0;
}

int ckpt_bg_helper(void *arg)
{
	struct bg *b = arg;
	uint64_t all = ~0ull;
	sys4(SYS_rt_sigprocmask, SIG_SETMASK, &all, 0, 8);
	b->self = (int)sys0(SYS_getpid);
	int keep[5] = { b->uffd, b->cmd_fd, b->out_fd, b->pagemap_fd, b->mem_fd };
	for (long fd = 0; fd < 1024; fd++) { /* its own copy of the table: only what it uses */
		int k = 0;
		while (k < 5 && keep[k] != fd)
			k++;
		if (k == 5)
			sys1(SYS_close, fd);
	}
	/* the process waits for us in its faults and commands: on a crowded
	 * host a helper of normal weight gets a slice per round of every other
	 * runnable task (root here; elsewhere EPERM, ignored); its background
	 * work (the sink's population) runs unboosted */
	sys3(SYS_setpriority, 0 /* PRIO_PROCESS */, 0, b->boost);
	int cut = 0;
	while (!cut) {
		struct pollfd pf[2] = { { b->uffd, POLLIN, 0 }, { b->cmd_fd, POLLIN, 0 } };
		/* idle before the cut: the sink populated 2 MiB at a time, so that
		 * saving after the cut is a memcpy, not a first touch */
		long n = sys3(SYS_poll, (long)(uintptr_t)pf, 2, b->pop_done < b->pop_want ? 0 : 1000);
		if (n == 0 && b->pop_done < b->pop_want) {
			size_t k = b->pop_want - b->pop_done > (2u << 20) ? (2u << 20) : b->pop_want - b->pop_done;
			sys3(SYS_setpriority, 0 /* PRIO_PROCESS */, 0, 0); /* background work: no boost */
			if (sys3(SYS_madvise, b->sink + b->pop_done, k, 23 /* MADV_POPULATE_WRITE */))
				b->pop_want = b->pop_done;
			else
				b->pop_done += k;
			sys3(SYS_setpriority, 0, 0, b->boost);
			continue;
		}
		if (n == 0 && sys0(SYS_getppid) != b->parent) {
			h_fail(b, CKPT_E_IO, "background snapshot: the process is gone");
			break;
		}
		h_drain(b, 0);
		if (n <= 0 || !(pf[1].revents & POLLIN))
			continue;
		uint64_t v;
		sys3(SYS_read, b->cmd_fd, &v, 8);
		int cmd = b->cmd, err = 0;
		if (cmd == BG_CMD_PROTECT) {
			for (uint32_t k = 0; !err && k < b->n_tr; k++)
				if (h_wp(b, b->tr[k].start, b->tr[k].end, 1))
					err = CKPT_E_KERNEL;
		} else if (cmd == BG_CMD_CUT) {
			uint64_t t0 = h_now();
			err = h_arm(b);
			b->st.arm_ns = h_now() - t0;
			cut = !err;
			if (err)
				h_fail(b, err, "background snapshot: write-protect at the cut failed");
		} else if (cmd == BG_CMD_QUIT) {
			h_fail(b, CKPT_E_IO, "background snapshot: abandoned");
			h_ack(b, 0);
			break;
		}
		h_ack(b, err);
		if (err && cmd == BG_CMD_CUT)
			break;
	}
	if (cut)
		h_sweep(b);
	sys3(SYS_setpriority, 0, 0, 0);
	sys1(SYS_close, b->uffd); /* the last reference: all protection dropped, waiters woken */
	if (cut && b->result == 1)
		h_write_out(b);
	sys1(SYS_close, b->out_fd);
	sys2(SYS_munmap, b->sink, b->sink_cap);
	if (b->result == 1)
		b->result = 0;
	sys1(SYS_exit, 0);
	return 0;
}

int ckpt_bg_command(struct bg *b, int cmd, int helper_pid)
{
	uint32_t was = __atomic_load_n(&b->acks, __ATOMIC_ACQUIRE);
	uint64_t one = 1;
	b->cmd = cmd;
	if (sys3(SYS_write, b->cmd_fd, &one, 8) != 8)
		return CKPT_E_IO;
	/* bounded: a helper that ended (its result is set) or does not answer
	 * within 10 s is a failed capture */
	for (int i = 0; i < 100; i++) {
		struct timespec ts = { 0, 100000000 };
		if (__atomic_load_n(&b->acks, __ATOMIC_ACQUIRE) != was)
			return b->cmd_err;
		if (b->result != 1)
			return b->result < 0 ? (int)b->result : CKPT_E_IO;
		sys6(SYS_futex, (long)(uintptr_t)&b->acks, FUTEX_WAIT_PRIVATE, was, (long)(uintptr_t)&ts, 0, 0);
	}
	(void)helper_pid;
	return CKPT_E_IO;
}

int ckpt_bg_changed(const struct bg *b, uint64_t s, uint64_t e)
{
	uint32_t n = b->n_changed;
	if (n > BG_MAX_CHANGED)
		return 1;
	for (uint32_t i = 0; i < n; i++)
		if (b->changed[i][0] < e && b->changed[i][1] > s)
			return 1;
	return 0;
}
