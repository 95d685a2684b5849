/* Divergence reports (issue 5): the first mismatch seen for each message
 * (channel and sequence) is told once, with its send site resolved to
 * function and file:line from the program's debug info (addr2line). */
#ifndef MSG_LAUNCHER_DIVERGENCE_H
#define MSG_LAUNCHER_DIVERGENCE_H

#include <stddef.h>

struct divergences;

struct divergences *divergences_new(void);
void divergences_free(struct divergences *d);
/* The program whose sites are resolved (the job's executable). */
void divergences_program(struct divergences *d, const char *prog);
/* A daemon's event: when it is the first mismatch of its message, fills
 * fields (a JSON object body for a "divergence" event) and line (one line
 * for the user) and returns 1; else 0. */
int divergences_take(struct divergences *d, const char *json, char *fields, size_t flen,
		     char *line, size_t llen);
/* Every divergence told so far, one line each (for --report); "" none. */
const char *divergences_list(const struct divergences *d);

#endif
