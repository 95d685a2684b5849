/* SPDX-License-Identifier: MIT */
#include "cpu.h"

#include "ckpt.h"
#include "crc32c.h"
#include "fmt.h"

static void cpuid(unsigned leaf, unsigned sub, unsigned r[4])
{
	__asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static unsigned long long xgetbv0(void)
{
	unsigned lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((unsigned long long)hi << 32) | lo;
}

void ckpt_cpu_probe(struct ckpt_cpu *c)
{
	unsigned r[4];
	unsigned char *z = (unsigned char *)c;
	for (unsigned i = 0; i < sizeof(*c); i++)
		z[i] = 0;
	cpuid(0, 0, r);
	unsigned maxleaf = r[0];
	unsigned *v = (unsigned *)(void *)c->vendor;
	v[0] = r[1], v[1] = r[3], v[2] = r[2];
	cpuid(1, 0, r);
	c->cpuid1_ecx = r[2];
	c->cpuid1_edx = r[3];
	if (maxleaf >= 7) {
		cpuid(7, 0, r);
		c->cpuid7_ebx = r[1], c->cpuid7_ecx = r[2], c->cpuid7_edx = r[3];
	}
	cpuid(0x80000001, 0, r);
	c->cpuid_ext1_ecx = r[2], c->cpuid_ext1_edx = r[3];
	if (!(c->cpuid1_ecx & (1u << 27)) || maxleaf < 0xd) /* no OSXSAVE */
		return;
	c->xcr0 = xgetbv0();
	cpuid(0xd, 0, r);
	c->xsave_size = r[1];
	cpuid(0xd, 1, r);
	c->cpuid_d1_eax = r[0];
	c->n_comp = 32;
	for (unsigned i = 2; i < 32; i++) {
		if (!(c->xcr0 & (1ull << i)))
			continue;
		cpuid(0xd, i, r);
		c->comp_size[i] = r[0];
		c->comp_offset[i] = r[1];
	}
}

static struct ckpt_cpu g_probed;
static int g_have_probed;

int ckpt_cpu_has_vcrc(const struct ckpt_cpu *c)
{
	const unsigned ecx1 = 1u << 1 | 1u << 20 | 1u << 27;  /* PCLMULQDQ, SSE4.2, OSXSAVE */
	const unsigned ebx7 = 1u << 5 | 1u << 16 | 1u << 31; /* AVX2, AVX512F, AVX512VL */
	return (c->cpuid1_ecx & ecx1) == ecx1 && (c->cpuid7_ebx & ebx7) == ebx7 &&
	       (c->cpuid7_ecx & (1u << 10)) /* VPCLMULQDQ */ && (c->xcr0 & 0xe6) == 0xe6; /* SSE, AVX, ZMM state */
}

void ckpt_cpu_probe_once(struct ckpt_cpu *c)
{
	if (!g_have_probed) {
		ckpt_cpu_probe(&g_probed);
		g_have_probed = 1;
		ckpt_crc32c_set_vector(ckpt_cpu_has_vcrc(&g_probed));
	}
	*c = g_probed;
}

void ckpt_cpu_forget(void)
{
	g_have_probed = 0;
	ckpt_crc32c_set_vector(0); /* until this host is probed */
}

static int missing_bit(const unsigned *img, const unsigned *host, unsigned *bit)
{
	unsigned m = *img & ~*host;
	if (!m)
		return 0;
	*bit = (unsigned)__builtin_ctz(m);
	return 1;
}

int ckpt_cpu_compat(const struct ckpt_cpu *img, const struct ckpt_cpu *host, char *what, unsigned long cap)
{
	const struct {
		const char *name;
		const unsigned *a, *b;
	} w[] = {
		{ "cpuid(1).ecx", &img->cpuid1_ecx, &host->cpuid1_ecx },
		{ "cpuid(1).edx", &img->cpuid1_edx, &host->cpuid1_edx },
		{ "cpuid(7).ebx", &img->cpuid7_ebx, &host->cpuid7_ebx },
		{ "cpuid(7).ecx", &img->cpuid7_ecx, &host->cpuid7_ecx },
		{ "cpuid(7).edx", &img->cpuid7_edx, &host->cpuid7_edx },
		{ "cpuid(0x80000001).ecx", &img->cpuid_ext1_ecx, &host->cpuid_ext1_ecx },
		{ "cpuid(0x80000001).edx", &img->cpuid_ext1_edx, &host->cpuid_ext1_edx },
		{ "cpuid(0xd,1).eax", &img->cpuid_d1_eax, &host->cpuid_d1_eax },
	};
	if (img->xcr0 != host->xcr0) {
		ckpt_fmt(what, cap, "XCR0 differs: image %llx, host %llx", (unsigned long long)img->xcr0,
			 (unsigned long long)host->xcr0);
		return CKPT_E_CPU;
	}
	if (img->xsave_size != host->xsave_size) {
		ckpt_fmt(what, cap, "XSAVE size differs: image %u, host %u", img->xsave_size, host->xsave_size);
		return CKPT_E_CPU;
	}
	for (unsigned i = 2; i < 32; i++)
		if (img->comp_offset[i] != host->comp_offset[i] || img->comp_size[i] != host->comp_size[i]) {
			ckpt_fmt(what, cap, "XSAVE component %u layout differs", i);
			return CKPT_E_CPU;
		}
	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		unsigned bit;
		if (missing_bit(w[i].a, w[i].b, &bit)) {
			ckpt_fmt(what, cap, "CPU feature %s bit %u missing on this host", w[i].name, bit);
			return CKPT_E_CPU;
		}
	}
	return 0;
}
