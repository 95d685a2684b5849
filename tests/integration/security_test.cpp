// Security (DESIGN §9; issue 2, acceptance 6): against real msgd daemons
// started with a site key, connections that send frames before
// authenticating, prove a wrong key, or send garbage, a malformed frame or
// an oversize length are closed with a logged reason, and the daemons keep
// serving: a real job runs through them afterwards (msgrun --hostfile) and
// also while such connections keep coming.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <thread>

#include "harness.h"

extern "C" {
#include "wire/auth.h"
#include "wire/frame.h"
}

namespace {

using Bytes = std::vector<uint8_t>;

Bytes Encode(const frame &f)
{
	size_t len = 0;
	uint8_t *p = frame_encode_alloc(&f, &len);
	Bytes b(p, p + len);
	free(p);
	return b;
}

struct Daemon {
	pid_t pid = -1;
	int port = 0;
	std::string log;
};

// A raw TCP connection to a daemon, speaking the wire format by hand.
class Conn {
public:
	explicit Conn(int port)
	{
		fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		sockaddr_in sa{};
		sa.sin_family = AF_INET;
		sa.sin_port = htons((uint16_t)port);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(fd_, (sockaddr *)&sa, sizeof(sa))) {
			close(fd_);
			fd_ = -1;
		}
	}
	~Conn()
	{
		if (fd_ >= 0)
			close(fd_);
	}
	bool ok() const { return fd_ >= 0; }
	bool Send(const Bytes &b)
	{
		return send(fd_, b.data(), b.size(), MSG_NOSIGNAL) == (ssize_t)b.size();
	}
	// Read one whole frame (bounded wait). False on EOF/timeout.
	bool Read(frame *f, int timeout_ms = 3000)
	{
		uint8_t hdr[FRAME_HDR_LEN];
		frame_hdr h{};
		if (!ReadN(hdr, sizeof(hdr), timeout_ms) || frame_decode_hdr(hdr, sizeof(hdr), &h))
			return false;
		body_.resize(h.len);
		if (!ReadN(body_.data(), h.len, timeout_ms))
			return false;
		return frame_decode_body(&h, body_.data(), f) == FE_OK;
	}
	// The daemon closed the connection within timeout_ms (anything it
	// sends before is skipped).
	bool ClosedByPeer(int timeout_ms = 3000)
	{
		uint8_t b[4096];
		for (int waited = 0; waited < timeout_ms; waited += 20) {
			pollfd p{ fd_, POLLIN, 0 };
			if (poll(&p, 1, 20) <= 0)
				continue;
			ssize_t n = recv(fd_, b, sizeof(b), 0);
			if (n <= 0)
				return true;
		}
		return false;
	}
	int fd() const { return fd_; }

private:
	bool ReadN(uint8_t *p, size_t n, int timeout_ms)
	{
		size_t got = 0;
		for (int waited = 0; got < n && waited < timeout_ms;) {
			pollfd pf{ fd_, POLLIN, 0 };
			if (poll(&pf, 1, 20) <= 0) {
				waited += 20;
				continue;
			}
			ssize_t k = recv(fd_, p + got, n - got, 0);
			if (k <= 0)
				return false;
			got += (size_t)k;
		}
		return got == n;
	}
	int fd_ = -1;
	Bytes body_;
};

class Security : public ::testing::Test {
protected:
	void SetUp() override
	{
		ASSERT_EQ(auth_init(), 0);
		dir_ = MakeTempDir("sec");
		ASSERT_FALSE(dir_.empty());
		key_file_ = dir_ + "/site.key";
		// 64 hex digits, mode 0600: the site credential
		auth_random(site_, sizeof(site_));
		ASSERT_EQ(auth_write_key(key_file_.c_str(), site_), 0);
		for (int i = 0; i < 2; i++)
			ASSERT_TRUE(Start(&d_[i], i)) << "msgd " << i << " did not start";
	}
	void TearDown() override
	{
		for (Daemon &d : d_)
			Stop(&d);
		RemoveTree(dir_);
	}

