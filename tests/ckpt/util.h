// SPDX-License-Identifier: MIT
// Process helpers for the checkpoint tests: real processes, bounded waits.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace ckpt_test {

struct Result {
	int status = -1;        // waitpid status
	bool timed_out = false;
	std::string out, err;
	bool exited_ok() const;
	int exit_code() const;  // -1 if not exited
};

// Runs argv in cwd; stdin /dev/null (or in_fd), fds >= 3 closed except keep_fd.
// If stop(err_so_far) turns true the process is SIGKILLed (the "kill the
// original" step).  Killed after timeout_ms in any case.
Result run(const std::vector<std::string> &argv, const std::string &cwd, int timeout_ms,
	   const std::function<bool(const std::string &)> &stop = nullptr, int keep_fd = -1,
	   const std::vector<std::string> &env = {});

std::string bin(const std::string &name); // build/bin/<name>
std::string restorer();                   // build/bin/msg-restore
int pid_after(const std::string &text, const std::string &tag); // "TAG <pid>" -> pid or -1

struct TmpDir {
	std::string path;
	TmpDir();
	~TmpDir();
};

std::string read_file(const std::string &path);
void write_file(const std::string &path, const std::string &data);

} // namespace ckpt_test

namespace ckpt_test {

// The acceptance scenario: uninterrupted run; checkpointed run (killed once
// the image is written); restore in a new process.  restore_prefix wraps the
// restorer (e.g. "ip netns exec NAME").
struct Scenario {
	Result straight, captured, restored;
	int captured_pid = -1, restored_pid = -1;
	std::string image;
};
Scenario checkpoint_restore(const std::string &subject, const std::vector<std::string> &extra_args,
			    const TmpDir &dir, const std::vector<std::string> &restore_prefix = {},
			    const std::vector<std::string> &env = {});

} // namespace ckpt_test
