/* SPDX-License-Identifier: MIT */
/* Anonymous mappings with holes and mixed protections: read-only with data,
 * PROT_NONE with data, write-only, a hole in the middle, untouched pages. */
#include <sys/mman.h>

#include "subject.h"

#define PG 4096

int main(int argc, char **argv)
{
	unsigned char *a = mmap(NULL, 64 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 64; i += 2) /* every other page touched */
		memset(a + i * PG, i + 1, PG);
	munmap(a + 20 * PG, 4 * PG);                 /* hole */
	mprotect(a + 8 * PG, 4 * PG, PROT_READ);     /* read-only with data */
	mprotect(a + 30 * PG, 2 * PG, PROT_NONE);    /* data behind PROT_NONE */
	mprotect(a + 40 * PG, 2 * PG, PROT_READ | PROT_EXEC);
	FILE *f = fopen("shared.dat", "w"); /* a read-only shared file mapping */
	for (int i = 0; i < 3000; i++)
		fprintf(f, "%d,", i);
	fclose(f);
	int sfd = open("shared.dat", O_RDONLY);
	const char *sh = mmap(NULL, 3 * PG, PROT_READ, MAP_SHARED, sfd, 0);
	close(sfd);
	subj_checkpoint(argc, argv);
	mprotect(a + 30 * PG, 2 * PG, PROT_READ);
	uint64_t h = 0;
	for (int i = 0; i < 64; i++)
		if (i < 20 || i >= 24)
			h = subj_hash(h, a + i * PG, PG);
	/* the hole is still a hole: MAP_FIXED_NOREPLACE succeeds there */
	void *p = mmap(a + 20 * PG, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	h = subj_hash(h, sh, 3 * PG);
	printf("mmap %016llx hole=%s shared=%.12s\n", (unsigned long long)h, p == a + 20 * PG ? "free" : "taken", sh + 100);
	return 0;
}
