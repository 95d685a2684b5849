// SPDX-License-Identifier: GPL-2.0
/*
 * FPU/vector state of a restore. The image holds a standard-format XSAVE
 * area (as NT_X86_XSTATE); the kernel keeps the task's state in its own
 * buffer, compacted when XSAVES is used. The xstate regset's set() cannot
 * be used on the current task (it warns under X86_DEBUG_FPU), so the state
 * is written into the buffer inside kernel_fpu_begin()/end(), which saves
 * the live registers first and makes the exit to user space reload them
 * from the buffer. Whatever could make that XRSTOR fault is refused first.
 */
#include <linux/sched.h>
#include <linux/string.h>
#include <asm/fpu/api.h>
#include <asm/fpu/types.h>
#include <asm/processor.h>
#include <asm/cpufeature.h>
#include "restore.h"

extern unsigned int mxcsr_feature_mask;	/* exported, no header for modules */

#define LEGACY_SIZE 512
#define HEADER_END 576
#define PKRU_BIT BIT_ULL(XFEATURE_PKRU)

static u64 user_features(void)
{
	return current->thread.fpu.fpstate->user_xfeatures;
}

int mmr_check_fpu(struct mm_restore *r)
{
	const struct fxregs_state *fx = (const void *)r->im.xsave;
	const struct xstate_header *h;

	if (r->im.th->xsave_len < LEGACY_SIZE)
		return mm_fail(r->e, -EINVAL, CKPT_E_FORMAT, "no FPU state");
	if (fx->mxcsr & ~mxcsr_feature_mask)
		return mm_fail(r->e, -EINVAL, CKPT_E_CPU,
			       "MXCSR %#x has bits this CPU rejects", fx->mxcsr);
	if (!boot_cpu_has(X86_FEATURE_XSAVE))
		return 0;
	if (r->im.th->xsave_len < HEADER_END ||
	    r->im.th->xsave_len > current->thread.fpu.fpstate->user_size)
		return mm_fail(r->e, -EINVAL, CKPT_E_CPU, "XSAVE area of %u bytes",
			       r->im.th->xsave_len);
	h = (const void *)(r->im.xsave + LEGACY_SIZE);
	if (h->xfeatures & ~user_features())
		return mm_fail(r->e, -EINVAL, CKPT_E_CPU,
			       "XSTATE_BV %llx has features this kernel does not enable",
			       h->xfeatures);
	if (h->xcomp_bv)
		return mm_fail(r->e, -EINVAL, CKPT_E_FORMAT,
			       "XSAVE area is compacted: the format wants the standard one");
	return 0;
}

/* Offset of component @nr in a compacted buffer holding @xcomp. */
static unsigned int compacted_offset(u64 xcomp, int nr)
{
	unsigned int off = HEADER_END, eax, ebx, ecx, edx;
	int i;

	for (i = 2; i <= nr; i++) {
		if (!(xcomp & BIT_ULL(i)))
			continue;
		cpuid_count(0xd, i, &eax, &ebx, &ecx, &edx);
		if (ecx & 2)		/* 64-byte aligned in compacted form */
			off = ALIGN(off, 64);
		if (i == nr)
			return off;
		off += eax;
	}
	return 0;
}

void mmr_fpu(struct mm_restore *r)
{
	const struct xstate_header *h = (const void *)(r->im.xsave + LEGACY_SIZE);
	const struct ckpt_cpu *cpu = r->im.cpu;
	struct xregs_state *x;
	u64 user, bv, xcomp;
	int i;

	kernel_fpu_begin_mask(0);
	x = &current->thread.fpu.fpstate->regs.xsave;
	memcpy(&x->i387, r->im.xsave, offsetof(struct fxregs_state, sw_reserved));
	if (boot_cpu_has(X86_FEATURE_XSAVE)) {
		/* PKRU stays as the kernel set it (thread.pkru owns it in 6.1). */
		user = user_features() & ~PKRU_BIT;
		bv = h->xfeatures & user;
		xcomp = x->header.xcomp_bv;
		if (xcomp & XCOMP_BV_COMPACTED_FORMAT)
			bv &= xcomp;	/* XRSTORS faults on a bit outside XCOMP_BV */
		for (i = 2; i < 32; i++) {
			unsigned int dst;

			if (!(bv & BIT_ULL(i)) || !cpu->comp_size[i])
				continue;
			dst = (xcomp & XCOMP_BV_COMPACTED_FORMAT) ?
			      compacted_offset(xcomp, i) : cpu->comp_offset[i];
			if (!dst)
				continue;
			memcpy((u8 *)x + dst, r->im.xsave + cpu->comp_offset[i],
			       cpu->comp_size[i]);
		}
		x->header.xfeatures = (x->header.xfeatures & ~user) | bv;
	}
	/*
	 * kernel_fpu_begin() invalidated only this CPU's registers. If we are
	 * moved back to a CPU that still holds our old registers, the exit to
	 * user space would trust them and skip the reload: invalidate them
	 * everywhere (what fpu_force_restore() does for ptrace).
	 */
	current->thread.fpu.last_cpu = -1;
	kernel_fpu_end();
}
