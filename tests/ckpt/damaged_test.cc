// SPDX-License-Identifier: MIT
// Acceptance 3 (damaged images and mismatches): each case makes msg-restore
// fail with its specific error, before the image's code ever runs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include "ckpt.h"
extern "C" {
#include "cpu.h" // C header without its own extern "C"
}
#include "crc32c.h"
#include "image.h"
#include "util.h"

using namespace ckpt_test;

namespace {

// Rewrites one section's payload in place and fixes its checksum, so only
// the semantic check can catch the change.
void patch_section(std::string &img, uint32_t type, const std::function<void(char *, size_t)> &fn)
{
	size_t off = sizeof(ckpt_file_hdr);
	while (off + sizeof(ckpt_sect_hdr) <= img.size()) {
		ckpt_sect_hdr h;
		memcpy(&h, img.data() + off, sizeof(h));
		char *payload = &img[off + sizeof(h)];
		if (h.type == type) {
			fn(payload, h.stored_len);
			uint32_t crc = ckpt_crc32c(0, payload, h.stored_len);
			memcpy(payload + h.stored_len, &crc, 4);
			return;
		}
		if (h.type == CKPT_S_END)
			break;
		off += sizeof(h) + h.stored_len + 4;
	}
	FAIL() << "section " << type << " not found";
}

// Payloads in the stream are unaligned: edit a copy.
template <typename T> void edit(char *p, const std::function<void(T &)> &fn)
{
	T v;
	memcpy(&v, p, sizeof(v));
	fn(v);
	memcpy(p, &v, sizeof(v));
}

struct Damaged : ::testing::Test {
	TmpDir dir;
	std::string image, good;
	int captured_pid = -1;

	void SetUp() override
	{
		image = dir.path + "/image";
		capture(bin("ckpt_t_loop"));
	}
	void capture(const std::string &exe)
	{
		Result c = run(
			{ exe, "capture", image, "2" }, dir.path, 30000,
			[](const std::string &e) { return e.find("CAPTURED ") != std::string::npos; });
		captured_pid = pid_after(c.err, "CAPTURED");
		ASSERT_GT(captured_pid, 0) << c.err;
		good = read_file(image);
		ASSERT_GT(good.size(), 2u << 20);
	}
	// Restores `img`; expects exit status -code and the error name on stderr.
	void expect_error(const std::string &img, int code, const char *name, const char *what = "")
	{
		write_file(image, img);
		for (bool check_only : { true, false }) {
			std::vector<std::string> a = { restorer(), image };
			if (check_only)
				a.insert(a.begin() + 1, "--check-only");
			Result r = run(a, "/", 30000);
			EXPECT_EQ(r.exit_code(), -code) << r.err;
			EXPECT_NE(r.err.find(std::string("msg-restore: ") + name + ": "), std::string::npos) << r.err;
			EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
			EXPECT_EQ(r.out, "") << "a damaged image must never run";
		}
	}
};

} // namespace

TEST_F(Damaged, IntactImageRestores)
{
	Result r = run({ restorer(), image }, "/", 30000);
	ASSERT_TRUE(r.exited_ok()) << r.err;
	EXPECT_EQ(r.out.rfind("loop 2 ", 0), 0u);
}

TEST_F(Damaged, TruncatedInPages) { expect_error(good.substr(0, good.size() / 2), CKPT_E_TRUNCATED, "CKPT_E_TRUNCATED"); }
TEST_F(Damaged, TruncatedInHeader) { expect_error(good.substr(0, 10), CKPT_E_TRUNCATED, "CKPT_E_TRUNCATED"); }
TEST_F(Damaged, TruncatedBeforeEnd) { expect_error(good.substr(0, good.size() - 3), CKPT_E_TRUNCATED, "CKPT_E_TRUNCATED"); }

TEST_F(Damaged, BitFlippedPageData)
{
	std::string img = good;
	img[img.size() - 5000] ^= 0x10;
	expect_error(img, CKPT_E_CHECKSUM, "CKPT_E_CHECKSUM", "payload checksum mismatch");
}

