/* SPDX-License-Identifier: MIT */
/* CRC-32C (Castagnoli), the image checksum. Freestanding: used by the
 * library, the restorer and the fuzzer. */
#ifndef MSG_CKPT_CRC32C_H
#define MSG_CKPT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Continue a CRC: start with crc = 0; the result is the final CRC-32C. */
uint32_t ckpt_crc32c(uint32_t crc, const void *buf, size_t len);
/* 1: use the AVX-512 VPCLMULQDQ path (the caller checked the CPU: the CPU
 * probe does, see ckpt_cpu_has_vcrc); 0: the crc32 instruction only. */
void ckpt_crc32c_set_vector(int on);

#ifdef __cplusplus
}
#endif

#endif
