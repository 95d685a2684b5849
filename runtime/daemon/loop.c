#include "daemon/loop.h"

#include <errno.h>
#include <string.h>

#include "util/log.h"

struct loop *g_loop;

int loop_init(struct loop *l, unsigned entries)
{
	int ret;

	memset(l, 0, sizeof(*l));
	ret = io_uring_queue_init(entries, &l->ring, 0);
	if (ret < 0) {
		log_err("io_uring_queue_init: %s", strerror(-ret));
		return ret;
	}
	g_loop = l;
	return 0;
}

void loop_exit(struct loop *l)
{
	io_uring_queue_exit(&l->ring);
}

struct io_uring_sqe *loop_sqe(struct loop *l, struct op *op)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);

	if (!sqe) {
		io_uring_submit(&l->ring);
		sqe = io_uring_get_sqe(&l->ring);
	}
	if (sqe)
		io_uring_sqe_set_data(sqe, op);
	return sqe;
}

int loop_run(struct loop *l)
{
	while (!l->stop) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_submit_and_wait(&l->ring, 1);

		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
			log_err("io_uring_submit_and_wait: %s", strerror(-ret));
			return ret;
		}
		while (!l->stop && io_uring_peek_cqe(&l->ring, &cqe) == 0) {
			struct op *op = io_uring_cqe_get_data(cqe);
			int res = cqe->res;

			/* seen before the callback: it may submit new work */
			io_uring_cqe_seen(&l->ring, cqe);
			if (op)
				op->cb(op, res);
		}
	}
	return 0;
}