	bool Start(Daemon *d, int i)
	{
		int p[2];
		if (pipe(p))
			return false;
		d->log = dir_ + "/msgd" + std::to_string(i) + ".log";
		d->pid = fork();
		if (d->pid == 0) {
			int log = open(d->log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			dup2(log, 2);
			close(p[0]);
			std::string fd = std::to_string(p[1]);
			execl(MsgdPath().c_str(), "msgd", "--key-file", key_file_.c_str(), "--listen",
			      "127.0.0.1:0", "--port-fd", fd.c_str(), (char *)nullptr);
			_exit(127);
		}
		close(p[1]);
		char line[32] = { 0 };
		pollfd pf{ p[0], POLLIN, 0 };
		ssize_t n = poll(&pf, 1, 5000) > 0 ? read(p[0], line, sizeof(line) - 1) : -1;
		close(p[0]);
		d->port = n > 0 ? atoi(line) : 0;
		return d->pid > 0 && d->port > 0;
	}
	void Stop(Daemon *d)
	{
		if (d->pid <= 0)
			return;
		kill(d->pid, SIGTERM);
		for (int i = 0; i < 150; i++) {
			if (waitpid(d->pid, nullptr, WNOHANG) == d->pid) {
				d->pid = -1;
				return;
			}
			usleep(20000);
		}
		kill(d->pid, SIGKILL);
		waitpid(d->pid, nullptr, 0);
		d->pid = -1;
	}
	// The daemon process is still there (not crashed).
	bool Alive(const Daemon &d)
	{
		int st;
		return waitpid(d.pid, &st, WNOHANG) == 0;
	}
	// A fresh connection still gets its challenge: the daemon serves.
	bool Serves(const Daemon &d)
	{
		Conn c(d.port);
		frame f;
		return c.ok() && c.Read(&f) && f.h.type == F_CHALLENGE;
	}
	std::string Log(const Daemon &d) { return ReadFile(d.log); }

	// Opens a connection and takes the challenge nonce.
	std::unique_ptr<Conn> Challenged(const Daemon &d, uint8_t nonce[FRAME_NONCE_LEN])
	{
		auto c = std::make_unique<Conn>(d.port);
		frame f;
		EXPECT_TRUE(c->ok());
		EXPECT_TRUE(c->Read(&f));
		EXPECT_EQ(f.h.type, F_CHALLENGE);
		memcpy(nonce, f.u.challenge.nonce, FRAME_NONCE_LEN);
		return c;
	}
	Bytes Auth(const uint8_t key[AUTH_KEY_LEN], const uint8_t nonce[FRAME_NONCE_LEN],
		   uint8_t role, uint64_t job)
	{
		frame a{};
		a.h.type = F_AUTH;
		a.u.auth.role = role;
		a.u.auth.host = 0;
		a.u.auth.job = job;
		auth_random(a.u.auth.nonce, FRAME_NONCE_LEN);
		auth_client_mac(&a.u.auth, key, nonce);
		return Encode(a);
	}

	// Runs a real job through both daemons (msgrun --hostfile).
	RunResult RunJobThrough(const std::string &prog, const std::vector<std::string> &args,
				uint32_t n, uint32_t r)
	{
		std::string hf = dir_ + "/hosts";
		FILE *f = fopen(hf.c_str(), "w");
		for (const Daemon &d : d_)
			fprintf(f, "127.0.0.1:%d slots=4\n", d.port);
		fclose(f);
		std::string job = dir_ + "/job" + std::to_string(jobs_++);
		std::vector<std::string> av = { MsgrunPath(), "-n", std::to_string(n), "-r",
						std::to_string(r), "--hostfile", hf, "--key-file",
						key_file_, "--timeout", "60", "--job-dir", job, ProgPath(prog) };
		av.insert(av.end(), args.begin(), args.end());
		return RunProgram(av, 75);
	}

	void ExpectJobRuns()
	{
		RunResult res = RunJobThrough("t_pingpong", {}, 2, 2);
		EXPECT_EQ(res.exit_code(), 0) << res.err;
		EXPECT_NE(res.out.find("pingpong ok"), std::string::npos) << res.out << res.err;
	}

	std::string dir_, key_file_;
	uint8_t site_[AUTH_KEY_LEN];
	Daemon d_[2];
	int jobs_ = 0;
};

frame Heartbeat()
{
	frame f{};
	f.h.type = F_HEARTBEAT;
	f.u.heartbeat.host = 1;
	f.u.heartbeat.count = 1;
	return f;
}

// A DATA frame header and body announcing a 100-byte payload chunk.
Bytes DataWithPayload()
{
	frame f{};
	f.h.type = F_DATA;
	f.u.data.src = 0;
	f.u.data.dst = 1;
	f.u.data.seq = 1;
	f.u.data.total = 100;
	f.u.data.chunk = 100;
	Bytes b = Encode(f);
	b.resize(b.size() + 100, 0x5a);
	return b;
}

} // namespace

