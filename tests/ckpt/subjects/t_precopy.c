/* SPDX-License-Identifier: MIT */
/* Pre-copy live snapshot: t_precopy precopy IMAGE.  Between steps the
 * source keeps changing memory in the ways that break naive dirty tracking:
 * rewrites, MADV_DONTNEED of sent pages, brk shrink + regrow, munmap + new
 * mmap at the same address, mremap, mprotect to PROT_NONE, new mallocs.
 * The restored copy must compute what the uninterrupted run computes.
 * t_precopy prepared|prepared-early IMAGE: the same through the prepared
 * stop (nothing tracked: the stop copies everything into a buffer a helper
 * made ready meanwhile), its cut after the buffer is ready or at once. */
#include <sys/mman.h>

#include "subject.h"

#define MB (1u << 20)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i += 64)
		p[i] = (unsigned char)(seed + i / 64);
}

static int pc = 0;

static void step(size_t budget)
{
	struct ckpt_error e;
	if (pc && ckpt_precopy_step(budget, &e) < 0) {
		fprintf(stderr, "STEP-FAILED %s\n", e.what);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	int prep = argc > 2 && !strncmp(argv[1], "prepared", 8);
	pc = argc > 2 && (prep || !strcmp(argv[1], "precopy"));
	unsigned char *big = malloc(32 * MB);
	unsigned char *a = mmap(NULL, 4 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *b = mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *d = mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *brk0 = sbrk(MB);
	fill(big, 32 * MB, 1), fill(a, 4 * MB, 2), fill(b, 2 * MB, 3), fill(d, 2 * MB, 4), fill(brk0, MB, 5);
	int fd = -1;
	if (pc) {
		struct ckpt_error e;
		fd = subj_open_out(argv[2]);
		struct ckpt_opts o = { .prepare = prep };
		if (ckpt_precopy_begin(fd, &o, &e)) {
			fprintf(stderr, "BEGIN-FAILED %s %s\n", ckpt_err_name(e.code), e.what);
			return 2;
		}
	}
	for (int round = 0; round < 6; round++) {
		step(round ? 8 * MB : 256 * MB); /* round 0 sends everything once */
		for (size_t i = (size_t)round * MB; i < 32 * MB; i += 7 * 4096)
			big[i] ^= (unsigned char)round;
		if (round == 1)
			madvise(a + MB, MB, MADV_DONTNEED); /* sent pages now zero */
		if (round == 2) {
			sbrk(-(intptr_t)MB); /* brk shrink and regrow: zero pages */
			sbrk(MB);
			brk0[100] = 9;
		}
		if (round == 3) { /* same address, new mapping */
			munmap(b, 2 * MB);
			mmap(b, 2 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			fill(b, MB, 7);
		}
		if (round == 4) {
			d = mremap(d, 2 * MB, 4 * MB, MREMAP_MAYMOVE);
			fill(d + 2 * MB, 2 * MB, 8);
			mprotect(a + 3 * MB, MB, PROT_NONE);
		}
	}
	char *late = malloc(3 * MB); /* a new region since begin */
	fill((unsigned char *)late, 3 * MB, 6);
	if (prep && ckpt_precopy_prepared() != 1) {
		fprintf(stderr, "NOT-PREPARED\n");
		return 2;
	}
	if (prep && !strcmp(argv[1], "prepared")) { /* the cut once the buffer is ready */
		struct ckpt_error e;
		long left = 1;
		for (int i = 0; i < 20000 && (left = ckpt_precopy_step(0, &e)) > 0; i++)
			usleep(1000);
		if (left) {
			fprintf(stderr, "NEVER-READY %ld\n", left);
			return 2;
		}
		fprintf(stderr, "READY\n");
	}
	if (pc) {
		struct ckpt_error e;
		fflush(NULL);
		int r = ckpt_precopy_finish(NULL, &e);
		if (r < 0) {
			fprintf(stderr, "FINISH-FAILED %s %s\n", ckpt_err_name(r), e.what);
			return 2;
		}
		if (r == CKPT_RESTORED)
			fprintf(stderr, "RESTORED %d\n", (int)getpid());
		else {
			close(fd);
			if (ckpt_precopy_wait(&e)) { /* the helper wrote the stop's sections */
				fprintf(stderr, "HELPER-FAILED %s\n", e.what);
				return 2;
			}
			ckpt_precopy_release();
			fprintf(stderr, "SOURCE %d\n", (int)getpid());
		}
	}
	mprotect(a + 3 * MB, MB, PROT_READ);
	uint64_t h = subj_hash(0, big, 32 * MB);
	h = subj_hash(h, a, 4 * MB);
	h = subj_hash(h, b, 2 * MB);
	h = subj_hash(h, d, 4 * MB);
	h = subj_hash(h, brk0, MB);
	h = subj_hash(h, late, 3 * MB);
	printf("precopy %016llx\n", (unsigned long long)h);
	return 0;
}
