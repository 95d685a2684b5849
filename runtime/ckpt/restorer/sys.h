/* SPDX-License-Identifier: MIT */
/* Raw system calls and the few kernel constants the restorer needs: it
 * runs without libc, and at the end without even its own stack. */
#ifndef MSG_RESTORER_SYS_H
#define MSG_RESTORER_SYS_H

#include <asm/unistd.h>
#include <stddef.h>
#include <stdint.h>

static inline long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#define sys0(n) sys6(n, 0, 0, 0, 0, 0, 0)
#define sys1(n, a) sys6(n, (long)(a), 0, 0, 0, 0, 0)
#define sys2(n, a, b) sys6(n, (long)(a), (long)(b), 0, 0, 0, 0)
#define sys3(n, a, b, c) sys6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define sys4(n, a, b, c, d) sys6(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)
#define sys5(n, a, b, c, d, e) sys6(n, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), 0)

#define R_O_RDONLY 0
#define R_O_WRONLY 1
#define R_O_NOFOLLOW 0400000
#define R_O_CREAT 0100
#define R_O_EXCL 0200
#define R_O_TRUNC 01000
#define R_O_DIRECTORY 0200000
#define R_O_CLOEXEC 02000000
#define R_F_SETFD 2
#define R_F_DUPFD 0
#define R_SEEK_SET 0
#define R_PROT_READ 1
#define R_PROT_WRITE 2
#define R_MAP_SHARED 1
#define R_MAP_PRIVATE 2
#define R_MAP_POPULATE 0x8000
#define R_MAP_FIXED 0x10
#define R_MAP_ANONYMOUS 0x20
#define R_MAP_GROWSDOWN 0x100
#define R_ARCH_SET_GS 0x1001
#define R_ARCH_SET_FS 0x1002
#define R_ARCH_MAP_VDSO_64 0x2003
#define R_PR_SET_MM 35
#define R_PR_SET_MM_MAP 14
#define R_SIG_SETMASK 2
#define R_AT_FDCWD (-100)

struct r_stat { /* x86-64 struct stat */
	uint64_t dev, ino, nlink;
	uint32_t mode, uid, gid, pad0;
	uint64_t rdev;
	int64_t size, blksize, blocks;
	uint64_t atime, atime_ns, mtime, mtime_ns, ctime, ctime_ns;
	int64_t unused[3];
};

struct r_prctl_mm_map {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint64_t auxv;
	uint32_t auxv_size, exe_fd;
};

#endif
