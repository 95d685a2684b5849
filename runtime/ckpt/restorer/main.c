/* SPDX-License-Identifier: MIT */
/*
 * msg-restore [--check-only] [-v] [--ready-fd N] [--wait-fd N] [--keep-fd N]... [--fd N | IMAGE]
 * Reads an image (fd, file or stdin), verifies it, then becomes the process
 * it describes.  Exit status on failure: -CKPT_E_* (e.g. 23 = checksum).
 */
#include "../ckpt.h"
#include "restorer.h"
#include "sys.h"
#include "../fmt.h"

char r_maps[1 << 20];
static unsigned char r_meta[24u << 20] __attribute__((aligned(64)));
static struct ckpt_rd r_rd;
static struct ckpt_meta r_m;
static struct r_opts r_o;
extern int r_log_fd;
static long r_nreads; /* -v: read calls */

/* -v: phase times, wall and CPU, on stderr (clock_gettime by syscall: no vDSO here). */
static void phase(const char *name)
{
	static long long last, last_cpu, last_flt;
	long long ts[2], ru[18]; /* struct rusage: ru_minflt is its 9th word */
	if (!r_o.verbose)
		return;
	sys2(__NR_getrusage, 0 /* RUSAGE_SELF */, ru);
	sys2(__NR_clock_gettime, 1, ts);
	long long now = ts[0] * 1000000000ll + ts[1];
	sys2(__NR_clock_gettime, 2 /* CLOCK_PROCESS_CPUTIME_ID */, ts);
	long long cpu = ts[0] * 1000000000ll + ts[1];
	if (last)
		r_msg("%s: %lld us (CPU %lld us, %lld faults, %ld reads) at %lld us", name, (now - last) / 1000,
		      (cpu - last_cpu) / 1000, ru[8] - last_flt, r_nreads, now / 1000);
	else
		r_msg("exec'd at %lld us", now / 1000);
	last = now, last_cpu = cpu, last_flt = ru[8];
	r_nreads = 0;
}

static long sys_read(long fd, void *buf, size_t n)
{
	long r;
	r_nreads++;
	do
		r = sys3(__NR_read, fd, buf, n);
	while (r == -4); /* EINTR */
	return r;
}

/* Read-ahead for the many small pieces (a section header, a one-page run,
 * its CRC: three reads each, about a hundred for a 1 MiB image); large
 * payloads still go straight into place.  Only for an image descriptor
 * the restorer closes when done (> 2): bytes after END are never taken
 * from a descriptor the restored process keeps. */
static unsigned char r_rbuf[16u << 10];
static size_t r_rpos, r_rlen;

static long fd_read(void *ctx, void *buf, size_t n)
{
	long fd = (long)(intptr_t)ctx;
	if (fd <= 2)
		return sys_read(fd, buf, n);
	if (r_rpos == r_rlen) {
		if (n >= sizeof(r_rbuf))
			return sys_read(fd, buf, n);
		long r = sys_read(fd, r_rbuf, sizeof(r_rbuf));
		if (r <= 0)
			return r;
		r_rpos = 0, r_rlen = (size_t)r;
	}
	size_t k = r_rlen - r_rpos < n ? r_rlen - r_rpos : n;
	memcpy(buf, r_rbuf + r_rpos, k);
	r_rpos += k;
	return (long)k;
}

static long num(const char *s)
{
	long v = 0;
	if (!s || !*s)
		r_die(CKPT_E_INVAL, "expected a number");
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			r_die(CKPT_E_INVAL, "bad number");
		v = v * 10 + (*s - '0');
	}
	return v;
}

static void parse_args(int argc, char **argv, struct r_opts *o)
{
	const char *path = 0;
	o->img_fd = 0;
	o->ready_fd = -1;
	o->wait_fd = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (r_streq(a, "--check-only"))
			o->check_only = 1;
		else if (r_streq(a, "-v"))
			o->verbose = 1;
		else if (r_streq(a, "--ready-fd") && i + 1 < argc)
			o->ready_fd = (int)num(argv[++i]);
		else if (r_streq(a, "--wait-fd") && i + 1 < argc)
			o->wait_fd = (int)num(argv[++i]);
		else if (r_streq(a, "--log-fd") && i + 1 < argc)
			r_log_fd = (int)num(argv[++i]);
		else if (r_streq(a, "--fd") && i + 1 < argc)
			o->img_fd = (int)num(argv[++i]);
		else if (r_streq(a, "--keep-fd") && i + 1 < argc && o->n_keep < R_MAX_KEEP)
			o->keep[o->n_keep++] = (int)num(argv[++i]);
		else if (a[0] != '-' && !path)
			path = a;
		else
			r_die(CKPT_E_INVAL, "usage: msg-restore [--check-only] [-v] [--ready-fd N] [--wait-fd N] [--keep-fd N]... [--fd N | IMAGE]");
	}
	if (path) {
		long fd = sys4(__NR_openat, R_AT_FDCWD, path, R_O_RDONLY | R_O_CLOEXEC, 0);
		if (fd < 0)
			r_die(CKPT_E_IO, "cannot open %s (errno %ld)", path, -fd);
		o->img_fd = (int)fd;
	}
}

/* --ready-fd N: "READY <cpu_ns>" once started and waiting for the image's
 * first byte, then N is closed: a pre-started restorer's caller learns
 * when it may send, and how much CPU the start took (fork, exec, the
 * host's side of the checks, r_detach_self), which is not the restore's. */
