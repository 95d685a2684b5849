/* A rank that fails: rank 1 ends after `delay_ms` (exit code 3, SIGSEGV or
 * SIGKILL) while the others are blocked receiving from it, so with r = 1 the
 * job can only end because msgrun ends it.
 *   t_fail exit|segv|kill [delay_ms] [token] (token only marks the processes) */
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "tprog.h"

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "exit";
	int delay = argc > 2 ? atoi(argv[2]) : 100;
	int n, id, from;
	char b[8];
	size_t got;

	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	if (id == 1) {
		struct timespec ts = { delay / 1000, (delay % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		fprintf(stderr, "rank 1 failing now (%s)\n", how);
		if (!strcmp(how, "segv"))
			raise(SIGSEGV);
		if (!strcmp(how, "kill"))
			raise(SIGKILL);
		_exit(3);
	}
	/* blocked for good: nobody ever sends this */
	CHECK(msgrecv(1, b, sizeof(b), &from, &got));
	fprintf(stderr, "rank %d: received a message that was never sent\n", id);
	return 1;
}
