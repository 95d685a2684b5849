/* An ordinary MPI program: collectives. Reduce and Allreduce (sum, max,
 * min, prod on int, long, unsigned, float, double; MPI_IN_PLACE), Bcast,
 * Gather, Scatter, Allgather and Barrier, every result checked against
 * the value computed locally. Inputs are small integers (exact in float
 * and double), so any reduction order must give the same answer. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int errors;

static void expect(int rank, const char *what, double got, double want)
{
	if (got != want) {
		fprintf(stderr, "rank %d: %s: got %.17g want %.17g\n", rank, what, got, want);
		errors++;
	}
}

static void reductions(int rank, int size)
{
	int i, v = rank + 1, isum = 0, imax = 0, imin = 0;
	long lsum, prod_expect = 1;
	unsigned umax;
	float fsum;
	double d[3] = { rank + 1.0, -(rank + 1.0), 2.0 }, dres[3];

	for (i = 1; i <= size; i++)
		prod_expect *= i;
	MPI_Reduce(&v, &isum, 1, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD);
	if (rank == size - 1)
		expect(rank, "reduce int sum at last rank", isum, size * (size + 1) / 2);
	MPI_Allreduce(&v, &imax, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(&v, &imin, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	expect(rank, "allreduce int max", imax, size);
	expect(rank, "allreduce int min", imin, 1);
	lsum = v;
	MPI_Allreduce(MPI_IN_PLACE, &lsum, 1, MPI_LONG, MPI_PROD, MPI_COMM_WORLD);
	expect(rank, "allreduce long prod in place", (double)lsum, (double)prod_expect);
	umax = (unsigned)v * 3u;
	MPI_Allreduce(MPI_IN_PLACE, &umax, 1, MPI_UNSIGNED, MPI_MAX, MPI_COMM_WORLD);
	expect(rank, "allreduce unsigned max", umax, 3.0 * size);
	fsum = (float)v;
	MPI_Allreduce(MPI_IN_PLACE, &fsum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	expect(rank, "allreduce float sum", fsum, size * (size + 1) / 2);
	MPI_Allreduce(d, dres, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	expect(rank, "allreduce double[0]", dres[0], size * (size + 1) / 2);
	expect(rank, "allreduce double[1]", dres[1], -size * (size + 1) / 2);
	MPI_Allreduce(d, dres, 3, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
	expect(rank, "allreduce double min", dres[1], -size);
}

static void data_movement(int rank, int size)
{
	int i, root = size / 2, *all = malloc(sizeof(int) * 2 * size), mine[2], got[2];
	double bc[4] = { 0, 0, 0, 0 };

	if (rank == root)
		for (i = 0; i < 4; i++)
			bc[i] = 0.5 * i + root;
	MPI_Bcast(bc, 4, MPI_DOUBLE, root, MPI_COMM_WORLD);
	expect(rank, "bcast", bc[3], 1.5 + root);
	mine[0] = rank;
	mine[1] = 100 + rank;
	MPI_Gather(mine, 2, MPI_INT, all, 2, MPI_INT, root, MPI_COMM_WORLD);
	if (rank == root)
		for (i = 0; i < size; i++)
			expect(rank, "gather", all[2 * i + 1], 100 + i);
	if (rank == 0)
		for (i = 0; i < 2 * size; i++)
			all[i] = 7 * i;
	MPI_Scatter(all, 2, MPI_INT, got, 2, MPI_INT, 0, MPI_COMM_WORLD);
	expect(rank, "scatter", got[1], 7 * (2 * rank + 1));
	MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
	for (i = 0; i < size; i++)
		expect(rank, "allgather", all[2 * i], i);
	free(all);
}

int main(int argc, char **argv)
{
	int rank, size, total_errors = 0, round;
	double t0;

	MPI_Init(&argc, &argv);
	t0 = MPI_Wtime();
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (round = 0; round < 10; round++) {
		reductions(rank, size);
		data_movement(rank, size);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Reduce(&errors, &total_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (MPI_Wtime() < t0)
		errors++; /* a clock going backwards is an error, not an output */
	if (rank == 0)
		printf("reduction: %d ranks, %d errors: %s\n", size, total_errors,
		       total_errors ? "FAIL" : "ok");
	MPI_Finalize();
	return total_errors ? 1 : 0;
}
