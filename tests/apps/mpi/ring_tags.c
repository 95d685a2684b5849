/* An ordinary MPI program: tokens around a ring with tags.
 * Each lap, rank i sends two tagged messages to i+1 and the receiver takes
 * them in the opposite order (tag matching), then a Sendrecv shift and an
 * Isend/Irecv/Waitall exchange with both neighbours. Checks every value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define LAPS 20
#define TAG_A 7
#define TAG_B 8

static int fail(int rank, const char *what, long got, long want)
{
	fprintf(stderr, "rank %d: %s: got %ld want %ld\n", rank, what, got, want);
	MPI_Abort(MPI_COMM_WORLD, 3);
	return 1;
}

int main(int argc, char **argv)
{
	int rank, size, lap, right, left;
	long token = 0, sum = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	right = (rank + 1) % size;
	left = (rank + size - 1) % size;
	for (lap = 0; lap < LAPS; lap++) {
		long a = 1000L * lap + rank, b = -a, ra, rb;
		MPI_Status st;
		int count;

		MPI_Send(&a, 1, MPI_LONG, right, TAG_A, MPI_COMM_WORLD);
		MPI_Send(&b, 1, MPI_LONG, right, TAG_B, MPI_COMM_WORLD);
		MPI_Recv(&rb, 1, MPI_LONG, left, TAG_B, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_LONG, &count);
		if (st.MPI_TAG != TAG_B || st.MPI_SOURCE != left || count != 1)
			fail(rank, "status of tag B", st.MPI_TAG, TAG_B);
		MPI_Recv(&ra, 1, MPI_LONG, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		if (st.MPI_TAG != TAG_A || ra != 1000L * lap + left || rb != -ra)
			fail(rank, "tagged pair", ra, 1000L * lap + left);
		sum += ra;
	}
	/* A token once around the ring, incremented by every rank. */
	if (rank == 0) {
		token = 1;
		MPI_Send(&token, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
		MPI_Recv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (token != size)
			fail(rank, "token", token, size);
	} else {
		MPI_Recv(&token, 1, MPI_LONG, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		token++;
		MPI_Send(&token, 1, MPI_LONG, right, 1, MPI_COMM_WORLD);
	}
	{
		int mine[3] = { rank, rank * rank, -rank }, fromleft[3], fromright[3];
		MPI_Request req[4];

		MPI_Sendrecv(mine, 3, MPI_INT, right, 2, fromleft, 3, MPI_INT, left, 2,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (fromleft[1] != left * left)
			fail(rank, "sendrecv", fromleft[1], left * left);
		MPI_Irecv(fromleft, 3, MPI_INT, left, 3, MPI_COMM_WORLD, &req[0]);
		MPI_Irecv(fromright, 3, MPI_INT, right, 4, MPI_COMM_WORLD, &req[1]);
		MPI_Isend(mine, 3, MPI_INT, right, 3, MPI_COMM_WORLD, &req[2]);
		MPI_Isend(mine, 3, MPI_INT, left, 4, MPI_COMM_WORLD, &req[3]);
		MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
		if (fromleft[0] != left || fromright[2] != -right)
			fail(rank, "isend/irecv", fromright[2], -right);
	}
	if (rank == 0)
		printf("ring_tags: %d ranks, %d laps, token %ld, lap sum at 0 %ld: ok\n", size,
		       LAPS, token, sum);
	MPI_Finalize();
	return 0;
}
