/* A fault-injection schedule (msgrun --inject, DESIGN §8):
 *   KIND TARGET@WHEN [; KIND TARGET@WHEN ...]
 * KIND: kill | stall | corrupt | kill-host | cut | hold | release | migrate | evict
 * TARGET: rank.replica (g.k), a host number for kill-host/cut/evict, or ? for
 *         one drawn from --inject-seed; migrate takes G.K->HOST (or G.K: the
 *         daemon picks the host)
 * WHEN: seconds after launch ("1.5s", "300ms"); for corrupt also "send=N"
 *       (the N-th message the replica sends, counted from its start, is the
 *       corrupted one; an empty one passes it on to the next). */
#ifndef MSG_LAUNCHER_INJECT_H
#define MSG_LAUNCHER_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/frame.h"

struct inj {
	uint8_t kind;      /* enum inject_kind */
	uint32_t group, rep, host;
	double at;         /* seconds after launch */
	uint32_t arg;
	bool from_start;   /* corrupt @send=N: arg counts from the process's start */
	bool done;
};

int inject_kind(const char *name); /* INJ_* or -1 */
const char *inject_name(int kind);
int inject_parse(const char *spec, uint64_t seed, uint32_t n, uint32_t r, uint32_t m,
		 struct inj **out, size_t *count, char *why, size_t whylen);
/* The daemon that must carry it out; loc[g*r+k] is where each replica is
 * now (NULL: where the placement rule put it). */
uint32_t inject_host(const struct inj *in, uint32_t r, uint32_t m, const uint32_t *loc);
void inject_frame(const struct inj *in, struct frame *f);

#endif
