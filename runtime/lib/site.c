/* The send site carried with every message for divergence reports: the
 * application's return address from msgsend. An address inside the main
 * executable is sent relative to the executable's load address (flag
 * MSG_SITE_EXE), so msgrun can resolve it to function and file:line with the
 * program's own debug info, whatever address the loader chose. */
#include <link.h>

#include "lib/lib.h"

static uintptr_t exe_base, exe_lo, exe_hi;

/* dl_iterate_phdr lists the main program first */
static int main_program(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	exe_base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;

		if (p->p_type != PT_LOAD)
			continue;
		if (!exe_hi || lo < exe_lo)
			exe_lo = lo;
		if (hi > exe_hi)
			exe_hi = hi;
	}
	return 1;
}

void lib_site_init(void)
{
	if (!exe_hi)
		dl_iterate_phdr(main_program, NULL);
}

uint64_t lib_site(const void *ret)
{
	uintptr_t a = (uintptr_t)ret;

	if (a >= exe_lo && a < exe_hi)
		return MSG_SITE_EXE | (uint64_t)(a - exe_base);
	return (uint64_t)a;
}
