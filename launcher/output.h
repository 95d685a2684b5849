/* Output of a job (DESIGN §5 rule 8): each byte offset of a group's stdout
 * and stderr is emitted once, whichever replica produced it first; with
 * --output all, every replica's lines are shown, prefixed "[g.k] ". */
#ifndef MSG_LAUNCHER_OUTPUT_H
#define MSG_LAUNCHER_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/frame.h"

struct output;

struct output *output_new(uint32_t n, uint32_t r, bool all);
void output_take(struct output *o, const struct f_output *f);
void output_free(struct output *o);

#endif
