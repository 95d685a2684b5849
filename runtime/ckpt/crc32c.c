/* SPDX-License-Identifier: MIT */
/* CRC-32C with the SSE4.2 crc32 instruction, three streams at once: the
 * image checksum must keep up with page streams at memcpy speed.  Raw CRC
 * state is linear, so the streams are joined with "append L zero bytes"
 * tables (shift_256, shift_512) built once. */
#include <immintrin.h>

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

/* AVX-512 VPCLMULQDQ: carry-less multiplication folds 16 lanes of 16 bytes
 * forward by 256 bytes at a time (2 multiplies per 64 bytes); the crc32
 * instruction is bound at 8 bytes a cycle (48 us for a 1.16 MiB image here,
 * 15 with this, on each side).  Same CRC, same image.  Constants: for a
 * lane moved D bits on, its low qword (earlier bytes) is multiplied by
 * x^(D+31) mod P and its high one by x^(D-33) mod P, bit-reflected (the
 * -33: a reflected clmul product is one bit short, and 32 for the CRC's
 * x^32).  Off until the CPU probe says the host has it (cpu.c). */
static int vec_on;

void ckpt_crc32c_set_vector(int on)
{
	vec_on = on;
}

#define VT __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.2")))

static inline VT __m512i vfold(__m512i x, __m512i k, __m512i d)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11),
					 d, 0x96);
}

/* n >= 256: consumes whole 256-byte blocks, returns the raw state. */
static VT uint32_t vec_crc(uint32_t c, const unsigned char **pp, size_t *np)
{
	const unsigned char *p = *pp;
	size_t n = *np;
	__m512i x0 = _mm512_loadu_si512(p), x1 = _mm512_loadu_si512(p + 64), x2 = _mm512_loadu_si512(p + 128),
		x3 = _mm512_loadu_si512(p + 192);
	x0 = _mm512_xor_si512(x0, _mm512_castsi128_si512(_mm_cvtsi32_si128((int)c)));
	p += 256, n -= 256;
	const __m512i k = _mm512_broadcast_i32x4(_mm_setr_epi32((int)0xdcb17aa4, 0, (int)0xb9e02b86, 0)); /* D 2048 */
	while (n >= 256) {
		x0 = vfold(x0, k, _mm512_loadu_si512(p));
		x1 = vfold(x1, k, _mm512_loadu_si512(p + 64));
		x2 = vfold(x2, k, _mm512_loadu_si512(p + 128));
		x3 = vfold(x3, k, _mm512_loadu_si512(p + 192));
		p += 256, n -= 256;
	}
	const __m512i k1 = _mm512_broadcast_i32x4(_mm_setr_epi32(0x740eef02, 0, (int)0x9e4addf8, 0)); /* D 512 */
	x1 = vfold(x0, k1, x1);
	x2 = vfold(x1, k1, x2);
	x3 = vfold(x2, k1, x3);
	/* lanes 0-2 of x3 onto lane 3: D 384, 256, 128 */
	const __m512i k2 = _mm512_setr_epi32(0x1c291d04, 0, (int)0xddc0152b, 0, 0x3da6d0cb, 0, (int)0xba4fc28e, 0,
					     (int)0xf20c0dfe, 0, 0x493c7d27, 0, 0, 0, 0, 0);
	__m512i t = vfold(x3, k2, _mm512_maskz_mov_epi64(0xc0, x3));
	__m256i h = _mm256_xor_si256(_mm512_castsi512_si256(t), _mm512_extracti64x4_epi64(t, 1));
	__m128i a = _mm_xor_si128(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
	/* the last 128 bits times x^32 mod P is their CRC from state 0 */
	uint64_t r = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(a));
	r = _mm_crc32_u64(r, (uint64_t)_mm_extract_epi64(a, 1));
	*pp = p, *np = n;
	return (uint32_t)r;
}

__attribute__((target("sse4.2"))) static uint32_t raw_crc(uint32_t s, const unsigned char *p, size_t n)
{
	uint64_t c = s;
	while (n && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		n--;
	}
	if (vec_on && n >= 1024) /* small pieces (headers) stay off the wide unit */
		c = vec_crc((uint32_t)c, &p, &n);
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
