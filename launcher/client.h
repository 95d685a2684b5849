/* The launcher side of a control connection to a msgd: connect, prove the
 * job key, then exchange frames. Blocking writes; reads are buffered so a
 * poll loop can take whole frames as they come. */
#ifndef MSG_LAUNCHER_CLIENT_H
#define MSG_LAUNCHER_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "wire/auth.h"
#include "wire/frame.h"

struct client {
	int fd;
	uint32_t host;
	uint8_t *buf;
	size_t len, cap;
	size_t used;       /* bytes of the last frame returned, dropped on next call */
};

/* Connects to "addr:port" and authenticates for job with key. 0 or -1 with why. */
int client_open(struct client *c, const char *hostport, uint64_t job,
		const uint8_t key[AUTH_KEY_LEN], char *why, size_t whylen);
void client_close(struct client *c);
int client_send(struct client *c, const struct frame *f);
/* Reads what the socket has (call when poll says readable): 0, or -1 on EOF/error. */
int client_fill(struct client *c);
/* Next whole frame from the buffer: 1 (f filled; OUTPUT bytes valid until
 * the next call), 0 (none yet), or -1 (malformed: why). */
int client_next(struct client *c, struct frame *f, char *why, size_t whylen);
/* Blocking: wait up to timeout_ms for the next frame. 1, 0 on timeout, -1. */
int client_wait(struct client *c, struct frame *f, int timeout_ms, char *why, size_t whylen);

#endif
