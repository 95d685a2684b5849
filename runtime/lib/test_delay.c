/* Test only: MSG_TEST_DELAY="G.K:sN:MS[,G.K:rN:MS...]" makes replica G.K
 * sleep MS ms at the start of its N-th msgsend (s) or msgrecv (r), counted
 * from its start over all peers. Timing only: what is sent and received is
 * unchanged. tests/faults uses it to decide a race between replicas (which
 * copy of a message arrives first) that otherwise depends on the machine's
 * scheduling. Read once, at msgInitialize (the identity comes in the
 * welcome); unset, it costs one branch per call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/lib.h"

#define MAX_DELAYS 8

struct delay {
	char op;
	unsigned long nth, ms;
};

bool lib_test_delay_armed;

static struct {
	unsigned count;
	struct delay v[MAX_DELAYS];
	unsigned long sends, recvs;
} td;

void lib_test_delay_init(void)
{
	const char *env = getenv("MSG_TEST_DELAY");

	while (env && *env && td.count < MAX_DELAYS) {
		unsigned g, k;
		unsigned long nth, ms;
		char op;
		int used = 0;

		if (sscanf(env, "%u.%u:%c%lu:%lu%n", &g, &k, &op, &nth, &ms, &used) != 5 ||
		    (op != 's' && op != 'r')) {
			fprintf(stderr, "msg: MSG_TEST_DELAY: cannot parse '%s'\n", env);
			return;
		}
		if (g == msg_lib.id && k == msg_lib.rep)
			td.v[td.count++] = (struct delay){ op, nth, ms };
		env += used;
		env += *env == ',';
	}
	lib_test_delay_armed = td.count > 0;
}

void lib_test_delay_slow(char op)
{
	unsigned long nth = op == 's' ? ++td.sends : ++td.recvs;

	for (unsigned i = 0; i < td.count; i++)
		if (td.v[i].op == op && td.v[i].nth == nth) {
			struct timespec ts = { (time_t)(td.v[i].ms / 1000),
					       (long)(td.v[i].ms % 1000) * 1000000L };

			while (nanosleep(&ts, &ts))
				;
		}
}
