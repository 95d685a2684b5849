/* Small helpers the exemplars share, written on the msg API only, so the
 * same code runs on libmsg and on MPI (api/msg_on_mpi.h).
 *
 * Collectives here combine values in a fixed order (rank 0, 1, ..., n-1 at
 * rank 0), so every run and every replica gets the same bits. */
#ifndef APPS_COMM_H
#define APPS_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "msg.h"

/* Tags at the top of the tag space are reserved for these helpers. */
#define COMM_TAG_REDUCE (MSG_TAG_MAX - 1)
#define COMM_TAG_BCAST (MSG_TAG_MAX - 2)
#define COMM_TAG_BIG (MSG_TAG_MAX - 3)

/* Abort the program with a message if rc is not MSG_OK. */
void comm_check(int rc, const char *what);

/* Checked wrappers of the msg calls. */
void comm_send(int dest, int tag, const void *buf, size_t size);
size_t comm_recv(int src, int tag, void *buf, size_t size, int *from, int *tag_out);

/* Every rank gets the maximum / sum (summed in rank order) of v. */
double comm_allreduce_max(double v);
double comm_allreduce_sum(double v);
uint64_t comm_allreduce_sum_u64(uint64_t v);

/* Root's buffer reaches every rank. */
void comm_bcast(void *buf, size_t size, int root);

/* Messages of any size, cut into pieces the runtime surely accepts. The
 * receiver learns the size first and gets a malloc'd buffer. */
void comm_send_big(int dest, int tag, const void *buf, size_t size);
void *comm_recv_big(int src, int tag, size_t *size);

#endif