TEST_F(Security, FrameBeforeAuthenticationRefused)
{
	uint8_t nonce[FRAME_NONCE_LEN];
	auto c = Challenged(d_[0], nonce);
	ASSERT_TRUE(c->Send(Encode(Heartbeat())));
	EXPECT_TRUE(c->ClosedByPeer());
	EXPECT_TRUE(Serves(d_[0]));
	EXPECT_NE(Log(d_[0]).find("frame before authentication"), std::string::npos) << Log(d_[0]);
}

TEST_F(Security, PayloadFrameBeforeAuthenticationRefused)
{
	// a DATA frame with a payload: the unauthenticated side has nowhere to
	// put a payload and must refuse it, not follow a missing handler
	uint8_t nonce[FRAME_NONCE_LEN];
	auto c = Challenged(d_[0], nonce);
	ASSERT_TRUE(c->Send(DataWithPayload()));
	EXPECT_TRUE(c->ClosedByPeer());
	ASSERT_TRUE(Alive(d_[0])) << "msgd died\n" << Log(d_[0]);
	EXPECT_TRUE(Serves(d_[0]));
	// an application frame with a payload (L_SEND), too
	auto c2 = Challenged(d_[0], nonce);
	frame s{};
	s.h.type = L_SEND;
	s.u.send.dst = 0;
	s.u.send.seq = 1;
	s.u.send.size = 10;
	Bytes b = Encode(s);
	b.resize(b.size() + 10, 1);
	ASSERT_TRUE(c2->Send(b));
	EXPECT_TRUE(c2->ClosedByPeer());
	ASSERT_TRUE(Alive(d_[0])) << "msgd died\n" << Log(d_[0]);
	ExpectJobRuns();
}

TEST_F(Security, WrongKeyRefused)
{
	uint8_t nonce[FRAME_NONCE_LEN], wrong_site[AUTH_KEY_LEN], key[AUTH_KEY_LEN];
	auth_random(wrong_site, sizeof(wrong_site));
	for (uint8_t role : { (uint8_t)ROLE_CONTROL, (uint8_t)ROLE_PEER, (uint8_t)ROLE_IMAGE }) {
		auth_job_key(key, wrong_site, 0x1234);
		auto c = Challenged(d_[0], nonce);
		ASSERT_TRUE(c->Send(Auth(key, nonce, role, 0x1234)));
		frame f;
		EXPECT_FALSE(c->Read(&f, 1000) && f.h.type == F_AUTH_OK) << "wrong key accepted";
		EXPECT_TRUE(c->ClosedByPeer());
	}
	// the right key for the job, proved against another challenge (replay)
	{
		uint8_t other[FRAME_NONCE_LEN];
		auth_random(other, sizeof(other));
		auth_job_key(key, site_, 0x1234);
		auto c = Challenged(d_[0], nonce);
		ASSERT_TRUE(c->Send(Auth(key, other, ROLE_CONTROL, 0x1234)));
		EXPECT_TRUE(c->ClosedByPeer());
	}
	// the site key itself is not a job key
	{
		auto c = Challenged(d_[0], nonce);
		ASSERT_TRUE(c->Send(Auth(site_, nonce, ROLE_CONTROL, 0x1234)));
		EXPECT_TRUE(c->ClosedByPeer());
	}
	EXPECT_NE(Log(d_[0]).find("wrong key"), std::string::npos) << Log(d_[0]);
	EXPECT_TRUE(Serves(d_[0]));
	ExpectJobRuns();
}

