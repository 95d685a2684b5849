// SPDX-License-Identifier: MIT
#include "util.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace ckpt_test {

bool Result::exited_ok() const { return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0; }
int Result::exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

static long now_ms()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

[[noreturn]] static void child(const std::vector<std::string> &argv, const std::string &cwd, int out, int err,
			       int keep_fd, const std::vector<std::string> &env)
{
	int null = open("/dev/null", O_RDONLY);
	dup2(null, 0);
	dup2(out, 1);
	dup2(err, 2);
	if (keep_fd >= 0 && keep_fd != 3) {
		dup2(keep_fd, 3);
		keep_fd = 3;
	}
	syscall(SYS_close_range, keep_fd >= 0 ? 4 : 3, ~0u, 0);
	if (!cwd.empty() && chdir(cwd.c_str()) != 0)
		_exit(126);
	for (const auto &e : env)
		putenv(const_cast<char *>(e.c_str()));
	std::vector<char *> a;
	for (const auto &s : argv)
		a.push_back(const_cast<char *>(s.c_str()));
	a.push_back(nullptr);
	execv(a[0], a.data());
	_exit(127);
}

static void drain(int fd, std::string &to, bool &open_)
{
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof(buf));
	if (n > 0)
		to.append(buf, (size_t)n);
	else
		open_ = false;
}

Result run(const std::vector<std::string> &argv, const std::string &cwd, int timeout_ms,
	   const std::function<bool(const std::string &)> &stop, int keep_fd, const std::vector<std::string> &env)
{
	Result r;
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
		return r;
	pid_t pid = fork();
	if (pid == 0)
		child(argv, cwd, po[1], pe[1], keep_fd, env);
	close(po[1]);
	close(pe[1]);
	bool oo = true, eo = true, killed = false;
	long deadline = now_ms() + timeout_ms;
	while (oo || eo) {
		struct pollfd p[2] = { { oo ? po[0] : -1, POLLIN, 0 }, { eo ? pe[0] : -1, POLLIN, 0 } };
		long left = deadline - now_ms();
		if (left <= 0) {
			r.timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		if (poll(p, 2, (int)(left > 200 ? 200 : left)) < 0)
			continue;
		if (p[0].revents)
			drain(po[0], r.out, oo);
		if (p[1].revents)
			drain(pe[0], r.err, eo);
		if (!killed && stop && stop(r.err)) {
			kill(pid, SIGKILL);
			killed = true;
		}
	}
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &r.status, 0);
	return r;
}

std::string bin(const std::string &name) { return std::string(CKPT_BIN_DIR) + "/" + name; }
std::string restorer() { return bin("msg-restore"); }

int pid_after(const std::string &text, const std::string &tag)
{
	size_t at = text.find(tag + " ");
	return at == std::string::npos ? -1 : atoi(text.c_str() + at + tag.size() + 1);
}

TmpDir::TmpDir()
{
	char t[] = "/tmp/ckpt-test-XXXXXX";
	path = mkdtemp(t) ? t : "/tmp";
}
TmpDir::~TmpDir()
{
	std::error_code ec;
	if (path != "/tmp")
		std::filesystem::remove_all(path, ec);
}

std::string read_file(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	std::stringstream ss;
	ss << f.rdbuf();
	return ss.str();
}

void write_file(const std::string &path, const std::string &data)
{
	std::ofstream f(path, std::ios::binary | std::ios::trunc);
	f << data;
}

} // namespace ckpt_test

namespace ckpt_test {

Scenario checkpoint_restore(const std::string &subject, const std::vector<std::string> &extra_args,
			    const TmpDir &dir, const std::vector<std::string> &restore_prefix,
			    const std::vector<std::string> &env)
{
	Scenario s;
	std::string d1 = dir.path + "/straight", d2 = dir.path + "/captured";
	std::filesystem::create_directories(d1);
	std::filesystem::create_directories(d2);
	s.image = dir.path + "/image";
	std::vector<std::string> a = { bin(subject), "straight", "-" };
	a.insert(a.end(), extra_args.begin(), extra_args.end());
	s.straight = run(a, d1, 60000, nullptr, -1, env);
	a[1] = "capture";
	a[2] = s.image;
	s.captured = run(
		a, d2, 60000, [](const std::string &e) { return e.find("CAPTURED ") != std::string::npos; }, -1,
		env);
	s.captured_pid = pid_after(s.captured.err, "CAPTURED");
	std::vector<std::string> r = restore_prefix;
	r.push_back(restorer());
	r.push_back(s.image);
	s.restored = run(r, "/", 60000);
	s.restored_pid = pid_after(s.restored.err, "RESTORED");
	return s;
}

} // namespace ckpt_test
