#include "core_file.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

// struct elf_prstatus on x86-64: siginfo head (12), pr_cursig (2), pad (2),
// pr_sigpend (8), pr_sighold (8), then pr_pid.
constexpr size_t kCursigOff = 12, kPidOff = 32;

template <typename T> bool At(const std::vector<char> &b, size_t off, T *out)
{
	if (off > b.size() || b.size() - off < sizeof(T))
		return false;
	std::memcpy(out, b.data() + off, sizeof(T));
	return true;
}

} // namespace

CoreInfo ReadCore(const std::string &path)
{
	CoreInfo ci;
	std::ifstream in(path, std::ios::binary);
	std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	Elf64_Ehdr eh;

	if (!At(b, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_type != ET_CORE) {
		ci.error = path + " is not an ELF core file";
		return ci;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (!At(b, eh.e_phoff + (size_t)i * eh.e_phentsize, &ph) || ph.p_type != PT_NOTE)
			continue;
		for (size_t off = ph.p_offset; off + sizeof(Elf64_Nhdr) <= ph.p_offset + ph.p_filesz;) {
			Elf64_Nhdr nh;
			if (!At(b, off, &nh))
				break;
			size_t desc = off + sizeof(nh) + ((nh.n_namesz + 3) & ~3u);
			short sig;
			if (nh.n_type == NT_PRSTATUS && At(b, desc + kPidOff, &ci.pid) &&
			    At(b, desc + kCursigOff, &sig)) {
				ci.signo = sig;
				return ci;
			}
			off = desc + ((nh.n_descsz + 3) & ~3u);
		}
	}
	ci.error = path + " has no NT_PRSTATUS note";
	return ci;
}