TEST_F(Security, RightKeyIsAcceptedAndProvesItself)
{
	// the positive case, so the refusals above mean something
	uint8_t nonce[FRAME_NONCE_LEN], key[AUTH_KEY_LEN];
	auth_job_key(key, site_, 0x77);
	auto c = Challenged(d_[0], nonce);
	frame a{};
	a.h.type = F_AUTH;
	a.u.auth.role = ROLE_CONTROL;
	a.u.auth.job = 0x77;
	auth_random(a.u.auth.nonce, FRAME_NONCE_LEN);
	auth_client_mac(&a.u.auth, key, nonce);
	ASSERT_TRUE(c->Send(Encode(a)));
	frame ok;
	ASSERT_TRUE(c->Read(&ok));
	ASSERT_EQ(ok.h.type, F_AUTH_OK);
	EXPECT_TRUE(auth_check_server(ok.u.auth_ok.mac, key, a.u.auth.nonce, nonce));
	// authenticated as a control client: a DATA frame with a payload is
	// still refused without harming the daemon
	ASSERT_TRUE(c->Send(DataWithPayload()));
	EXPECT_TRUE(c->ClosedByPeer());
	ASSERT_TRUE(Alive(d_[0])) << "msgd died\n" << Log(d_[0]);
	EXPECT_TRUE(Serves(d_[0]));
}

TEST_F(Security, GarbageMalformedAndOversizeRefused)
{
	struct Case {
		const char *name;
		Bytes bytes;
	};
	std::vector<Case> cases;
	Bytes garbage(200);
	for (size_t i = 0; i < garbage.size(); i++)
		garbage[i] = (uint8_t)(i * 37 + 11);
	cases.push_back({ "garbage", garbage });
	cases.push_back({ "http", Bytes((const uint8_t *)"GET / HTTP/1.0\r\n\r\n",
					(const uint8_t *)"GET / HTTP/1.0\r\n\r\n" + 18) });
	// a well-formed header whose AUTH body is cut short (length says 10)
	frame a{};
	a.h.type = F_AUTH;
	a.u.auth.role = ROLE_CONTROL;
	Bytes m = Encode(a);
	m.resize(FRAME_HDR_LEN + 10);
	m[8] = 10, m[9] = m[10] = m[11] = 0;
	cases.push_back({ "malformed", m });
	// an AUTH with an invalid role
	Bytes r = Encode(a);
	r[FRAME_HDR_LEN] = 9;
	cases.push_back({ "bad-field", r });
	// oversize lengths: a JOB_START claiming 4 GiB, a HEARTBEAT claiming 1 MiB
	frame hb = Heartbeat();
	Bytes o = Encode(hb);
	o[5] = F_JOB_START;
	o[8] = o[9] = o[10] = o[11] = 0xff;
	cases.push_back({ "oversize-4G", o });
	Bytes o2 = Encode(hb);
	o2[8] = 0, o2[9] = 0, o2[10] = 0x10, o2[11] = 0;
	cases.push_back({ "oversize-1M", o2 });
	Bytes v = Encode(hb);
	v[4] = 7;
	cases.push_back({ "version", v });
	Bytes t = Encode(hb);
	t[5] = 99;
	cases.push_back({ "type", t });

	for (Case &k : cases) {
		uint8_t nonce[FRAME_NONCE_LEN];
		auto c = Challenged(d_[1], nonce);
		ASSERT_TRUE(c->Send(k.bytes)) << k.name;
		EXPECT_TRUE(c->ClosedByPeer()) << k.name << " was not closed";
		ASSERT_TRUE(Alive(d_[1])) << "msgd died on " << k.name << "\n" << Log(d_[1]);
		EXPECT_TRUE(Serves(d_[1])) << k.name;
	}
	// every refusal is logged with its reason at the default verbosity
	std::string log = Log(d_[1]);
	for (const char *why : { "bad magic", "malformed AUTH", "field out of range",
				 "length out of bounds", "version", "unknown frame type" })
		EXPECT_NE(log.find(why), std::string::npos) << "no log line for '" << why << "'\n" << log;
	ExpectJobRuns();
}

