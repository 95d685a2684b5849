/* SPDX-License-Identifier: MIT */
/* Entry and exit of the restorer.
 * _start moves onto a stack inside the restorer's own range at once: the
 * kernel-given stack may sit where the image wants its own [stack].
 * r_jump is the resume contract (docs/image-format.md §3): signal mask,
 * XRSTOR, rflags, all general registers, rsp, then jump to rip. */
#define R15 0
#define R14 8
#define R13 16
#define R12 24
#define RBP 32
#define RBX 40
#define R11 48
#define R10 56
#define R9 64
#define R8 72
#define RAX 80
#define RCX 88
#define RDX 96
#define RSI 104
#define RDI 112
#define RIP 128
#define EFLAGS 144
#define RSP 152

	.text
	.globl _start
	.type _start, @function
_start:
	movq %rsp, %rdi
	leaq r_stack_top(%rip), %rsp
	xorl %ebp, %ebp
	call restorer_main
	hlt
	.size _start, .-_start

	/* void r_jump(const struct ckpt_regs *r, const void *xsave,
	 *             uint64_t rfbm, const uint64_t *sigmask) */
	.globl r_jump
	.type r_jump, @function
r_jump:
	movq %rdi, %r12
	movq %rsi, %r13
	movq %rdx, %r14
	movl $14, %eax          /* rt_sigprocmask(SIG_SETMASK, sigmask, 0, 8) */
	movl $2, %edi
	movq %rcx, %rsi
	xorl %edx, %edx
	movl $8, %r10d
	syscall
	movq %r14, %rax
	movq %r14, %rdx
	shrq $32, %rdx
	xrstor64 (%r13)
	movq RIP(%r12), %rax
	movq %rax, r_jump_rip(%rip)
	pushq EFLAGS(%r12)
	popfq
	movq R15(%r12), %r15
	movq R14(%r12), %r14
	movq R13(%r12), %r13
	movq RBP(%r12), %rbp
	movq RBX(%r12), %rbx
	movq R11(%r12), %r11
	movq R10(%r12), %r10
	movq R9(%r12), %r9
	movq R8(%r12), %r8
	movq RAX(%r12), %rax
	movq RCX(%r12), %rcx
	movq RDX(%r12), %rdx
	movq RSI(%r12), %rsi
	movq RDI(%r12), %rdi
	movq RSP(%r12), %rsp
	movq R12(%r12), %r12
	jmp *r_jump_rip(%rip)
	.size r_jump, .-r_jump

	.data
	.balign 8
r_jump_rip:
	.quad 0

	.bss
	.balign 64
r_stack:
	.skip 1 << 20
r_stack_top:

	.section .note.GNU-stack,"",@progbits
