/* SPDX-License-Identifier: MIT */
/*
 * msg checkpoint image format, version 1 (see docs/image-format.md).
 *
 * Shared by the user-level engine (runtime/ckpt), the restorer
 * (runtime/ckpt/restorer) and the kernel module (kmod/msgmig.ko): plain C,
 * fixed-width fields, little-endian, no pointers, no implicit padding, so a
 * kernel build can include or mirror it unchanged.  Every struct size is
 * pinned by a static assertion at the bottom.
 *
 * Stream = ckpt_file_hdr, then sections until (and including) END:
 *   ckpt_sect_hdr | payload (stored_len bytes) | u32 crc32c(payload)
 * No section ever refers forward or needs seeking.
 */
#ifndef MSG_CKPT_IMAGE_H
#define MSG_CKPT_IMAGE_H

#ifdef __KERNEL__
#include <linux/types.h>
typedef __u8 ckpt_u8;
typedef __u16 ckpt_u16;
typedef __u32 ckpt_u32;
typedef __u64 ckpt_u64;
typedef __s32 ckpt_s32;
#else
#include <stdint.h>
typedef uint8_t ckpt_u8;
typedef uint16_t ckpt_u16;
typedef uint32_t ckpt_u32;
typedef uint64_t ckpt_u64;
typedef int32_t ckpt_s32;
#endif

/* ---- file header ------------------------------------------------------ */

#define CKPT_MAGIC "MSGCKPT\0"        /* 8 bytes, NUL included */
#define CKPT_IMAGE_VERSION 1u
#define CKPT_ARCH_X86_64 62u          /* ELF e_machine EM_X86_64 */
#define CKPT_PAGE_SIZE 4096u
#define CKPT_PATH_MAX 512u            /* fixed path fields, NUL padded */

/* Where the restorer lives; images must not map anything in this range,
 * and the resumed process unmaps it (see resume contract). */
#define CKPT_RESTORER_BASE 0x10000000000ull
#define CKPT_RESTORER_SPAN 0x40000000ull /* 1 GiB */

/* ckpt_file_hdr.flags */
#define CKPT_HF_ORIGIN_KMOD (1u << 0) /* produced by msgmig.ko, not libmsgckpt */
#define CKPT_HF_LIVE (1u << 1)        /* live snapshot: source kept running */
#define CKPT_HF_PRECOPY (1u << 2)     /* pre-copy stream: PRE_VMAS/PRE_PAGES first (§1) */

struct ckpt_file_hdr {
	ckpt_u8 magic[8];      /* CKPT_MAGIC */
	ckpt_u32 version;      /* CKPT_IMAGE_VERSION */
	ckpt_u32 hdr_size;     /* sizeof(struct ckpt_file_hdr) == 64 */
	ckpt_u32 flags;        /* CKPT_HF_* */
	ckpt_u32 page_size;    /* CKPT_PAGE_SIZE */
	ckpt_u32 arch;         /* CKPT_ARCH_X86_64 */
	ckpt_u32 reserved0;    /* 0 */
	ckpt_u64 created_ns;   /* CLOCK_REALTIME, informational */
	ckpt_u64 src_pid;      /* informational */
	ckpt_u8 reserved1[12]; /* 0 */
	ckpt_u32 hdr_crc;      /* crc32c of the 60 bytes above */
};

/* ---- sections --------------------------------------------------------- */

#define CKPT_SECT_MAGIC 0x54434553u /* "SECT" little-endian */

/* Section types, in the order they must appear in the stream.  Every
 * metadata section (IDENT..THREAD) appears exactly once, RUNTIME at most
 * once, then any number of PAGES, then exactly one END.
 * A pre-copy stream (CKPT_HF_PRECOPY) is IDENT CPU MM PRE_VMAS PRE_PAGES*
 * then MM VMAS FILES SIGNALS THREAD [RUNTIME] PAGES* END: the second MM
 * and everything after it describe the process at the final stop. */
