/* The daemon's event loop: one io_uring; every asynchronous operation is a
 * struct op whose callback runs when its completion arrives. */
#ifndef MSG_DAEMON_LOOP_H
#define MSG_DAEMON_LOOP_H

#include <liburing.h>
#include <stdbool.h>

struct op {
	void (*cb)(struct op *op, int res);
};

struct loop {
	struct io_uring ring;
	bool stop;
};

int loop_init(struct loop *l, unsigned entries);
void loop_exit(struct loop *l);
/* An SQE whose user data is op; submits queued SQEs first when the ring is full. */
struct io_uring_sqe *loop_sqe(struct loop *l, struct op *op);
/* Runs until l->stop. */
int loop_run(struct loop *l);

extern struct loop *g_loop; /* the daemon has exactly one */

#endif
