/* SPDX-License-Identifier: MIT */
/* int ckpt_arch_save(struct ckpt_regs *r, void *xsave, uint64_t xcr0)
 * Like setjmp: records the state in which the caller resumes after a
 * restore (docs/image-format.md §3): callee-saved registers, rsp after
 * return, rip = return address, rax = 1 (CKPT_RESTORED), rflags, and the
 * XSAVE area (x87 CW, MXCSR, vector registers).  Returns 0 now. */
#define R15 0
#define R14 8
#define R13 16
#define R12 24
#define RBP 32
#define RBX 40
#define RAX 80
#define RIP 128
#define EFLAGS 144
#define RSP 152

	.text
	.globl ckpt_arch_save
	.type ckpt_arch_save, @function
ckpt_arch_save:
	movq %r15, R15(%rdi)
	movq %r14, R14(%rdi)
	movq %r13, R13(%rdi)
	movq %r12, R12(%rdi)
	movq %rbp, RBP(%rdi)
	movq %rbx, RBX(%rdi)
	leaq 8(%rsp), %rax
	movq %rax, RSP(%rdi)
	movq (%rsp), %rax
	movq %rax, RIP(%rdi)
	movq $1, RAX(%rdi)
	pushfq
	popq %rax
	movq %rax, EFLAGS(%rdi)
	movq %rdx, %rax
	shrq $32, %rdx
	xsave64 (%rsi)
	xorl %eax, %eax
	ret
	.size ckpt_arch_save, .-ckpt_arch_save
	.section .note.GNU-stack,"",@progbits
