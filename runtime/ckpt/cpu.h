/* SPDX-License-Identifier: MIT */
/* CPU identity for images: what the XSAVE area and the code need.
 * Freestanding (cpuid/xgetbv only): the restorer fills the same struct for
 * the target and compares. */
#ifndef MSG_CKPT_CPU_H
#define MSG_CKPT_CPU_H

#include "image.h"

void ckpt_cpu_probe(struct ckpt_cpu *c);
/* The same, probed once per process (CPUID traps to the hypervisor in a VM:
 * ~6 us each, ~50 us a probe).  ckpt_cpu_forget() after a restore: the
 * process may now run on another CPU. */
void ckpt_cpu_probe_once(struct ckpt_cpu *c);
void ckpt_cpu_forget(void);
/* 1 if the CRC's AVX-512 VPCLMULQDQ path can run on c (probe_once turns
 * it on with this, forget turns it off). */
int ckpt_cpu_has_vcrc(const struct ckpt_cpu *c);
/* 0 if an image taken on `img` can resume on `host`; else CKPT_E_CPU with
 * the cause in what. */
int ckpt_cpu_compat(const struct ckpt_cpu *img, const struct ckpt_cpu *host, char *what, unsigned long cap);

#endif
