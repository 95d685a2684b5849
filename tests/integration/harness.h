// Running real jobs for the integration tests: msgrun (or any program) as a
// child with captured output and a hard timeout, fresh job directories, and
// a /proc scan for processes left behind.
#ifndef MSG_TESTS_INTEGRATION_HARNESS_H
#define MSG_TESTS_INTEGRATION_HARNESS_H

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

struct RunResult {
	int status = -1;        // wait status
	bool timed_out = false;
	std::string out, err;
	int exit_code() const;  // exit code, 128+signal, or -1
};

// Runs argv with stdout/stderr captured. After timeout_s the child gets
// SIGTERM (msgrun tears its job down), 3 s later SIGKILL to its process
// group. tick(pid) runs about every 20 ms while the child runs.
RunResult RunProgram(const std::vector<std::string> &argv, double timeout_s,
	      const std::function<void(pid_t)> &tick = nullptr,
	      const std::vector<std::string> &extra_env = {});

// build/bin/msgrun and the directory of the test programs.
std::string MsgrunPath();
std::string MsgdPath();
std::string ProgPath(const std::string &name);

// A fresh empty directory under /tmp, removed (recursively) by the caller
// with RemoveTree; JobDir() gives a path inside it that does not exist yet,
// for --job-dir.
std::string MakeTempDir(const std::string &tag);
void RemoveTree(const std::string &path);
bool Exists(const std::string &path);
std::string ReadFile(const std::string &path);

// Processes (other than the caller) whose cwd or command line mentions
// `needle`: leftovers of a job.
std::vector<pid_t> ProcessesMentioning(const std::string &needle);
// Those still there after up to 2 s (a killed process may still be
// exiting), killed (SIGKILL, so they cannot disturb the next test) and
// described ("PID: command line") for the caller to report as failures.
std::vector<std::string> KillLeftovers(const std::string &needle);
// Children of pid whose executable name is `comm` (e.g. the msgd of msgrun).
std::vector<pid_t> ChildrenNamed(pid_t parent, const std::string &comm);
// VmHWM of pid in KiB, or -1.
long VmHwmKib(pid_t pid);

// MSG_ASAN: an AddressSanitizer build (its processes cannot be captured,
// and big messages are scaled down)
#if defined(__SANITIZE_ADDRESS__)
#define MSG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MSG_ASAN 1
#endif
#endif

#endif
