/* Little-endian field access for LAS records (the format is little-endian
 * whatever the host; these also avoid unaligned loads). */
#ifndef LAS_BYTES_H
#define LAS_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t get_u16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get_u64(const unsigned char *p)
{
	return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static inline double get_f64(const unsigned char *p)
{
	uint64_t u = get_u64(p);
	double d;

	memcpy(&d, &u, sizeof d);
	return d;
}

static inline void put_u16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
}

static inline void put_u32(unsigned char *p, uint32_t v)
{
	put_u16(p, (uint16_t)v);
	put_u16(p + 2, (uint16_t)(v >> 16));
}

static inline void put_u64(unsigned char *p, uint64_t v)
{
	put_u32(p, (uint32_t)v);
	put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline void put_f64(unsigned char *p, double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof u);
	put_u64(p, u);
}

#endif
