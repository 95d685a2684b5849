// Wire codec (runtime/wire/frame.c): every frame type round-trips; every
// truncation and bit flip of an encoded frame is rejected or decodes to a
// valid frame; lengths, magic, version, type and trailing bytes are bounded.
// Bodies are decoded from exactly-sized heap copies so that the sanitizer
// build catches any read past the end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

extern "C" {
#include "frame_samples.h"
#include "wire/frame.h"
}

namespace {

using Bytes = std::vector<uint8_t>;

std::vector<frame> Samples()
{
	std::vector<frame> v(64);
	v.resize(frame_samples(v.data(), v.size()));
	return v;
}

Bytes Encode(const frame &f)
{
	long n = frame_encode(&f, nullptr, 0);
	EXPECT_GT(n, 0) << frame_type_name(f.h.type);
	if (n <= 0)
		return {};
	Bytes b((size_t)n);
	EXPECT_EQ(frame_encode(&f, b.data(), b.size()), n);
	return b;
}

// Decode header + body from an exact-size copy. Returns FE_* and fills f.
int Decode(const Bytes &b, frame *f)
{
	frame_hdr h{};
	int err = frame_decode_hdr(b.data(), b.size(), &h);
	if (err)
		return err;
	if (b.size() < FRAME_HDR_LEN + (size_t)h.len)
		return FE_SHORT;
	Bytes body(b.begin() + FRAME_HDR_LEN, b.begin() + FRAME_HDR_LEN + h.len);
	// the decoder must not rely on bytes past h.len: hand it a buffer of
	// exactly that size (OUTPUT/STDIN keep pointers, so keep body alive)
	static std::vector<Bytes> keep;
	keep.push_back(std::move(body));
	return frame_decode_body(&h, keep.back().data(), f);
}

void PutLen(Bytes &b, uint32_t len)
{
	for (int i = 0; i < 4; i++)
		b[8 + i] = (uint8_t)(len >> (8 * i));
}

} // namespace

TEST(Wire, SamplesCoverEveryFrameType)
{
	std::set<int> have;
	for (const frame &f : Samples())
		have.insert(f.h.type);
	for (int t = 1; t < FRAME_TYPE_MAX; t++)
		if (strcmp(frame_type_name(t), "UNKNOWN")) {
			EXPECT_TRUE(have.count(t)) << "no sample for " << frame_type_name(t);
		}
}

TEST(Wire, RoundTripEveryType)
{
	for (const frame &f : Samples()) {
		SCOPED_TRACE(frame_type_name(f.h.type));
		Bytes b = Encode(f);
		ASSERT_GE(b.size(), (size_t)FRAME_HDR_LEN);
		EXPECT_EQ(b.size() - FRAME_HDR_LEN, (size_t)(frame_encode(&f, nullptr, 0) - FRAME_HDR_LEN));
		frame d;
		ASSERT_EQ(Decode(b, &d), FE_OK);
		EXPECT_EQ(d.h.type, f.h.type);
		EXPECT_EQ(d.h.len, b.size() - FRAME_HDR_LEN);
		EXPECT_EQ(frame_payload_len(&d), frame_payload_len(&f));
		// one layout function: re-encoding the decoded frame gives the same bytes
		EXPECT_EQ(Encode(d), b);
		frame_release(&d);
	}
}