TEST_F(Damaged, BitFlippedMetadata)
{
	std::string img = good;
	img[sizeof(ckpt_file_hdr) + sizeof(ckpt_sect_hdr) + 40] ^= 0x01; // inside IDENT
	expect_error(img, CKPT_E_CHECKSUM, "CKPT_E_CHECKSUM", "section 0");
}

TEST_F(Damaged, BitFlippedSectionHeader)
{
	std::string img = good;
	img[sizeof(ckpt_file_hdr) + 9] ^= 0x04;
	expect_error(img, CKPT_E_CHECKSUM, "CKPT_E_CHECKSUM", "header checksum");
}

TEST_F(Damaged, NotAnImage)
{
	std::string img = good;
	img[0] = 'X';
	expect_error(img, CKPT_E_MAGIC, "CKPT_E_MAGIC");
}

TEST_F(Damaged, WrongVersion)
{
	std::string img = good;
	ckpt_file_hdr h;
	memcpy(&h, img.data(), sizeof(h));
	h.version = CKPT_IMAGE_VERSION + 1;
	h.hdr_crc = ckpt_crc32c(0, &h, 60);
	memcpy(&img[0], &h, sizeof(h));
	expect_error(img, CKPT_E_VERSION, "CKPT_E_VERSION", "image version 2");
}

TEST_F(Damaged, OtherVdso)
{
	std::string img = good;
	patch_section(img, CKPT_S_MM, [](char *p, size_t) { edit<ckpt_mm>(p, [](ckpt_mm &m) { m.vdso_crc ^= 1; }); });
	expect_error(img, CKPT_E_VDSO, "CKPT_E_VDSO", "vDSO differs");
}

TEST_F(Damaged, OtherLibrary)
{
	std::string img = good;
	std::string lib;
	patch_section(img, CKPT_S_IDENT, [&](char *p, size_t n) {
		for (size_t i = 0; i < n / sizeof(ckpt_file_ent); i++)
			edit<ckpt_file_ent>(p + i * sizeof(ckpt_file_ent), [&](ckpt_file_ent &f) {
				if (strstr(f.path, "libc.so")) {
					f.crc32c ^= 1;
					lib = f.path;
				}
			});
	});
	ASSERT_FALSE(lib.empty());
	expect_error(img, CKPT_E_LIB, "CKPT_E_LIB", lib.c_str());
}

TEST_F(Damaged, OtherCpu)
{
	// A feature bit this host lacks (bit 31, AVX512VL, was one until a
	// host had it: the image then restored and the test failed).
	ckpt_cpu host;
	ckpt_cpu_probe(&host);
	ASSERT_NE(~host.cpuid7_ebx, 0u);
	unsigned bit = (unsigned)__builtin_ctz(~host.cpuid7_ebx);
	std::string img = good;
	patch_section(img, CKPT_S_CPU, [bit](char *p, size_t) { edit<ckpt_cpu>(p, [bit](ckpt_cpu &c) { c.cpuid7_ebx |= 1u << bit; }); });
	expect_error(img, CKPT_E_CPU, "CKPT_E_CPU", ("cpuid(7).ebx bit " + std::to_string(bit) + " ").c_str());
}

TEST_F(Damaged, OtherExecutable)
{
	// A real other executable: capture from a copy, then change the copy.
	std::string exe = dir.path + "/t_loop_copy";
	std::filesystem::copy_file(bin("ckpt_t_loop"), exe);
	std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
	capture(exe);
	write_file(exe, read_file(exe) + "x");
	std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
	expect_error(good, CKPT_E_EXE, "CKPT_E_EXE", exe.c_str());
}

TEST_F(Damaged, MissingOpenFile)
{
	// t_files keeps input.dat open: without it the restore must name it.
	Result c = run(
		{ bin("ckpt_t_files"), "capture", image }, dir.path, 30000,
		[](const std::string &e) { return e.find("CAPTURED ") != std::string::npos; });
	ASSERT_GT(pid_after(c.err, "CAPTURED"), 0) << c.err;
	std::filesystem::remove(dir.path + "/input.dat");
	Result r = run({ restorer(), image }, "/", 30000);
	EXPECT_EQ(r.exit_code(), -CKPT_E_FILE) << r.err;
	EXPECT_NE(r.err.find("input.dat"), std::string::npos) << r.err;
	EXPECT_EQ(r.out, "");
}
