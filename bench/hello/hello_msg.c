/* hello_msg: every rank prints one line. bench/hello/run.sh times
 * `msgrun -n 64 hello_msg` against `mpirun -np 64 hello_mpi`. */
#include <stdio.h>

#include "msg.h"

int main(void)
{
	int n, id, ret = msgInitialize();

	if (ret) {
		fprintf(stderr, "hello_msg: msgInitialize: %s\n", msgstrerror(ret));
		return 1;
	}
	msgn(&n);
	msgid(&id);
	printf("hello from rank %d of %d\n", id, n);
	fflush(stdout);
	ret = msgFinalize();
	return ret ? 1 : 0;
}