TEST(Wire, RoundTripFieldValues)
{
	for (const frame &f : Samples()) {
		frame d;
		ASSERT_EQ(Decode(Encode(f), &d), FE_OK);
		switch (f.h.type) {
		case F_DATA:
			EXPECT_EQ(d.u.data.src, 1u);
			EXPECT_EQ(d.u.data.dst, 2u);
			EXPECT_EQ(d.u.data.src_rep, 1);
			EXPECT_EQ(d.u.data.dst_rep, 2);
			EXPECT_EQ(d.u.data.src_inc, 7u);
			EXPECT_EQ(d.u.data.seq, 5u);
			EXPECT_EQ(d.u.data.tag, 11);
			EXPECT_EQ(d.u.data.total, 100u);
			EXPECT_EQ(d.u.data.off, 40u);
			EXPECT_EQ(d.u.data.chunk, 24u);
			break;
		case F_JOB_START:
			ASSERT_EQ(d.u.job_start.n_hosts, 3u);
			EXPECT_STREQ(d.u.job_start.hosts[1], "127.0.0.2:7421");
			ASSERT_EQ(d.u.job_start.argc, 3u);
			EXPECT_STREQ(d.u.job_start.argv[2], "42");
			EXPECT_EQ(d.u.job_start.argv[3], nullptr); // execve wants a NULL end
			ASSERT_EQ(d.u.job_start.envc, 2u);
			EXPECT_STREQ(d.u.job_start.envp[1], "MSG_FD=3");
			EXPECT_STREQ(d.u.job_start.jobdir, "/tmp/msg-job");
			EXPECT_STREQ(d.u.job_start.keepdir, "/tmp/msg-fenced");
			EXPECT_EQ(d.u.job_start.mode, CMP_VOTE);
			break;
		case F_OUTPUT:
			ASSERT_EQ(d.u.output.len, f.u.output.len);
			EXPECT_EQ(memcmp(d.u.output.bytes, f.u.output.bytes, f.u.output.len), 0);
			EXPECT_EQ(d.u.output.off, 77u);
			break;
		case L_RECV:
			EXPECT_EQ(d.u.recv.src, -1);
			EXPECT_EQ(d.u.recv.tag, -1);
			break;
		case L_TRUNC:
			EXPECT_EQ(d.u.trunc.size, 1ULL << 33);
			break;
		case L_ERROR:
			EXPECT_EQ(d.u.error.code, -2);
			break;
		}
		frame_release(&d);
	}
}

TEST(Wire, EveryTruncationRejected)
{
	for (const frame &f : Samples()) {
		SCOPED_TRACE(frame_type_name(f.h.type));
		Bytes b = Encode(f);
		for (size_t cut = 0; cut < b.size(); cut++) {
			Bytes t(b.begin(), b.begin() + cut);
			frame_hdr h{};
			if (cut < FRAME_HDR_LEN) {
				EXPECT_EQ(frame_decode_hdr(t.data(), t.size(), &h), FE_SHORT);
				continue;
			}
			// a stream parser waits for more bytes: still short
			ASSERT_EQ(frame_decode_hdr(t.data(), t.size(), &h), FE_OK);
			EXPECT_GT(FRAME_HDR_LEN + (size_t)h.len, t.size());
			// a sender that claims the shorter length is refused
			PutLen(t, (uint32_t)(cut - FRAME_HDR_LEN));
			frame d;
			int err = Decode(t, &d);
			EXPECT_NE(err, FE_OK) << "cut at " << cut << " of " << b.size();
			if (err == FE_OK)
				frame_release(&d);
		}
	}
}

TEST(Wire, EveryBitFlipRejectedOrValid)
{
	for (const frame &f : Samples()) {
		SCOPED_TRACE(frame_type_name(f.h.type));
		Bytes b = Encode(f);
		for (size_t i = 0; i < b.size(); i++)
			for (int bit = 0; bit < 8; bit++) {
				Bytes t = b;
				t[i] ^= (uint8_t)(1u << bit);
				frame_hdr h{};
				int err = frame_decode_hdr(t.data(), t.size(), &h);
				if (err)
					continue;
				// a flipped length: give the body exactly h.len bytes
				t.resize(FRAME_HDR_LEN + h.len, 0);
				frame d;
				if (Decode(t, &d) != FE_OK)
					continue;
				// accepted: it must be a valid frame, stable under re-encoding
				Bytes again = Encode(d);
				frame d2;
				ASSERT_EQ(Decode(again, &d2), FE_OK) << "byte " << i << " bit " << bit;
				EXPECT_EQ(Encode(d2), again);
				frame_release(&d2);
				frame_release(&d);
			}
	}
}

TEST(Wire, BadMagicVersionType)
{
	Bytes b = Encode(Samples()[0]);
	frame_hdr h{};
	Bytes t = b;
	t[0] ^= 0x20;
	EXPECT_EQ(frame_decode_hdr(t.data(), t.size(), &h), FE_MAGIC);
	t = b;
	t[4] = FRAME_VERSION + 1;
	EXPECT_EQ(frame_decode_hdr(t.data(), t.size(), &h), FE_VERSION);
	for (int type = 0; type < 256; type++) {
		if (strcmp(frame_type_name(type), "UNKNOWN"))
			continue; // a known type
		t = b;
		t[5] = (uint8_t)type;
		EXPECT_EQ(frame_decode_hdr(t.data(), t.size(), &h), FE_TYPE) << type;
	}
	// and a body of an unknown type, should a caller skip the header check
	h = { 99, 0, 0 };
	frame d;
	EXPECT_EQ(frame_decode_body(&h, b.data(), &d), FE_TYPE);
}

