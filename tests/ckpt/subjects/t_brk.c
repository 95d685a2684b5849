/* SPDX-License-Identifier: MIT */
/* brk: the program break moves on after a restore (sbrk growth and
 * shrink, and malloc's main arena growing through brk), and a break set by
 * the system call behind glibc's back (so its __curbrk is stale: the
 * capture must not take it) is the one restored. */
#include <sys/syscall.h>

#include "subject.h"

int main(int argc, char **argv)
{
	char *b0 = sbrk(0);
	char *p = sbrk(1 << 20);
	memset(p, 0x5a, 1 << 20);
	char *raw = (char *)syscall(SYS_brk, p + (1 << 20) + 8192 + 100);
	subj_checkpoint(argc, argv);
	int raw_kept = (char *)syscall(SYS_brk, 0) == raw;
	char *p2 = sbrk(4 << 20); /* grows past the restored break */
	int grew = p2 == p + (1 << 20);
	memset(p2, 0x33, 4 << 20);
	uint64_t h = subj_hash(0, p, 5 << 20);
	sbrk(-(2 << 20));
	int shrunk = (char *)sbrk(0) == p + (3 << 20);
	void *m[100];
	for (int i = 0; i < 100; i++) /* main arena still extends with brk */
		m[i] = malloc(64 * 1024), memset(m[i], i, 64 * 1024);
	printf("brk grew=%d shrunk=%d raw_kept=%d h=%016llx delta=%d\n", grew, shrunk, raw_kept, (unsigned long long)h,
	       (long)((char *)sbrk(0) - b0) > 0);
	return 0;
}
