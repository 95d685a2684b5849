/* Must NOT compile with msgcc: msg has no communicators besides
 * MPI_COMM_WORLD, and the error has to say so at compile time. */
#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Comm half;

	MPI_Init(&argc, &argv);
	MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &half);
	MPI_Finalize();
	return 0;
}