static void ready(void)
{
	char buf[48];
	long long ts[2];
	if (r_o.ready_fd < 0)
		return;
	sys2(__NR_clock_gettime, 2 /* CLOCK_PROCESS_CPUTIME_ID */, ts);
	int n = ckpt_fmt(buf, sizeof(buf), "READY %llu\n", (unsigned long long)(ts[0] * 1000000000ll + ts[1]));
	sys3(__NR_write, r_o.ready_fd, buf, n);
	sys1(__NR_close, r_o.ready_fd);
}

/* The restorer's own buffers that every restore uses (the read-ahead, the
 * first pages of the metadata) are made resident before READY, with the
 * rest of its start: their first touches were 7 page faults of the
 * metadata phase.  The image's pages are not: they are the transfer. */
#define META_WARM (32u << 10)

static void warm_buffers(void)
{
	memset(r_rbuf, 0, sizeof(r_rbuf));
	memset(r_meta, 0, META_WARM);
}

/* --wait-fd N: a spare restorer, started (exec, r_prestart) before any
 * image was due, so that a move does not wait for that (msgd keeps one per
 * job, spawn.c). N is a Unix socket; the image's descriptor comes on it
 * (SCM_RIGHTS) and is put at the --fd number. End of file: not needed. */
struct r_cmsg {
	uint64_t len;
	int32_t level, type;
	int32_t fd, pad;
};

static void wait_image(void)
{
	char byte;
	struct { void *base; size_t len; } iov = { &byte, 1 };
	struct r_cmsg cm = { 0 };
	struct { void *name; uint32_t namelen, pad0; void *iov; size_t iovlen; void *control; size_t controllen; int flags, pad1; }
		mh = { 0, 0, 0, &iov, 1, &cm, sizeof(cm), 0, 0 };
	long r;
	if (r_o.wait_fd < 0)
		return;
	do
		r = sys3(__NR_recvmsg, r_o.wait_fd, &mh, 0x40000000 /* MSG_CMSG_CLOEXEC */);
	while (r == -4);
	if (r <= 0)
		r_exit(0); /* msgd let the spare go (the job ended) */
	if (cm.len != 20 || cm.level != 1 /* SOL_SOCKET */ || cm.type != 1 /* SCM_RIGHTS */ || cm.fd < 0)
		r_die(CKPT_E_INVAL, "--wait-fd: no descriptor came");
	if (cm.fd != r_o.img_fd) {
		if (sys3(__NR_dup3, cm.fd, r_o.img_fd, 0) < 0)
			r_die(CKPT_E_IO, "--wait-fd: cannot place the image at fd %d", r_o.img_fd);
		sys1(__NR_close, cm.fd);
	}
	sys1(__NR_close, r_o.wait_fd);
	r_prestart_again();
	phase("wait for the image");
}

static void check(int r)
{
	if (r < 0)
		r_die(r, "%s", r_rd.what);
}

/* Pre-copy: the final part must keep the vDSO layout already placed. */
static void read_final(int check_only)
{
	struct ckpt_mm first = *r_m.mm;
	r_load_pre_pages(&r_rd, &r_m, check_only);
	check(ckpt_read_final_meta(&r_rd, &r_m, r_meta, sizeof(r_meta)));
	if (first.special_start != r_m.mm->special_start || first.vdso_start != r_m.mm->vdso_start ||
	    first.vdso_crc != r_m.mm->vdso_crc)
		r_die(CKPT_E_FORMAT, "vDSO moved during pre-copy");
	r_verify_xsave(&r_m);
}

/* Nothing before this point changed the address space (but for the
 * launch's own mappings, dropped before READY); from here on a failure
 * ends the restorer before the image's code ever runs. */
static void become(void)
{
	if (!r_torn_down)
		r_teardown();
	r_place_vdso(&r_m);
	phase("teardown+vdso");
	if (r_m.precopy) {
		r_map_pre_vmas(&r_m);
		read_final(0);
		r_reconcile_pre(&r_m);
		phase("pre-copy part");
	}
	r_map_vmas(&r_m);
	phase("map");
	r_load_pages(&r_rd, &r_m, 0);
	phase("pages");
	if (r_o.img_fd > 2)
		sys1(__NR_close, r_o.img_fd);
	phase("close image"); /* a loopback TCP close: 10-60 us of CPU here */
	r_restore_fds(&r_m, &r_o);
	r_restore_misc(&r_m);
	phase("state: fds, cwd");
	r_final_protect(&r_m);
	r_restore_signals(&r_m);
	phase("state: protection, signals");
	r_restore_mm(&r_m);
	r_restore_thread(&r_m);
	phase("state: mm, thread");
	r_jump(&r_m.th->regs, r_m.xsave, r_m.cpu->xcr0, &r_m.sig->blocked);
}

void restorer_main(long *sp)
{
	int argc = (int)sp[0];
	char **argv = (char **)(sp + 1);
	uint64_t all = ~0ull;
	sys4(__NR_rt_sigprocmask, R_SIG_SETMASK, &all, 0, 8);
	r_zstd_init();
	parse_args(argc, argv, &r_o);
	phase("exec");
	ckpt_rd_init(&r_rd, fd_read, (void *)(intptr_t)r_o.img_fd);
	r_prestart(r_o.check_only);
	warm_buffers();
	phase("start");
	ready();
	wait_image();
	check(ckpt_read_meta(&r_rd, &r_m, r_meta, sizeof(r_meta)));
	phase("metadata");
	r_verify(&r_m);
	phase("verify");
	if (r_o.check_only) {
		if (r_m.precopy)
			read_final(1);
		r_load_pages(&r_rd, &r_m, 1);
		r_msg("image ok: %u VMAs, %llu pages, %u files", r_m.n_vmas, (unsigned long long)r_rd.n_pages,
		      r_m.n_fds);
		r_exit(0);
	}
	become();
}