enum ckpt_sect_type {
	CKPT_S_IDENT = 1,   /* ckpt_file_ent[]: exe, libraries, mapped files */
	CKPT_S_CPU = 2,     /* struct ckpt_cpu */
	CKPT_S_MM = 3,      /* struct ckpt_mm */
	CKPT_S_VMAS = 4,    /* struct ckpt_vma[] */
	CKPT_S_FILES = 5,   /* struct ckpt_fd[] */
	CKPT_S_SIGNALS = 6, /* struct ckpt_signals */
	CKPT_S_THREAD = 7,  /* struct ckpt_thread + xsave_len bytes of XSAVE */
	CKPT_S_RUNTIME = 8, /* opaque bytes of the runtime (libmsg) state */
	CKPT_S_PAGES = 9,   /* struct ckpt_pages + page data */
	CKPT_S_PRE_VMAS = 10,  /* pre-copy only: ckpt_vma[] of the tracked (anonymous) VMAs */
	CKPT_S_PRE_PAGES = 11, /* pre-copy only: like PAGES, inside PRE_VMAS; later data wins */
	CKPT_S_END = 15,    /* struct ckpt_end */
};

/* ckpt_sect_hdr.flags */
#define CKPT_SF_ZSTD (1u << 0) /* PAGES only: data after ckpt_pages is one zstd frame */

struct ckpt_sect_hdr {
	ckpt_u32 magic;      /* CKPT_SECT_MAGIC */
	ckpt_u32 type;       /* enum ckpt_sect_type */
	ckpt_u32 flags;      /* CKPT_SF_* */
	ckpt_u32 seq;        /* 0 for the first section, +1 for each next one */
	ckpt_u64 stored_len; /* payload bytes that follow this header */
	ckpt_u64 raw_len;    /* payload bytes once decompressed (== stored_len if not) */
	ckpt_u32 reserved;   /* 0 */
	ckpt_u32 hdr_crc;    /* crc32c of the 36 bytes above */
};
/* After the payload: ckpt_u32 crc32c of the stored payload bytes. */

/* Limits a reader enforces (a writer must stay within them). */
#define CKPT_MAX_META_LEN (16u << 20)     /* any non-PAGES payload */
#define CKPT_MAX_PAGES_PER_SECT 2048u      /* 8 MiB of data per PAGES section */
#define CKPT_MAX_VMAS 65536u
#define CKPT_MAX_FILES 4096u
#define CKPT_MAX_FDS 1024u

/* ---- IDENT: identity of every file the image maps (exe first) --------- */

#define CKPT_FE_EXE (1u << 0)    /* the executable (/proc/self/exe) */
#define CKPT_FE_MAPPED (1u << 1) /* referenced by at least one VMA */

struct ckpt_file_ent {
	ckpt_u64 size;     /* st_size, must match on the target */
	ckpt_u64 mtime_ns; /* informational (copies may differ) */
	ckpt_u32 crc32c;   /* crc32c of the whole file content, must match */
	ckpt_u32 flags;    /* CKPT_FE_* */
	ckpt_u32 path_len; /* strlen(path) */
	ckpt_u32 reserved; /* 0 */
	char path[CKPT_PATH_MAX];
};

/* ---- CPU: what the register state needs from the target CPU ----------- */

struct ckpt_cpu {
	ckpt_u64 xcr0;          /* XGETBV(0): enabled XSAVE components; must be equal */
	ckpt_u32 xsave_size;    /* CPUID(0xD,0).EBX: standard-format size; must be equal */
	ckpt_u32 n_comp;        /* number of valid comp_* entries (<= 32) */
	ckpt_u32 comp_offset[32]; /* CPUID(0xD,i).EBX for i < n_comp (i >= 2); must be equal */
	ckpt_u32 comp_size[32];   /* CPUID(0xD,i).EAX */
	/* Feature words: every bit set here must be set on the target. */
	ckpt_u32 cpuid1_ecx, cpuid1_edx;
	ckpt_u32 cpuid7_ebx, cpuid7_ecx, cpuid7_edx;
	ckpt_u32 cpuid_ext1_ecx, cpuid_ext1_edx; /* CPUID(0x80000001) */
	ckpt_u32 cpuid_d1_eax;                    /* CPUID(0xD,1): xsaveopt/xsavec... */
	char vendor[12];                          /* informational */
	ckpt_u32 reserved;
};