// A peer that keeps sending garbage cannot fill the daemon's log (issue 5:
// bounded logs): 20 refusals per 10 s are logged with their reason, then one
// line says the rest are only counted; the daemon keeps serving.
TEST_F(Security, RefusalFloodIsLoggedBounded)
{
	Bytes garbage(64, 0x5a);
	for (int i = 0; i < 60; i++) {
		uint8_t nonce[FRAME_NONCE_LEN];
		auto c = Challenged(d_[1], nonce);
		ASSERT_TRUE(c->Send(garbage)) << i;
		EXPECT_TRUE(c->ClosedByPeer()) << i;
	}
	ASSERT_TRUE(Alive(d_[1])) << Log(d_[1]);
	std::string log = Log(d_[1]);
	size_t lines = 0;
	for (size_t p = 0; (p = log.find("refusing connection", p)) != std::string::npos; p++)
		lines++;
	EXPECT_EQ(lines, 20u) << log;
	EXPECT_NE(log.find("the rest are counted, not logged"), std::string::npos) << log;
	ExpectJobRuns();
}

TEST_F(Security, SilentConnectionsDoNotBlockOthers)
{
	// connections that never say anything (or stop mid-frame) hold nothing
	// the daemon needs: a job still runs while they are open
	std::vector<std::unique_ptr<Conn>> idle;
	for (int i = 0; i < 20; i++) {
		idle.push_back(std::make_unique<Conn>(d_[i % 2].port));
		if (i % 3 == 0) {
			Bytes half = Encode(Heartbeat());
			half.resize(7);
			idle.back()->Send(half);
		}
	}
	ExpectJobRuns();
}

TEST_F(Security, AttacksDuringARunningJob)
{
	// a job that runs for a while (ring, 2 replicas, 2 hosts) while both
	// daemons receive every kind of bad connection
	RunResult res;
	std::thread job([&] { res = RunJobThrough("t_ring", { "3000" }, 4, 2); });
	uint8_t wrong[AUTH_KEY_LEN], key[AUTH_KEY_LEN], nonce[FRAME_NONCE_LEN];
	auth_random(wrong, sizeof(wrong));
	auth_job_key(key, wrong, 1);
	int rounds = 0;
	for (auto start = std::chrono::steady_clock::now();
	     std::chrono::steady_clock::now() - start < std::chrono::seconds(20) && rounds < 200; rounds++) {
		const Daemon &d = d_[rounds % 2];
		auto c = Challenged(d, nonce);
		switch (rounds % 5) {
		case 0: c->Send(Encode(Heartbeat())); break;
		case 1: c->Send(Auth(key, nonce, ROLE_PEER, 1)); break;
		case 2: c->Send(Bytes(64, 0xee)); break;
		case 3: c->Send(DataWithPayload()); break;
		case 4: {
			Bytes o = Encode(Heartbeat());
			o[11] = 0x7f;
			c->Send(o);
			break;
		}
		}
		EXPECT_TRUE(c->ClosedByPeer()) << "case " << rounds % 5;
		if (!Alive(d))
			break;
		// stop once the job is done (its daemons would be idle)
		if (ProcessesMentioning(dir_ + "/job").empty() && rounds > 20)
			break;
	}
	job.join();
	for (const Daemon &d : d_)
		ASSERT_TRUE(Alive(d)) << "msgd died\n" << Log(d);
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_NE(res.out.find("ring ok"), std::string::npos) << res.out;
	EXPECT_GT(rounds, 10);
	ExpectJobRuns();
}

