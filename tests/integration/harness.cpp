#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#ifndef MSG_BIN_DIR
#error MSG_BIN_DIR must name build/bin
#endif
#ifndef MSG_PROG_DIR
#error MSG_PROG_DIR must name the directory of the test programs
#endif

int RunResult::exit_code() const
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return -1;
}

static double Now()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

RunResult RunProgram(const std::vector<std::string> &argv, double timeout_s,
	      const std::function<void(pid_t)> &tick, const std::vector<std::string> &extra_env)
{
	RunResult r;
	int out[2], err[2];

	if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return r;
	pid_t pid = fork();
	if (pid == 0) {
		std::vector<char *> av;
		for (const std::string &a : argv)
			av.push_back(const_cast<char *>(a.c_str()));
		av.push_back(nullptr);
		setpgid(0, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		int devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		// sanitizer builds: a --once msgd exits with its last connections
		// still allocated (freed by the exit), which LeakSanitizer would
		// report from every daemon; leaks are not what these tests check
		setenv("ASAN_OPTIONS", "detect_leaks=0", 0);
		for (const std::string &e : extra_env)
			putenv(const_cast<char *>(e.c_str()));
		execv(av[0], av.data());
		dprintf(2, "cannot execute %s: %s\n", av[0], strerror(errno));
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	if (pid < 0) {
		close(out[0]);
		close(err[0]);
		return r;
	}
	double deadline = Now() + timeout_s, kill_at = 0;
	bool out_open = true, err_open = true;
	bool reaped = false;
	// bounded: the deadline plus the SIGKILL grace
	while (!reaped) {
		pollfd p[2] = { { out_open ? out[0] : -1, POLLIN, 0 }, { err_open ? err[0] : -1, POLLIN, 0 } };
		poll(p, 2, 20);
		char buf[65536];
		for (int i = 0; i < 2; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP)))
				continue;
			ssize_t n = read(p[i].fd, buf, sizeof(buf));
			if (n > 0)
				(i ? r.err : r.out).append(buf, (size_t)n);
			else
				(i ? err_open : out_open) = false;
		}
		if (tick)
			tick(pid);
		if (!out_open && !err_open) {
			waitpid(pid, &r.status, 0);
			reaped = true;
			break;
		}
		if (waitpid(pid, &r.status, WNOHANG) == pid) {
			reaped = true;
			break;
		}
		double now = Now();
		if (!r.timed_out && now > deadline) {
			r.timed_out = true;
			kill(pid, SIGTERM);
			kill_at = now + 3;
		} else if (r.timed_out && kill_at && now > kill_at) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			kill_at = 0;
		}
	}
	// drain what is left (the child is gone; grandchildren holding the pipe
	// would be leftovers, so do not wait for them)
	for (int i = 0; i < 2; i++) {
		int fd = i ? err[0] : out[0];
		fcntl(fd, F_SETFL, O_NONBLOCK);
		char buf[65536];
		ssize_t n;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			(i ? r.err : r.out).append(buf, (size_t)n);
		close(fd);
	}
	return r;
}

std::string MsgrunPath() { return std::string(MSG_BIN_DIR) + "/msgrun"; }
std::string MsgdPath() { return std::string(MSG_BIN_DIR) + "/msgd"; }
std::string ProgPath(const std::string &name) { return std::string(MSG_PROG_DIR) + "/" + name; }

std::string MakeTempDir(const std::string &tag)
{
	std::string t = "/tmp/msgtest-" + tag + "-XXXXXX";
	std::vector<char> b(t.begin(), t.end());
	b.push_back(0);
	if (!mkdtemp(b.data()))
		return "";
	return b.data();
}

static int RmOne(const char *path, const struct stat *, int, struct FTW *)
{
	remove(path);
	return 0;
}

void RemoveTree(const std::string &path)
{
	if (!path.empty())
		nftw(path.c_str(), RmOne, 16, FTW_DEPTH | FTW_PHYS);
}

bool Exists(const std::string &path)
{
	struct stat st;
	return lstat(path.c_str(), &st) == 0;
}

std::string ReadFile(const std::string &path)
{
	std::ifstream f(path);
	std::stringstream ss;
	ss << f.rdbuf();
	return ss.str();
}

static std::string ReadAll(const std::string &path)
{
	std::string s = ReadFile(path);
	for (char &c : s)
		if (c == 0)
			c = ' ';
	return s;
}

std::vector<pid_t> ProcessesMentioning(const std::string &needle)
{
	std::vector<pid_t> v;
	DIR *d = opendir("/proc");
	if (!d)
		return v;
	while (dirent *e = readdir(d)) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == getpid())
			continue;
		std::string base = "/proc/" + std::string(e->d_name);
		char cwd[4096];
		ssize_t n = readlink((base + "/cwd").c_str(), cwd, sizeof(cwd) - 1);
		std::string c = n > 0 ? std::string(cwd, (size_t)n) : "";
		if (c.find(needle) != std::string::npos ||
		    ReadAll(base + "/cmdline").find(needle) != std::string::npos)
			v.push_back((pid_t)pid);
	}
	closedir(d);
	return v;
}

std::vector<std::string> KillLeftovers(const std::string &needle)
{
	std::vector<std::string> out;
	std::vector<pid_t> left;

	for (int i = 0; i < 100; i++) {
		left = ProcessesMentioning(needle);
		if (left.empty())
			break;
		usleep(20000);
	}
	for (pid_t p : left) {
		out.push_back(std::to_string(p) + ": " + ReadFile("/proc/" + std::to_string(p) + "/cmdline"));
		kill(p, SIGKILL);
	}
	return out;
}

static bool StatOf(pid_t pid, std::string &comm, pid_t &ppid)
{
	std::string s = ReadFile("/proc/" + std::to_string(pid) + "/stat");
	size_t l = s.find('('), r = s.rfind(')');
	if (l == std::string::npos || r == std::string::npos)
		return false;
	comm = s.substr(l + 1, r - l - 1);
	char state;
	int pp = 0;
	if (sscanf(s.c_str() + r + 1, " %c %d", &state, &pp) != 2)
		return false;
	ppid = pp;
	return true;
}

std::vector<pid_t> ChildrenNamed(pid_t parent, const std::string &comm)
{
	std::vector<pid_t> v;
	DIR *d = opendir("/proc");
	if (!d)
		return v;
	while (dirent *e = readdir(d)) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		std::string c;
		pid_t pp;
		if (*end || pid <= 0)
			continue;
		if (StatOf((pid_t)pid, c, pp) && pp == parent && c == comm)
			v.push_back((pid_t)pid);
	}
	closedir(d);
	return v;
}

long VmHwmKib(pid_t pid)
{
	std::ifstream f("/proc/" + std::to_string(pid) + "/status");
	std::string line;
	while (std::getline(f, line))
		if (line.compare(0, 6, "VmHWM:") == 0)
			return strtol(line.c_str() + 6, nullptr, 10);
	return -1;
}
