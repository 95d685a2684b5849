/* One large message, rank 1 -> rank 0 (default 1 GiB), checked word by
 * word; both print their peak RSS ("vmhwm_kib <rank> <KiB>") so the test can
 * hold every process to size + 64 MiB. Argument: size in MiB. */
#include <stdint.h>

#include "tprog.h"

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
	size_t size = mib << 20, words = size / 8, got = 0;
	uint64_t *buf;
	int n, id, from = -1;

	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	if (id <= 1) {
		buf = malloc(size);
		EXPECT(buf, "cannot allocate %zu MiB", mib);
		if (id == 1) {
			for (size_t i = 0; i < words; i++)
				buf[i] = i * 0x9e3779b97f4a7c15ULL + 1;
			CHECK(msgsend(0, buf, size));
		} else {
			CHECK(msgrecv(1, buf, size, &from, &got));
			EXPECT(from == 1 && got == size, "from %d got %zu", from, got);
			for (size_t i = 0; i < words; i++)
				EXPECT(buf[i] == i * 0x9e3779b97f4a7c15ULL + 1, "word %zu wrong", i);
			printf("big ok %zu MiB\n", mib);
		}
		printf("vmhwm_kib %d %ld\n", id, tprog_vmhwm_kib());
		fflush(stdout);
		free(buf);
	}
	CHECK(msgFinalize());
	return 0;
}
