// SPDX-License-Identifier: MIT
// Library entry points that need no second process: argument checks, error
// names, the checksum, the reader on a hand-made truncated stream.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ckpt.h"
extern "C" {
#include "cpu.h" // C header without its own extern "C"
}
#include "crc32c.h"
#include "image_reader.h"

TEST(Api, CaptureRejectsBadArguments)
{
	ckpt_error e;
	EXPECT_EQ(ckpt_capture(-1, nullptr, &e), CKPT_E_INVAL);
	EXPECT_EQ(e.code, CKPT_E_INVAL);
	ckpt_opts o;
	memset(&o, 0, sizeof(o));
	o.n_exclude_fds = 17;
	EXPECT_EQ(ckpt_capture(1, &o, &e), CKPT_E_INVAL);
	EXPECT_EQ(ckpt_snapshot_live(-1, nullptr, &e), CKPT_E_INVAL);
	EXPECT_EQ(ckpt_snapshot_wait(&e), 0); // nothing running
}

TEST(Api, PrecopyCallsNeedABegin)
{
	ckpt_error e;
	EXPECT_EQ(ckpt_precopy_step(4096, &e), CKPT_E_INVAL);
	EXPECT_EQ(ckpt_precopy_finish(nullptr, &e), CKPT_E_INVAL);
	ckpt_precopy_abort(); // harmless
}

TEST(Api, ErrorNamesAndTexts)
{
	EXPECT_STREQ(ckpt_err_name(CKPT_E_CHECKSUM), "CKPT_E_CHECKSUM");
	EXPECT_STREQ(ckpt_err_name(CKPT_RESTORED), "CKPT_RESTORED");
	EXPECT_STREQ(ckpt_err_name(-999), "CKPT_E_UNKNOWN");
	for (int c = CKPT_E_KERNEL; c <= CKPT_RESTORED; c++)
		EXPECT_GT(strlen(ckpt_strerror(c)), 0u);
}

TEST(Api, Crc32cIsCastagnoli)
{
	EXPECT_EQ(ckpt_crc32c(0, "123456789", 9), 0xE3069283u);
	std::string big(100000, 'x');
	uint32_t whole = ckpt_crc32c(0, big.data(), big.size());
	uint32_t parts = ckpt_crc32c(ckpt_crc32c(0, big.data(), 777), big.data() + 777, big.size() - 777);
	EXPECT_EQ(whole, parts);
	// Against a bitwise reference (the fast path joins three streams with tables).
	for (size_t i = 0; i < big.size(); i++)
		big[i] = (char)(i * 131 + (i >> 7));
	uint32_t ref = 0xFFFFFFFFu;
	for (unsigned char ch : big) {
		ref ^= ch;
		for (int k = 0; k < 8; k++)
			ref = (ref >> 1) ^ (0x82F63B78u & (0u - (ref & 1u)));
	}
	EXPECT_EQ(ckpt_crc32c(0, big.data(), big.size()), ~ref);
}

// The VPCLMULQDQ fold against the crc32-instruction path: every length
// around its 256-byte blocks and 1 KiB threshold, odd offsets, chained.
TEST(Api, Crc32cVectorPathAgrees)
{
	ckpt_cpu host;
	ckpt_cpu_probe_once(&host);
	if (!ckpt_cpu_has_vcrc(&host))
		GTEST_SKIP() << "no AVX-512 VPCLMULQDQ on this CPU";
	std::string big(300000, 0);
	uint64_t x = 88172645463325252ull;
	for (char &ch : big) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		ch = (char)x;
	}
	size_t lens[] = { 1023, 1024, 1025, 1279, 1280, 1281, 2047, 4096, 4100, 65536 + 77, big.size() - 9 };
	int bad = 0;
	for (size_t len : lens)
		for (size_t off = 0; off < 9; off++)
			for (uint32_t seed : { 0u, 0x12345678u }) {
				ckpt_crc32c_set_vector(0);
				uint32_t a = ckpt_crc32c(seed, big.data() + off, len);
				ckpt_crc32c_set_vector(1);
				uint32_t b = ckpt_crc32c(seed, big.data() + off, len);
				bad += a != b;
			}
	for (size_t len = 1000; len < 3000; len += 7) {
		ckpt_crc32c_set_vector(0);
		uint32_t a = ckpt_crc32c(ckpt_crc32c(0, big.data(), len), big.data() + len, 5000);
		ckpt_crc32c_set_vector(1);
		uint32_t b = ckpt_crc32c(ckpt_crc32c(0, big.data(), len), big.data() + len, 5000);
		bad += a != b;
	}
	EXPECT_EQ(bad, 0);
	big.assign(4096, 'x');
	big[4000] ^= 1; // one flipped bit changes the vector path's result too
	uint32_t flipped = ckpt_crc32c(0, big.data(), big.size());
	big[4000] ^= 1;
	EXPECT_NE(flipped, ckpt_crc32c(0, big.data(), big.size()));
	ckpt_crc32c_set_vector(1);
}

struct Mem {
	const char *p;
	size_t n, at;
};

static long mem_read(void *ctx, void *buf, size_t n)
{
	Mem *m = static_cast<Mem *>(ctx);
	n = std::min(n, m->n - m->at);
	memcpy(buf, m->p + m->at, n);
	m->at += n;
	return (long)n;
}

TEST(Api, ReaderReportsTruncationAndMagic)
{
	ckpt_file_hdr h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CKPT_MAGIC, 8);
	h.version = CKPT_IMAGE_VERSION;
	h.hdr_size = sizeof(h);
	h.page_size = CKPT_PAGE_SIZE;
	h.arch = CKPT_ARCH_X86_64;
	h.hdr_crc = ckpt_crc32c(0, &h, 60);
	static char buf[1 << 16];
	ckpt_meta m;
	for (int bad_magic : { 0, 1 }) {
		ckpt_file_hdr copy = h;
		if (bad_magic)
			copy.magic[0] = 'm';
		Mem mem = { reinterpret_cast<const char *>(&copy), sizeof(copy), 0 };
		ckpt_rd rd;
		ckpt_rd_init(&rd, mem_read, &mem);
		EXPECT_EQ(ckpt_read_meta(&rd, &m, buf, sizeof(buf)), bad_magic ? CKPT_E_MAGIC : CKPT_E_TRUNCATED)
			<< rd.what;
	}
}
