/* The msg API on MPI, built as the msg_on_mpi library (see msg_on_mpi.h). */
#include "msg_on_mpi.h"
