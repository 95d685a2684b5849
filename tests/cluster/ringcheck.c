/* ringcheck: a self-checking ring for the cluster tests.
 *
 * Rank 0 starts a token of ROUNDS words; every rank in turn adds its id (and
 * the round number) to each word and passes the token on. After ROUNDS trips
 * round the ring rank 0 compares the token with the closed form; every rank
 * then receives the final sum from rank 0 and checks it too. Exit status 0
 * only if every check passed; the first line of output is "ringcheck ok ..."
 * from rank 0.
 *
 *   ringcheck [rounds] [words]
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "msg.h"

static int fail(const char *what, int ret)
{
	fprintf(stderr, "ringcheck: %s: %s\n", what, msgstrerror(ret));
	return 1;
}

int main(int argc, char **argv)
{
	int n, id, from, ret;
	long rounds = argc > 1 ? atol(argv[1]) : 20;
	long words = argc > 2 ? atol(argv[2]) : 1024;
	uint64_t *tok, expect, sum = 0;
	size_t got;

	if (rounds < 1 || words < 1)
		return 2;
	if ((ret = msgInitialize()))
		return fail("msgInitialize", ret);
	msgn(&n);
	msgid(&id);
	tok = calloc((size_t)words, sizeof(*tok));
	if (!tok || n < 2)
		return 2;
	for (long r = 0; r < rounds; r++) {
		int prev = (id + n - 1) % n, next = (id + 1) % n;

		if (id != 0) {
			ret = msgrecv(prev, tok, (size_t)words * sizeof(*tok), &from, &got);
			if (ret)
				return fail("msgrecv", ret);
			if (from != prev || got != (size_t)words * sizeof(*tok)) {
				fprintf(stderr, "ringcheck: rank %d got %zu bytes from %d\n", id, got, from);
				return 1;
			}
		}
		for (long w = 0; w < words; w++)
			tok[w] += (uint64_t)id * (uint64_t)(w + 1) + (uint64_t)r;
		if ((ret = msgsend(next, tok, (size_t)words * sizeof(*tok))))
			return fail("msgsend", ret);
		if (id == 0) {
			ret = msgrecv(prev, tok, (size_t)words * sizeof(*tok), &from, &got);
			if (ret)
				return fail("msgrecv", ret);
		}
	}
	/* each word w: sum over rounds and ranks of id*(w+1) + r */
	for (long w = 0; w < words; w++)
		sum += tok[w];
	expect = 0;
	for (long w = 0; w < words; w++)
		expect += (uint64_t)rounds * ((uint64_t)n * (uint64_t)(n - 1) / 2) * (uint64_t)(w + 1) +
			  (uint64_t)n * (uint64_t)(rounds * (rounds - 1) / 2);
	if (id == 0) {
		for (int d = 1; d < n; d++)
			if ((ret = msgsend(d, &sum, sizeof(sum))))
				return fail("msgsend", ret);
	} else {
		uint64_t got0 = 0;

		if ((ret = msgrecv(0, &got0, sizeof(got0), &from, &got)))
			return fail("msgrecv", ret);
		if (got0 != expect) {
			fprintf(stderr, "ringcheck: rank %d: sum %" PRIu64 " from rank 0, expected %" PRIu64 "\n",
				id, got0, expect);
			return 1;
		}
	}
	if (id == 0) {
		if (sum != expect) {
			printf("ringcheck FAILED n=%d rounds=%ld words=%ld sum=%" PRIu64 " expected=%" PRIu64 "\n",
			       n, rounds, words, sum, expect);
			return 1;
		}
		printf("ringcheck ok n=%d rounds=%ld words=%ld sum=%" PRIu64 "\n", n, rounds, words, sum);
	}
	free(tok);
	ret = msgFinalize();
	return ret ? fail("msgFinalize", ret) : 0;
}
