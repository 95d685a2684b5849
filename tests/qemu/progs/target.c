/*
 * mmt-target DATAFILE: a process with state of every kind the image carries
 * (heap, stack, globals, bss, anonymous and file mappings, TLS, FPU control
 * state, an open file with an offset, signal handler and mask). It writes
 * 'R' to stdout and blocks in read(0) - the safe point, as msgrecv would -
 * then, given a byte, prints a digest of all that state and of computations
 * that depend on it. A saved and restored run must print exactly what an
 * undisturbed run prints.
 */
#include <fenv.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xmmintrin.h>
#ifdef MMT_USER_CAPTURE
#include "ckpt.h"
#endif

#define HEAP_SZ (3 << 20)
#define ANON_SZ (256 << 10)

static uint64_t g_data = 0x0123456789abcdefULL;	/* .data */
static unsigned char g_bss[64 << 10];		/* .bss */
static __thread uint64_t t_tls = 0x5a5a5a5a;	/* TLS (fs base) */
static volatile sig_atomic_t g_sig_seen;
/* Stands for libmsg's runtime state (channel cut) in RUNTIME tests. */
static char g_runtime[64] = "channel cut: 42";

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

static void fill(void *p, size_t n, uint64_t seed)
{
	uint64_t *w = p;

	for (size_t i = 0; i < n / 8; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		w[i] = seed;
	}
}

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

/* Reclaim the whole pages inside [p, p+n): to swap, if there is swap. */
static void page_out(void *p, size_t n)
{
	uintptr_t s = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)4095;

	if (e > s)
		madvise((void *)s, e - s, MADV_PAGEOUT);
}

static void on_usr1(int sig)
{
	g_sig_seen = sig;
}

/* Results depend on the rounding mode and x87 precision being carried. */
static void fpu_work(char *out, size_t n)
{
	volatile double d = 1.0;
	volatile long double ld = 1.0L;
	volatile float f = 1.0f;

	for (int i = 1; i < 1000; i++) {
		d += 1.0 / (3.0 * i);
		ld += 1.0L / (7.0L * i);
		f += 1.0f / (11.0f * i);
	}
	snprintf(out, n, "round=%d mxcsr=%#x d=%a ld=%La f=%a sqrt=%a",
		 fegetround(), _mm_getcsr(), d, ld, f, sqrt(d));
}

#ifdef MMT_USER_CAPTURE
static int user_capture(const char *path, int compress)
{
	struct ckpt_opts o = { .compress = compress };
	struct ckpt_error err;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int r = ckpt_capture(fd, &o, &err);

	if (r < 0)
		fprintf(stderr, "mmt-utarget: ckpt_capture: %d %s\n", r, err.what);
	if (r == CKPT_CAPTURED)
		close(fd);
	return r;
}
#endif

int main(int argc, char **argv)
{
	unsigned char stack_buf[32 << 10];
	char line[256], fbuf[200], rest[4096];
	unsigned char *heap, *anon, *ro, *fmap;
	int data_fd, map_fd;
	sigset_t block;
	uint64_t h;
	ssize_t n;
	char c;

	if (argc < 2)
		return 2;
	/* State set up before the safe point. */
	heap = malloc(HEAP_SZ);
	anon = mmap(NULL, ANON_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	map_fd = open(argv[1], O_RDONLY);
	fmap = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, map_fd, 0);
	data_fd = open(argv[1], O_RDONLY);
	if (!heap || anon == MAP_FAILED || ro == MAP_FAILED || fmap == MAP_FAILED || data_fd < 0)
		return 3;
	close(map_fd);
	fill(heap, HEAP_SZ, 1);
	fill(anon, ANON_SZ / 2, 2);	/* upper half stays zero: not carried */
	fill(ro, 2 * 4096, 3);
	mprotect(ro, 3 * 4096, PROT_READ);	/* contents under PROT_READ */
	fmap[4096 + 5] ^= 0xff;		/* one private dirty file page */
	fill(stack_buf, sizeof(stack_buf), 4);
	fill(g_bss, sizeof(g_bss), 5);
	g_data ^= 0xfeed;
	t_tls += 17;
	if (read(data_fd, fbuf, 100) != 100)	/* file offset 100 */
		return 4;
	fesetround(FE_UPWARD);
	_mm_setcsr(_mm_getcsr() | 0x8040);	/* FTZ | DAZ */
	signal(SIGUSR1, on_usr1);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	sigprocmask(SIG_BLOCK, &block, NULL);

	if (getenv("MMT_PAGEOUT")) {	/* push state out to swap before the save */
		page_out(heap, HEAP_SZ);
		page_out(anon, ANON_SZ);
		page_out(g_bss, sizeof(g_bss));
		page_out(stack_buf, sizeof(stack_buf));
	}
	/* The safe point: blocked in a system call. */
	if (write(1, "R", 1) != 1)
		return 5;
	if (getenv("MMT_RT")) {	/* tell the tester where the runtime state is */
		uint64_t at = (uintptr_t)g_runtime;

		if (write(1, &at, sizeof(at)) != sizeof(at))
			return 5;
	}
#ifdef MMT_USER_CAPTURE
	/* mmt-utarget DATA IMAGE [z]: the user-level engine captures here. */
	if (argc >= 3 && user_capture(argv[2], argc == 4) != CKPT_RESTORED)
		return 0;
#endif
	if (read(0, &c, 1) != 1)
		return 5;

	/* Everything below must come out the same after a restore. */
	h = fnv(0xcbf29ce484222325ULL, heap, HEAP_SZ);
	h = fnv(h, anon, ANON_SZ);
	h = fnv(h, ro, 3 * 4096);
	h = fnv(h, fmap, 8192);
	h = fnv(h, stack_buf, sizeof(stack_buf));
	h = fnv(h, g_bss, sizeof(g_bss));
	printf("mem=%016llx data=%llx tls=%llx\n", (unsigned long long)h,
	       (unsigned long long)g_data, (unsigned long long)t_tls);
	fpu_work(line, sizeof(line));
	printf("fpu %s\n", line);
	n = read(data_fd, rest, sizeof(rest));	/* from offset 100 */
	printf("file n=%zd h=%016llx off=%lld\n", n,
	       (unsigned long long)fnv(1, rest, n > 0 ? n : 0),
	       (long long)lseek(data_fd, 0, SEEK_CUR));
	raise(SIGUSR1);
	sigprocmask(SIG_BLOCK, NULL, &block);
	printf("signal seen=%d usr2-blocked=%d\n", (int)g_sig_seen,
	       sigismember(&block, SIGUSR2));
	/* The heap must still work: brk and malloc state came along. */
	free(heap);
	heap = malloc(8 << 20);
	printf("malloc-after=%s\n", heap ? "ok" : "failed");
	return 0;
}
