#include "daemon/loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/log.h"

struct loop *g_loop;

int loop_init(struct loop *l, unsigned entries)
{
	int ret;

	memset(l, 0, sizeof(*l));
	/* One thread submits and reaps (SINGLE_ISSUER), so completions' task
	 * work can wait for our next io_uring_enter (DEFER_TASKRUN) instead of
	 * interrupting whatever we are doing: fewer inter-processor interrupts
	 * on the message path (docs/datapath.md). Kernels before 6.1 refuse the
	 * flags: plain setup then. */
	ret = io_uring_queue_init(entries, &l->ring,
				  getenv("MSG_URING_PLAIN") ? 0 :
				  IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN);
	if (ret == -EINVAL)
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

#define UNMAP_SLICE (32u << 20) /* a few ms of the kernel's time per pass */

/* Lives in the first page of the mapping it describes, which goes last. */
struct unmap_piece {
	size_t len;
	struct unmap_piece *next;
};

void loop_unmap_later(void *p, size_t len)
{
	struct loop *l = g_loop;
	struct unmap_piece *u = p;

	if (!l) {
		munmap(p, len);
		return;
	}
	u->len = len;
	u->next = NULL;
	if (l->unmap_tail)
		l->unmap_tail->next = u;
	else
		l->unmap_head = u;
	l->unmap_tail = u;
}

static void unmap_slice(struct loop *l)
{
	struct unmap_piece *u = l->unmap_head;
	size_t page = 4096, cut;

	if (!u)
		return;
	if (u->len <= UNMAP_SLICE + page) {
		l->unmap_head = u->next;
		if (!l->unmap_head)
			l->unmap_tail = NULL;
		munmap(u, u->len);
		return;
	}
	cut = (u->len - UNMAP_SLICE) & ~(page - 1); /* keep the first page, and u */
	if (cut < page)
		cut = page;
	munmap((char *)u + cut, u->len - cut);
	u->len = cut;
}

void loop_defer(struct loop *l, struct op *op)
{
	op->next_deferred = l->deferred;
	l->deferred = op;
}

static void run_deferred(struct loop *l)
{
	while (l->deferred) {
		struct op *op = l->deferred;

		l->deferred = op->next_deferred;
		op->next_deferred = NULL;
		op->cb(op, 0);
	}
}

int loop_run(struct loop *l)
{
	while (!l->stop) {
		struct io_uring_cqe *cqe;
		int ret;

		run_deferred(l);

		if (l->unmap_head) {
			struct __kernel_timespec ts = { .tv_nsec = 1000000 };

			ret = io_uring_submit_and_wait_timeout(&l->ring, &cqe, 1, &ts, NULL);
			if (ret == -ETIME)
				ret = 0;
		} else {
			ret = io_uring_submit_and_wait(&l->ring, 1);
		}
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
		unmap_slice(l);
	}
	return 0;
}
