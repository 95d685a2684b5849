/* hello_mpi: the same as hello_msg.c, in plain MPI. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int n, id;

	MPI_Init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	MPI_Comm_rank(MPI_COMM_WORLD, &id);
	printf("hello from rank %d of %d\n", id, n);
	fflush(stdout);
	MPI_Finalize();
	return 0;
}
