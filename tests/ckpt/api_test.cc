// SPDX-License-Identifier: MIT
// Library entry points that need no second process: argument checks, error
// names, the checksum, the reader on a hand-made truncated stream.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ckpt.h"
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
