/* SPDX-License-Identifier: MIT */
/* Globals: .data, .bss and static locals changed before the checkpoint. */
#include "subject.h"

int g_data[4096] = { 1, 2, 3 };
static long g_bss[8192];
const char g_ro[] = "read-only string in .rodata";

int main(int argc, char **argv)
{
	static double s_local = 1.5;
	for (int i = 0; i < 4096; i++)
		g_data[i] = i * 3 + g_data[i];
	for (int i = 0; i < 8192; i += 3)
		g_bss[i] = (long)i * i;
	s_local *= 3;
	subj_checkpoint(argc, argv);
	uint64_t h = subj_hash(0, g_data, sizeof(g_data));
	h = subj_hash(h, g_bss, sizeof(g_bss));
	h = subj_hash(h, &s_local, sizeof(s_local));
	h = subj_hash(h, g_ro, sizeof(g_ro));
	g_data[7] += 1;
	g_bss[8191] = 5;
	h = subj_hash(h, g_data, 64);
	printf("globals %016llx %s\n", (unsigned long long)h, g_ro);
	return 0;
}
