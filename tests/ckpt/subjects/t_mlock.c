/* SPDX-License-Identifier: MIT */
/* mlock'ed memory is carried: the restored region is locked again (smaps
 * "lo") and holds the same data; an unlocked neighbour stays unlocked. */
#include <sys/mman.h>

#include "subject.h"

/* 1 if the VMA containing p has the "lo" (VM_LOCKED) flag. */
static int locked(const void *p)
{
	char line[512];
	unsigned long long a, b, at = (unsigned long long)(uintptr_t)p;
	int in = 0, r = -1;
	FILE *f = fopen("/proc/self/smaps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx-%llx ", &a, &b) == 2 && line[0] != 'V')
			in = at >= a && at < b;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			r = strstr(line, " lo") != NULL;
			break;
		}
	}
	if (f)
		fclose(f);
	return r;
}

int main(int argc, char **argv)
{
	size_t n = 64 << 10;
	unsigned char *p = mmap(NULL, 2 * n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mlock(p, n))
		return 9;
	for (size_t i = 0; i < 2 * n; i++)
		p[i] = (unsigned char)(i * 7 + 3);
	subj_checkpoint(argc, argv);
	uint64_t h = subj_hash(0, p, 2 * n);
	printf("mlock locked=%d neighbour=%d data=%016llx\n", locked(p), locked(p + n), (unsigned long long)h);
	return 0;
}