/* ---- MM: address-space layout for PR_SET_MM_MAP, cwd, umask, vDSO ----- */

#define CKPT_AUXV_WORDS 128u /* u64 words: (type, value) pairs ending AT_NULL */

struct ckpt_mm {
	ckpt_u64 start_code, end_code, start_data, end_data;
	ckpt_u64 start_brk, brk, start_stack;
	ckpt_u64 arg_start, arg_end, env_start, env_end;
	ckpt_u64 auxv[CKPT_AUXV_WORDS];
	ckpt_u32 auxv_words;   /* used words in auxv[] (even, ends with AT_NULL, 0) */
	ckpt_u32 personality;  /* personality(0xffffffff) */
	ckpt_u32 umask;
	ckpt_u32 vdso_crc;     /* crc32c of the [vdso] bytes: must match the target's */
	ckpt_u64 vdso_size;    /* [vdso] length */
	ckpt_u64 special_start; /* first of [vvar] [vvar_vclock] [vdso] (0 = none) */
	ckpt_u64 special_end;   /* end of the last of them */
	ckpt_u64 vdso_start;    /* [vdso] start; special layout must match the target's */
	char cwd[CKPT_PATH_MAX];
};

/* ---- VMAS: every mapping, in address order ---------------------------- */

#define CKPT_PROT_READ 1u
#define CKPT_PROT_WRITE 2u
#define CKPT_PROT_EXEC 4u

#define CKPT_VMA_ANON (1u << 0)      /* anonymous (incl. [heap], [stack]) */
#define CKPT_VMA_FILE (1u << 1)      /* file-backed: file_idx, pgoff valid */
#define CKPT_VMA_SHARED (1u << 2)    /* MAP_SHARED (read-only file only) */
#define CKPT_VMA_HEAP (1u << 3)      /* [heap] */
#define CKPT_VMA_STACK (1u << 4)     /* [stack] */
#define CKPT_VMA_VDSO (1u << 5)      /* [vdso]: not restored from data, placed */
#define CKPT_VMA_VVAR (1u << 6)      /* [vvar] / [vvar_vclock] */
#define CKPT_VMA_VSYSCALL (1u << 7)  /* [vsyscall]: fixed, ignored */
#define CKPT_VMA_GROWSDOWN (1u << 8) /* informational */
#define CKPT_VMA_PRECOPIED (1u << 9) /* pre-copy: contents = PRE_PAGES data + later PAGES; lies inside PRE_VMAS */
#define CKPT_VMA_LOCKED (1u << 10)   /* mlock'ed: the restorer locks it again (mlock) */

struct ckpt_vma {
	ckpt_u64 start, end; /* page aligned, end exclusive */
	ckpt_u64 pgoff;      /* byte offset in the file (FILE only) */
	ckpt_u32 prot;       /* CKPT_PROT_* as it must be after restore */
	ckpt_u32 flags;      /* CKPT_VMA_* */
	ckpt_s32 file_idx;   /* index into IDENT, -1 if none */
	ckpt_u32 reserved;
};

/* ---- FILES: open descriptors the application owns --------------------- */

enum ckpt_fd_kind {
	CKPT_FD_REG = 1,   /* regular file: reopened by path, offset restored */
	CKPT_FD_DIR = 2,   /* directory: reopened by path */
	CKPT_FD_CHR = 3,   /* character device (e.g. /dev/null): reopened by path */
	CKPT_FD_STDIO = 4, /* fd 0..2: inherited from the restorer, not reopened */
};

