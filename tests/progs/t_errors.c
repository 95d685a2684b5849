/* Error paths of the API: calls before msgInitialize (MSG_EINIT), a second
 * msgInitialize (MSG_EALREADY), invalid ranks (MSG_ERANK), bad arguments
 * (MSG_EINVAL), a too-small buffer (MSG_ETRUNC: the message stays queued
 * and a second receive with a big enough buffer gets it, by name and by
 * MSG_ANYSRC), and calls after msgFinalize.
 *
 *   t_errors            under msgrun, n >= 2
 *   t_errors notlaunched  run directly: msgInitialize says MSG_ENOTLAUNCHED */
#include <stdint.h>

#include "tprog.h"

#define EXPECT_ST(call, want)                                                            \
	do {                                                                             \
		int _s = (call);                                                         \
		EXPECT(_s == (want), "%s returned %d (%s), want %s", #call, _s,          \
		       msgstrerror(_s), #want);                                          \
	} while (0)

static void before_init(void)
{
	int n = 0, id = 0, from;
	char b[4];
	size_t got;

	EXPECT_ST(msgn(&n), MSG_EINIT);
	EXPECT_ST(msgid(&id), MSG_EINIT);
	EXPECT_ST(msgsend(0, b, sizeof(b)), MSG_EINIT);
	EXPECT_ST(msgrecv(0, b, sizeof(b), &from, &got), MSG_EINIT);
	EXPECT_ST(msgsendt(0, 1, b, sizeof(b)), MSG_EINIT);
	EXPECT_ST(msgrecvt(MSG_ANYSRC, MSG_ANYTAG, b, sizeof(b), &from, NULL, &got), MSG_EINIT);
	EXPECT_ST(msgFinalize(), MSG_EINIT);
}

int main(int argc, char **argv)
{
	unsigned char big[1000], small[10];
	int n, id, from = -5, tag;
	size_t got = 0;

	before_init();
	if (argc > 1 && !strcmp(argv[1], "notlaunched")) {
		EXPECT_ST(msgInitialize(), MSG_ENOTLAUNCHED);
		EXPECT_ST(msgsend(0, big, 1), MSG_EINIT);
		printf("notlaunched ok\n");
		return 0;
	}
	CHECK(msgInitialize());
	EXPECT_ST(msgInitialize(), MSG_EALREADY);
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	EXPECT(n >= 2, "n=%d", n);
	EXPECT_ST(msgn(NULL), MSG_EINVAL);

	/* invalid ranks, both directions, tagged and untagged */
	EXPECT_ST(msgsend(-1, big, 1), MSG_ERANK);
	EXPECT_ST(msgsend(n, big, 1), MSG_ERANK);
	EXPECT_ST(msgsend(1 << 30, big, 1), MSG_ERANK);
	EXPECT_ST(msgsendt(n, 0, big, 1), MSG_ERANK);
	EXPECT_ST(msgrecv(n, big, 1, &from, &got), MSG_ERANK);
	EXPECT_ST(msgrecv(-2, big, 1, &from, &got), MSG_ERANK);
	EXPECT_ST(msgrecvt(n + 7, MSG_ANYTAG, big, 1, &from, NULL, &got), MSG_ERANK);
	/* bad arguments */
	EXPECT_ST(msgsendt(0, -3, big, 1), MSG_EINVAL);
	EXPECT_ST(msgsend(0, NULL, 5), MSG_EINVAL);
	EXPECT_ST(msgrecv(0, NULL, 5, &from, &got), MSG_EINVAL);

	if (id == 1) {
		for (int k = 0; k < 3; k++) {
			tprog_fill(big, sizeof(big), 1, 0, k);
			CHECK(msgsendt(0, 40 + k, big, sizeof(big)));
		}
	} else if (id == 0) {
		/* named source: too small, still too small, then big enough */
		EXPECT_ST(msgrecv(1, small, sizeof(small), &from, &got), MSG_ETRUNC);
		EXPECT(from == 1 && got == sizeof(big), "ETRUNC describes from=%d size=%zu", from, got);
		EXPECT_ST(msgrecvt(1, MSG_ANYTAG, small, 0, &from, &tag, &got), MSG_ETRUNC);
		EXPECT(tag == 40, "tag %d", tag);
		got = 0;
		CHECK(msgrecv(1, big, sizeof(big), &from, &got));
		EXPECT(got == sizeof(big) && tprog_verify(big, got, 1, 0, 0) < 0,
		       "the truncated message was lost or damaged (got %zu)", got);
		/* by tag: the message with tag 42 is not the next one */
		EXPECT_ST(msgrecvt(1, 42, small, sizeof(small), &from, &tag, &got), MSG_ETRUNC);
		EXPECT(tag == 42 && got == sizeof(big), "tag %d size %zu", tag, got);
		CHECK(msgrecvt(1, 42, big, sizeof(big), &from, &tag, &got));
		EXPECT(tprog_verify(big, got, 1, 0, 2) < 0, "tagged message damaged");
		/* MSG_ANYSRC: the same rule, and every replica alike */
		EXPECT_ST(msgrecv(MSG_ANYSRC, small, sizeof(small), &from, &got), MSG_ETRUNC);
		EXPECT(from == 1 && got == sizeof(big), "from %d size %zu", from, got);
		CHECK(msgrecv(MSG_ANYSRC, big, sizeof(big), &from, &got));
		EXPECT(got == sizeof(big) && tprog_verify(big, got, 1, 0, 1) < 0, "anysrc message");
		printf("errors ok n=%d\n", n);
	}
	CHECK(msgFinalize());
	EXPECT_ST(msgsend(0, big, 1), MSG_EINIT);
	EXPECT_ST(msgFinalize(), MSG_EINIT);
	EXPECT_ST(msgInitialize(), MSG_EINIT);
	return 0;
}
