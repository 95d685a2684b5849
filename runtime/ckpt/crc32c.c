/* SPDX-License-Identifier: MIT */
/* CRC-32C with the SSE4.2 crc32 instruction, three streams at once: the
 * image checksum must keep up with page streams at memcpy speed.  Raw CRC
 * state is linear, so the streams are joined with "append L zero bytes"
 * tables (shift_256, shift_512) built once. */
#include "crc32c.h"

#define BLK 256

static uint32_t sh256[4][256], sh512[4][256];
static int sh_ready;

__attribute__((target("sse4.2"))) static uint32_t raw_zeros(uint32_t s, unsigned n)
{
	uint64_t c = s;
	for (unsigned i = 0; i < n / 8; i++)
		c = __builtin_ia32_crc32di(c, 0);
	return (uint32_t)c;
}

/* Shifting is linear over GF(2): the CRC of the 8 single bits of each byte
 * position gives every entry by XOR (64 shifts instead of 2048; this ran in
 * every capture and every restorer). */
static void sh_init(void)
{
	for (int j = 0; j < 4; j++) {
		uint32_t b256[8], b512[8];
		for (int k = 0; k < 8; k++) {
			b256[k] = raw_zeros(1u << (8 * j + k), BLK);
			b512[k] = raw_zeros(1u << (8 * j + k), 2 * BLK);
		}
		for (uint32_t v = 0; v < 256; v++) {
			uint32_t a = 0, b = 0;
			for (int k = 0; k < 8; k++)
				if (v & (1u << k))
					a ^= b256[k], b ^= b512[k];
			sh256[j][v] = a;
			sh512[j][v] = b;
		}
	}
	sh_ready = 1;
}

static uint32_t shift(uint32_t t[4][256], uint32_t s)
{
	return t[0][s & 0xff] ^ t[1][(s >> 8) & 0xff] ^ t[2][(s >> 16) & 0xff] ^ t[3][s >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t raw_crc(uint32_t s, const unsigned char *p, size_t n)
{
	uint64_t c = s;
	while (n && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		n--;
	}
	if (n >= 3 * BLK && !sh_ready)
		sh_init();
	while (n >= 3 * BLK) {
		uint64_t a = c, b = 0, d = 0;
		const uint64_t *q = (const uint64_t *)(const void *)p;
		for (int i = 0; i < BLK / 8; i++) {
			a = __builtin_ia32_crc32di(a, q[i]);
			b = __builtin_ia32_crc32di(b, q[i + BLK / 8]);
			d = __builtin_ia32_crc32di(d, q[i + 2 * BLK / 8]);
		}
		c = shift(sh512, (uint32_t)a) ^ shift(sh256, (uint32_t)b) ^ (uint32_t)d;
		p += 3 * BLK;
		n -= 3 * BLK;
	}
	while (n >= 8) {
		c = __builtin_ia32_crc32di(c, *(const uint64_t *)(const void *)p);
		p += 8;
		n -= 8;
	}
	while (n--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}

uint32_t ckpt_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return ~raw_crc(~crc, (const unsigned char *)buf, len);
}