// The direct path's set-up (docs/datapath.md §6): a daemon that proves the
// job key may ask for a direct stream (role DIRECT), but a malformed
// DIRECT_HELLO, or one for a process that is not this host's live process
// of that incarnation, is refused with a logged reason; the daemon and the
// job go on.
TEST_F(Security, BadDirectHelloRefused)
{
	RunResult res;
	std::string jobdir = dir_ + "/job" + std::to_string(jobs_);
	std::thread job([&] { res = RunJobThrough("t_ring", { "3000" }, 4, 1); });
	unsigned long long id = 0;
	for (int i = 0; i < 500 && !id; i++) {
		std::string info = ReadFile(jobdir + "/job.info");
		if (sscanf(info.c_str(), "job %llx", &id) != 1)
			usleep(20000);
	}
	ASSERT_NE(id, 0u) << "no job.info";
	// Three cases are refused for their reason only while rank 1 runs on
	// host 1 (before, it is "not a process of this host"), and msgrun
	// writes job.info before it starts the job: wait for rank 1's process
	// (its working directory; the daemon took its socket in the same step
	// as the fork). Without this an ASan build under load lost the race.
	std::string rank1 = jobdir + "/1.0";
	for (int i = 0; i < 1000 && ProcessesMentioning(rank1).empty(); i++)
		usleep(10000);
	ASSERT_FALSE(ProcessesMentioning(rank1).empty()) << "rank 1 never ran in " << rank1;
	uint8_t key[AUTH_KEY_LEN], nonce[FRAME_NONCE_LEN];
	auth_job_key(key, site_, id);
	// ranks 0 and 2 live on host 0, ranks 1 and 3 on host 1 (d_[1]); the
	// first incarnation of each is 1
	struct { uint32_t src, dst, src_inc, dst_inc; bool truncate; const char *why; } cases[] = {
		{ 0, 1, 1, 1, true, "malformed DIRECT_HELLO" },
		{ 0, 2, 1, 1, false, "the receiver is not a process of this host" },
		{ 0, 1, 1, 7, false, "the receiver is not of that incarnation" },
		{ 1, 1, 1, 1, false, "no such pair" },
		{ 9, 1, 1, 1, false, "no such pair" },
		{ 3, 1, 1, 1, false, "not on the dialing host" },
	};
	for (auto &k : cases) {
		auto c = Challenged(d_[1], nonce);
		frame f{};
		ASSERT_TRUE(c->Send(Auth(key, nonce, ROLE_DIRECT, id)));
		ASSERT_TRUE(c->Read(&f)) << k.why;
		ASSERT_EQ(f.h.type, F_AUTH_OK) << k.why;
		frame h{};
		h.h.type = F_DIRECT_HELLO;
		h.u.direct_hello = { k.src, k.dst, k.src_inc, k.dst_inc };
		Bytes b = Encode(h);
		if (k.truncate) {
			b.resize(b.size() - 8);
			b[8] = (uint8_t)(b.size() - FRAME_HDR_LEN);
		}
		c->Send(b);
		EXPECT_TRUE(c->ClosedByPeer()) << k.why;
		ASSERT_TRUE(Alive(d_[1])) << "msgd died\n" << Log(d_[1]);
	}
	// (if it ended meanwhile, the reasons below say so: the job was too short)
	bool ran = !ProcessesMentioning(rank1).empty();
	job.join();
	for (auto &k : cases)
		EXPECT_NE(Log(d_[1]).find(k.why), std::string::npos)
			<< k.why << (ran ? "" : " (rank 1 had ended before the last case)") << "\n"
			<< Log(d_[1]);
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_NE(res.out.find("ring ok"), std::string::npos) << res.out;
}