struct ckpt_fd {
	ckpt_s32 fd;
	ckpt_u32 kind;       /* enum ckpt_fd_kind */
	ckpt_u32 open_flags; /* F_GETFL: O_ACCMODE | O_APPEND | O_NONBLOCK ... */
	ckpt_u32 fd_flags;   /* F_GETFD: FD_CLOEXEC */
	ckpt_u64 offset;     /* lseek(fd, 0, SEEK_CUR) */
	ckpt_u64 size;       /* st_size at capture, informational */
	ckpt_u32 mode;       /* st_mode */
	ckpt_u32 path_len;
	char path[CKPT_PATH_MAX];
};

/* ---- SIGNALS ---------------------------------------------------------- */

struct ckpt_sigaction { /* the kernel's struct (rt_sigaction), 64-bit mask */
	ckpt_u64 handler, flags, restorer, mask;
};

struct ckpt_itimer { /* struct itimerval */
	ckpt_u64 interval_sec, interval_usec, value_sec, value_usec;
};

struct ckpt_signals {
	struct ckpt_sigaction act[64]; /* act[i] is signal i+1 */
	ckpt_u64 blocked;              /* mask to resume with */
	ckpt_u64 pending;              /* pending at capture: raised again on restore */
	ckpt_u64 altstack_sp;          /* stack_t */
	ckpt_u64 altstack_size;
	ckpt_u32 altstack_flags;
	ckpt_u32 reserved;
	struct ckpt_itimer itimer[3]; /* ITIMER_REAL, ITIMER_VIRTUAL, ITIMER_PROF */
};

/* ---- THREAD: the register state the process resumes with -------------- */

struct ckpt_regs { /* order of the kernel's struct user_regs_struct */
	ckpt_u64 r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8;
	ckpt_u64 rax, rcx, rdx, rsi, rdi, orig_rax, rip, cs, eflags, rsp, ss;
	ckpt_u64 fs_base, gs_base, ds, es, fs, gs;
};

#define CKPT_TH_USER_CAPTURE (1u << 0) /* captured by ckpt_capture/snapshot */

struct ckpt_thread {
	struct ckpt_regs regs;
	ckpt_u64 rseq_addr;       /* 0: not registered */
	ckpt_u32 rseq_len;
	ckpt_u32 rseq_sig;
	ckpt_u64 clear_child_tid; /* set_tid_address() value */
	ckpt_u32 xsave_len;       /* bytes of standard-format XSAVE area that follow */
	ckpt_u32 flags;           /* CKPT_TH_* */
	ckpt_u64 tid;             /* informational */
};

/* ---- PAGES / END ------------------------------------------------------ */

struct ckpt_pages {
	ckpt_u64 addr;   /* page aligned, inside one restored VMA */
	ckpt_u64 npages; /* 1..CKPT_MAX_PAGES_PER_SECT */
};

struct ckpt_end {
	ckpt_u64 n_sections; /* sections before END */
	ckpt_u64 n_pages;    /* pages in all PAGES sections */
	ckpt_u64 stream_bytes; /* bytes from the file header up to this END header */
};

#ifndef __KERNEL__
#ifdef __cplusplus
#define CKPT_SIZE_ASSERT static_assert
#else
#define CKPT_SIZE_ASSERT _Static_assert
#endif
CKPT_SIZE_ASSERT(sizeof(struct ckpt_file_hdr) == 64, "file hdr");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_sect_hdr) == 40, "sect hdr");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_file_ent) == 32 + CKPT_PATH_MAX, "file ent");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_cpu) == 320, "cpu");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_mm) == 88 + 8 * CKPT_AUXV_WORDS + 48 + CKPT_PATH_MAX, "mm");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_vma) == 40, "vma");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_fd) == 40 + CKPT_PATH_MAX, "fd");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_signals) == 64 * 32 + 40 + 96, "signals");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_regs) == 27 * 8, "regs");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_thread) == 27 * 8 + 40, "thread");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_pages) == 16, "pages");
CKPT_SIZE_ASSERT(sizeof(struct ckpt_end) == 24, "end");
#endif

#endif /* MSG_CKPT_IMAGE_H */
