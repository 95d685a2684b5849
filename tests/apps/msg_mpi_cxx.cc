// msg_mpi.h must compile as C++ too (MPI codes are often C++).
#include <mpi.h>

int msg_mpi_cxx_check(int argc, char **argv)
{
	int rank = 0;
	double v = 1.0, sum = 0.0;
	MPI_Request req;
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Irecv(&v, 1, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
	MPI_Wait(&req, &st);
	MPI_Finalize();
	return rank + st.MPI_SOURCE;
}
