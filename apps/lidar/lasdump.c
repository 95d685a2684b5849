/* Print a LAS file as text: header fields, then one line per point with
 * scaled coordinates and attributes. Used to cross-check this reader and
 * the generator against laspy (tests/apps/las_crosscheck.py).
 *
 *   lasdump F.las [--max K]     (first K points; all by default)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "las.h"

int main(int argc, char **argv)
{
	struct las_header h;
	struct las_point *p;
	char *vlr, err[256];
	long long max = argc > 1 ? args_ll(argc, argv, "--max", -1) : -1;
	uint64_t k;

	if (argc < 2) {
		fprintf(stderr, "usage: lasdump F.las [--max K]\n");
		return 2;
	}
	if (las_read(argv[1], &h, &p, &vlr, err, sizeof err)) {
		fprintf(stderr, "lasdump: %s\n", err);
		return 1;
	}
	printf("version %d.%d\nformat %d\nrecord_length %u\npoints %" PRIu64 "\n", h.version_major,
	       h.version_minor, h.point_format, h.record_length, h.num_points);
	printf("scale %.17g %.17g %.17g\noffset %.17g %.17g %.17g\n", h.scale[0], h.scale[1],
	       h.scale[2], h.offset[0], h.offset[1], h.offset[2]);
	printf("min %.17g %.17g %.17g\nmax %.17g %.17g %.17g\n", h.min[0], h.min[1], h.min[2],
	       h.max[0], h.max[1], h.max[2]);
	printf("vlr %s\n", vlr ? vlr : "-");
	for (k = 0; k < h.num_points && (max < 0 || k < (uint64_t)max); k++)
		printf("%.6f %.6f %.6f %u %u %u %u %.6f %u %u %u\n", p[k].x, p[k].y, p[k].z,
		       p[k].intensity, p[k].return_number, p[k].number_of_returns,
		       p[k].classification, p[k].gps_time, p[k].red, p[k].green, p[k].blue);
	free(p);
	free(vlr);
	return 0;
}
