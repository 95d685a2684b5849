// An ELF core dump read back for the --keep-fenced test: is it a core, and
// whose (NT_PRSTATUS: the dumped process's pid and the signal that killed it).
#ifndef MSG_TESTS_FAULTS_CORE_FILE_H
#define MSG_TESTS_FAULTS_CORE_FILE_H

#include <string>

struct CoreInfo {
	std::string error; // empty when the file is an ELF core with NT_PRSTATUS
	int pid = -1;
	int signo = -1;
};

CoreInfo ReadCore(const std::string &path);

#endif
