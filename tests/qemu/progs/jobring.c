/* msgjob-ring: the msg job the VM runs with msgd --ckpt-engine=kmod
 * (tests/qemu/job.sh). Rank 0 sends `laps` tokens to rank 1, sleeping `ms`
 * milliseconds before each, so rank 1 spends nearly all its time blocked in
 * msgrecv (its safe point) whatever the speed of the emulated CPU. Both ranks
 * fold every token into state kept in the heap (an anonymous mapping), the
 * stack, .data, .bss and a floating-point accumulator; at the end rank 1
 * sends its digest and rank 0 compares it, bit for bit, with its own. A rank
 * 1 that lost or repeated a message, or whose memory or FPU state did not
 * come through a move intact, gives a different digest.
 *
 * With "vtimer", ITIMER_VIRTUAL is armed (an hour: it never fires), which
 * the user engine carries and msgmig.ko refuses (docs/kmod.md): msgd
 * --ckpt-engine=auto must then fall back to the user engine.
 *
 * usage: msgjob-ring LAPS MS [vtimer]   (n = 2) */
#include <msg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define NHEAP (1u << 17) /* 1 MiB of uint64_t: malloc maps it anonymously */

static uint64_t g_data = 0x9e3779b97f4a7c15ull;
static uint64_t g_bss[64];

struct fold {
	uint64_t h;
	double x;
};

static void step(struct fold *f, uint64_t *heap, uint64_t *stack, uint64_t tok)
{
	f->h = (f->h ^ tok) * 0x100000001b3ull;
	heap[f->h % NHEAP] += f->h;
	stack[tok % 512] ^= f->h >> 7;
	g_bss[tok % 64] ^= f->h;
	g_data = g_data * 6364136223846793005ull + tok;
	f->x = f->x * 1.0000001 + (double)tok / 3.0;
}

static uint64_t digest(const struct fold *f, const uint64_t *heap, const uint64_t *stack)
{
	uint64_t d = f->h ^ g_data, xb;

	memcpy(&xb, &f->x, sizeof(xb));
	d = (d ^ xb) * 0x100000001b3ull;
	for (size_t i = 0; i < NHEAP; i++)
		d = (d ^ heap[i]) * 0x100000001b3ull;
	for (size_t i = 0; i < 512; i++)
		d = (d ^ stack[i]) * 0x100000001b3ull;
	for (size_t i = 0; i < 64; i++)
		d = (d ^ g_bss[i]) * 0x100000001b3ull;
	return d;
}

int main(int argc, char **argv)
{
	int laps = argc > 1 ? atoi(argv[1]) : 40, ms = argc > 2 ? atoi(argv[2]) : 100;
	uint64_t stack[512] = { 0 }, *heap = calloc(NHEAP, sizeof(uint64_t)), mine, theirs = 0;
	struct fold f = { 0xcbf29ce484222325ull, 1.0 };
	int n, id, from, l;
	size_t got;

	if (argc > 3 && !strcmp(argv[3], "vtimer")) {
		struct itimerval it = { .it_value = { 3600, 0 } };

		signal(SIGVTALRM, SIG_IGN);
		if (setitimer(ITIMER_VIRTUAL, &it, NULL))
			return 1;
	}
	if (!heap || msgInitialize() || msgn(&n) || msgid(&id) || n != 2) {
		fprintf(stderr, "jobring: setup failed (n must be 2)\n");
		return 1;
	}
	for (l = 0; l < laps; l++) {
		uint64_t tok = (uint64_t)l * 7 + 1, got_tok = 0;

		if (id == 0) {
			struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };

			nanosleep(&t, NULL);
			if (msgsend(1, &tok, sizeof(tok)))
				return 2;
			step(&f, heap, stack, tok);
		} else {
			if (msgrecv(0, &got_tok, sizeof(got_tok), &from, &got) || got != sizeof(got_tok))
				return 3;
			step(&f, heap, stack, got_tok);
		}
	}
	mine = digest(&f, heap, stack);
	if (id == 1) {
		if (msgsend(0, &mine, sizeof(mine)))
			return 4;
	} else {
		if (msgrecv(1, &theirs, sizeof(theirs), &from, &got) || got != sizeof(theirs))
			return 5;
		if (theirs != mine) {
			printf("jobring FAIL laps=%d rank1=%016llx want=%016llx\n", laps,
			       (unsigned long long)theirs, (unsigned long long)mine);
			msgFinalize();
			return 6;
		}
		printf("jobring ok laps=%d digest=%016llx\n", laps, (unsigned long long)mine);
	}
	return msgFinalize();
}
