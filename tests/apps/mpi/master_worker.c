/* An ordinary MPI program: master-worker with MPI_ANY_SOURCE.
 * The master hands out tasks one at a time to whichever worker reports
 * first (MPI_ANY_SOURCE, MPI_ANY_TAG, status fields, MPI_Get_count) and
 * stores results by task number, so the answer does not depend on who did
 * what. Workers that are told to stop go on to a reduction while the
 * master may still be receiving from the others. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NTASKS 200
#define TAG_TASK 1
#define TAG_STOP 2
#define TAG_RESULT 3

/* Some work whose answer is easy to check: sum of i*i for i < t. */
static long work(int t)
{
	long s = 0;
	int i;

	for (i = 0; i < t; i++)
		s += (long)i * i;
	return s;
}

static void master(int size)
{
	unsigned long check = 0;
	long results[NTASKS], total = 0, done_counts = 0, mine = 0;
	int next = 0, active = 0, w, t;

	/* Prime every worker with one task (or stop it at once). */
	for (w = 1; w < size; w++) {
		if (next < NTASKS) {
			MPI_Send(&next, 1, MPI_INT, w, TAG_TASK, MPI_COMM_WORLD);
			next++;
			active++;
		} else {
			MPI_Send(&next, 1, MPI_INT, w, TAG_STOP, MPI_COMM_WORLD);
		}
	}
	while (active > 0) {
		long msg[2];
		MPI_Status st;
		int count;

		MPI_Recv(msg, 2, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_LONG, &count);
		if (st.MPI_TAG != TAG_RESULT || count != 2 || msg[0] < 0 || msg[0] >= NTASKS) {
			fprintf(stderr, "master: bad message tag %d count %d\n", st.MPI_TAG, count);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		results[msg[0]] = msg[1];
		if (next < NTASKS) {
			MPI_Send(&next, 1, MPI_INT, st.MPI_SOURCE, TAG_TASK, MPI_COMM_WORLD);
			next++;
		} else {
			MPI_Send(&next, 1, MPI_INT, st.MPI_SOURCE, TAG_STOP, MPI_COMM_WORLD);
			active--;
		}
	}
	for (t = 0; t < NTASKS; t++) {
		if (results[t] != work(t)) {
			fprintf(stderr, "master: task %d wrong\n", t);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		total += results[t];
		check = check * 31u + (unsigned long)(results[t] % 1000003);
	}
	MPI_Reduce(&mine, &done_counts, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	printf("master_worker: %d tasks, total %ld, check %lu, tasks counted by workers %ld: %s\n",
	       NTASKS, total, check, done_counts, done_counts == NTASKS ? "ok" : "FAIL");
	if (done_counts != NTASKS)
		MPI_Abort(MPI_COMM_WORLD, 3);
}

static void worker(void)
{
	long done = 0, dummy = 0;

	for (;;) {
		int task;
		MPI_Status st;

		MPI_Recv(&task, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
		if (st.MPI_TAG == TAG_STOP)
			break;
		{
			long msg[2] = { task, work(task) };

			MPI_Send(msg, 2, MPI_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
		}
		done++;
	}
	MPI_Reduce(&done, &dummy, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "master_worker needs at least 2 ranks\n");
		MPI_Finalize();
		return 2;
	}
	if (rank == 0)
		master(size);
	else
		worker();
	MPI_Finalize();
	return 0;
}
