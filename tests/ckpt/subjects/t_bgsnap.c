/* SPDX-License-Identifier: MIT */
/* Background snapshot: t_bgsnap straight|snap IMAGE SEED.  The source
 * rewrites its memory before the cut (every page: all to be saved again)
 * and, at once after it, again from the top down while the helper saves
 * from the bottom up: most of its writes hit pages not saved yet.  Each
 * run's pattern comes from SEED.  Printed: the memory's hash at the cut
 * (the source computes it just before the stop; the restored copy from
 * what the image gave it) and after the later writes; a straight run
 * prints the same without a snapshot. */
#include <sys/mman.h>

#include "subject.h"

#define MB (1u << 20)
#define SIZE (40 * MB)
#define PG 4096u

static uint64_t hash(const uint64_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n / 8; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

int main(int argc, char **argv)
{
	int snap = argc > 3 && !strcmp(argv[1], "snap");
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
	unsigned char *m = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < SIZE; i += 8) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(m + i, &x, 8);
	}
	struct ckpt_error e;
	int fd = -1;
	if (snap) {
		fd = subj_open_out(argv[2]);
		if (ckpt_precopy_begin(fd, NULL, &e)) {
			fprintf(stderr, "BEGIN-FAILED %s %s\n", ckpt_err_name(e.code), e.what);
			return 2;
		}
		long left;
		while ((left = ckpt_precopy_step(8 * MB, &e)) > 0)
			;
		if (left < 0) {
			fprintf(stderr, "STEP-FAILED %s\n", e.what);
			return 2;
		}
	}
	/* before the cut: every page, at a per-run offset */
	unsigned off = (unsigned)(seed % (PG / 8)) * 8;
	for (size_t i = 0; i < SIZE; i += PG)
		m[i + off] ^= (unsigned char)(seed + i / PG);
	uint64_t hcut = hash((const uint64_t *)(const void *)m, SIZE);
	int restored = 0;
	if (snap) {
		fflush(NULL);
		int r = ckpt_precopy_finish(NULL, &e);
		if (r < 0) {
			fprintf(stderr, "FINISH-FAILED %s %s\n", ckpt_err_name(r), e.what);
			return 2;
		}
		restored = r == CKPT_RESTORED;
	}
	if (restored)
		hcut = hash((const uint64_t *)(const void *)m, SIZE); /* what the image holds */
	/* at once after the cut: top down, a per-run stride, while the helper saves bottom up */
	size_t stride = PG * (1 + seed % 3);
	for (size_t i = SIZE - PG; i < SIZE; i -= stride) {
		m[i + (off ^ 64)] += (unsigned char)(3 + seed);
		if (i < stride)
			break;
	}
	if (snap && !restored) {
		close(fd);
		if (ckpt_precopy_wait(&e)) {
			fprintf(stderr, "HELPER-FAILED %s\n", e.what);
			return 2;
		}
		struct ckpt_bg_stats st;
		if (ckpt_precopy_stats(&st))
			fprintf(stderr, "BGSNAP faults before %llu after %llu saved %llu by faults %llu bytes\n",
				(unsigned long long)st.faults_pre, (unsigned long long)st.faults_post,
				(unsigned long long)st.saved_bytes, (unsigned long long)st.fault_bytes);
		ckpt_precopy_release();
		fprintf(stderr, "SOURCE %d\n", (int)getpid());
	}
	if (restored)
		fprintf(stderr, "RESTORED %d\n", (int)getpid());
	printf("cut %016llx\nfinal %016llx\n", (unsigned long long)hcut,
	       (unsigned long long)hash((const uint64_t *)(const void *)m, SIZE));
	return 0;
}