TEST(Wire, OversizeLengthRejectedBeforeReadingBody)
{
	for (const frame &f : Samples()) {
		Bytes b = Encode(f);
		Bytes hdr(b.begin(), b.begin() + FRAME_HDR_LEN);
		frame_hdr h{};
		for (uint32_t len : { 0xffffffffu, FRAME_BODY_MAX + 1u, 1u << 31 }) {
			PutLen(hdr, len);
			EXPECT_EQ(frame_decode_hdr(hdr.data(), hdr.size(), &h), FE_LEN)
				<< frame_type_name(f.h.type) << " len " << len;
		}
		if (Encode(f).size() <= FRAME_HDR_LEN + 128 && f.h.type != F_JOB_START &&
		    f.h.type != F_OUTPUT && f.h.type != F_STDIN && f.h.type != F_STATUS &&
		    f.h.type != F_EVENT && f.h.type != F_CUT_CHAN) {
			// small control frames have a small bound: nobody makes the
			// daemon buffer megabytes for a HEARTBEAT
			PutLen(hdr, 257);
			EXPECT_EQ(frame_decode_hdr(hdr.data(), hdr.size(), &h), FE_LEN)
				<< frame_type_name(f.h.type);
		}
	}
}

TEST(Wire, TrailingBytesRejected)
{
	for (const frame &f : Samples()) {
		Bytes b = Encode(f);
		b.push_back(0);
		PutLen(b, (uint32_t)(b.size() - FRAME_HDR_LEN));
		frame d;
		EXPECT_EQ(Decode(b, &d), FE_TRAIL) << frame_type_name(f.h.type);
	}
}

TEST(Wire, EncodeIntoSmallBufferFails)
{
	for (const frame &f : Samples()) {
		long need = frame_encode(&f, nullptr, 0);
		for (size_t cap : { (size_t)0, (size_t)FRAME_HDR_LEN - 1, (size_t)need - 1 }) {
			Bytes out(cap + 1, 0xAA);
			EXPECT_LT(frame_encode(&f, out.data(), cap), 0) << frame_type_name(f.h.type);
			EXPECT_EQ(out[cap], 0xAA); // nothing written past cap
		}
	}
}

namespace {
frame Find(int type)
{
	for (const frame &f : Samples())
		if (f.h.type == type)
			return f;
	ADD_FAILURE() << "no sample";
	return {};
}

// Encode a frame without the decoder's field checks by encoding a valid
// one and patching it: the encoder writes whatever it is given.
int DecodeModified(frame f)
{
	Bytes b = Encode(f);
	if (b.empty())
		return FE_LEN;
	frame d;
	int err = Decode(b, &d);
	if (!err)
		frame_release(&d);
	return err;
}
} // namespace

TEST(Wire, DataFieldBounds)
{
	frame f = Find(F_DATA);
	EXPECT_EQ(DecodeModified(f), FE_OK);
	auto with = [&](auto mut) { frame g = f; mut(g.u.data); return DecodeModified(g); };
	EXPECT_EQ(with([](f_data &d) { d.seq = 0; }), FE_FIELD);
	EXPECT_EQ(with([](f_data &d) { d.tag = -1; }), FE_FIELD);
	EXPECT_EQ(with([](f_data &d) { d.off = 101; }), FE_FIELD);
	EXPECT_EQ(with([](f_data &d) { d.chunk = 61; }), FE_FIELD);   // off+chunk > total
	EXPECT_EQ(with([](f_data &d) { d.off = ~0ull; d.chunk = 2; }), FE_FIELD); // wraps
	EXPECT_EQ(with([](f_data &d) { d.chunk = 0; }), FE_FIELD);
	EXPECT_EQ(with([](f_data &d) { d.total = FRAME_MSG_MAX + 1; }), FE_FIELD);
	EXPECT_EQ(with([](f_data &d) { d.total = 4u << 20; d.off = 0; d.chunk = FRAME_CHUNK_MAX + 1; }),
		  FE_FIELD);
	EXPECT_EQ(with([](f_data &d) { d.total = 0; d.off = 0; d.chunk = 0; }), FE_OK);
}

