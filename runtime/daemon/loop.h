/* The daemon's event loop: one io_uring; every asynchronous operation is a
 * struct op whose callback runs when its completion arrives. */
#ifndef MSG_DAEMON_LOOP_H
#define MSG_DAEMON_LOOP_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>

struct op {
	void (*cb)(struct op *op, int res);
	struct op *next_deferred;
};

struct unmap_piece;

struct loop {
	struct io_uring ring;
	bool stop;
	struct unmap_piece *unmap_head, *unmap_tail; /* big mappings to give back */
	struct op *deferred;  /* to call (res 0) once this batch of completions is handled */
};

int loop_init(struct loop *l, unsigned entries);
void loop_exit(struct loop *l);
/* An SQE whose user data is op; submits queued SQEs first when the ring is full. */
struct io_uring_sqe *loop_sqe(struct loop *l, struct op *op);
/* Gives a large mapping back to the kernel a slice per loop pass: unmapping
 * 1 GiB at once stalls the loop for 100-500 ms (peers would miss our
 * heartbeats), and a helper thread at normal priority holding our mmap lock
 * stalls it longer. Installed as the mbuf unmapper. */
void loop_unmap_later(void *p, size_t len);
/* Calls op->cb(op, 0) after every completion already there was handled,
 * before the loop next submits and waits. op must not be deferred twice. */
void loop_defer(struct loop *l, struct op *op);
/* Runs until l->stop. */
int loop_run(struct loop *l);

extern struct loop *g_loop; /* the daemon has exactly one */

#endif