TEST(Wire, JobStartFieldBounds)
{
	frame f = Find(F_JOB_START);
	auto with = [&](auto mut) { frame g = f; mut(g.u.job_start); return DecodeModified(g); };
	EXPECT_EQ(with([](f_job_start &) {}), FE_OK);
	EXPECT_EQ(with([](f_job_start &j) { j.n = 0; }), FE_FIELD);
	EXPECT_EQ(with([](f_job_start &j) { j.r = 0; }), FE_FIELD);
	EXPECT_EQ(with([](f_job_start &j) { j.r = 17; }), FE_FIELD);
	EXPECT_EQ(with([](f_job_start &j) { j.m = 2; }), FE_FIELD);     // m != n_hosts
	EXPECT_EQ(with([](f_job_start &j) { j.host = 3; }), FE_FIELD);  // host >= m
	EXPECT_EQ(with([](f_job_start &j) { j.mode = 2; }), FE_FIELD);
	EXPECT_EQ(with([](f_job_start &j) { j.argc = 0; }), FE_FIELD);

	// a string that claims more than FRAME_STR_MAX, and one with a NUL
	Bytes b = Encode(f);
	frame d;
	// keepdir is the last field, jobdir the one before it
	size_t jd = b.size() - strlen("/tmp/msg-fenced") - 4 - strlen("/tmp/msg-job") - 4;
	Bytes t = b;
	t[jd + 2] = 0x10; // length 0x10000c > FRAME_STR_MAX
	EXPECT_EQ(Decode(t, &d), FE_FIELD);
	t = b;
	t[jd + 4 + 3] = 0;
	EXPECT_EQ(Decode(t, &d), FE_FIELD);
	// a host count past FRAME_HOSTS_MAX: find the count (3) followed by
	// the first host's length (14), wherever the fields before it put it
	t = b;
	const uint8_t pat[8] = { 3, 0, 0, 0, 14, 0, 0, 0 };
	size_t hc = std::search(t.begin(), t.end(), pat, pat + 8) - t.begin();
	ASSERT_LT(hc, t.size());
	t[hc + 1] = 0x7f;
	EXPECT_EQ(Decode(t, &d), FE_FIELD);
	// a count that fits but whose strings are missing: runs out of body
	t = b;
	t[hc] = 200;
	EXPECT_NE(Decode(t, &d), FE_OK);
}

TEST(Wire, OtherFieldBounds)
{
	frame f = Find(F_OUTPUT);
	f.u.output.stream = 3;
	EXPECT_EQ(DecodeModified(f), FE_FIELD);
	for (uint8_t role : { 0, 9, 255 }) {
		f = Find(F_AUTH);
		f.u.auth.role = role;
		EXPECT_EQ(DecodeModified(f), FE_FIELD) << "role " << (int)role;
	}
	f = Find(F_DECISION);
	f.u.decision.index = 0;
	EXPECT_EQ(DecodeModified(f), FE_FIELD);
	f = Find(F_DECISION);
	f.u.decision.seq = 0;
	EXPECT_EQ(DecodeModified(f), FE_FIELD);
	f = Find(L_SEND);
	f.u.send.size = FRAME_MSG_MAX + 1;
	EXPECT_EQ(DecodeModified(f), FE_FIELD);
	f = Find(L_SEND);
	f.u.send.tag = -1;
	EXPECT_EQ(DecodeModified(f), FE_FIELD);
	f = Find(L_RECV);
	f.u.recv.src = -2;
	EXPECT_EQ(DecodeModified(f), FE_FIELD);
	f = Find(L_DELIVER);
	f.u.deliver.size = FRAME_MSG_MAX + 1;
	EXPECT_EQ(DecodeModified(f), FE_FIELD);

	// an OUTPUT whose length field runs past the body
	Bytes b = Encode(Find(F_OUTPUT));
	b[FRAME_HDR_LEN + 4 + 2 + 1 + 8] += 1;
	frame d;
	EXPECT_EQ(Decode(b, &d), FE_LEN);
	// OUTPUT longer than FRAME_OUTPUT_MAX
	b = Encode(Find(F_OUTPUT));
	b[FRAME_HDR_LEN + 4 + 2 + 1 + 8 + 2] = 0x01; // len += 0x10000
	b[FRAME_HDR_LEN + 4 + 2 + 1 + 8 + 0] = 0x01;
	EXPECT_EQ(Decode(b, &d), FE_FIELD);
}

TEST(Wire, ErrorStringsAndNames)
{
	for (int e = FE_NOMEM; e <= FE_OK; e++)
		EXPECT_STRNE(frame_strerror(e), "unknown frame error");
	EXPECT_STREQ(frame_type_name(0), "UNKNOWN");
	EXPECT_STREQ(frame_type_name(-1), "UNKNOWN");
	EXPECT_STREQ(frame_type_name(FRAME_TYPE_MAX), "UNKNOWN");
	EXPECT_STREQ(frame_type_name(F_DATA), "DATA");
}
