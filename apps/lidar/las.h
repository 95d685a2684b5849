/* ASPRS LAS point clouds: the subset the lidar exemplar needs.
 * Reads LAS 1.0-1.4, point formats 0-3 and 6-8 (scaled coordinates,
 * returns, classification, GPS time, RGB); writes LAS 1.2 or 1.4 with
 * point formats 0-3 and one optional text VLR. */
#ifndef LAS_H
#define LAS_H

#include <stddef.h>
#include <stdint.h>

struct las_point {
	double x, y, z;           /* scaled: X * scale + offset */
	uint16_t intensity;
	uint8_t return_number;    /* 1-based */
	uint8_t number_of_returns;
	uint8_t classification;
	double gps_time;          /* 0 if the format has none */
	uint16_t red, green, blue;
};

struct las_header {
	uint8_t version_major, version_minor;
	uint8_t point_format;
	uint16_t record_length;
	uint16_t header_size;
	uint32_t offset_to_points;
	uint32_t num_vlrs;
	uint64_t num_points;
	double scale[3], offset[3];
	double min[3], max[3];
	char system_id[33], software[33];
};

/* Read a whole file. On success returns 0 and hands over a malloc'd point
 * array; *vlr_text receives the payload of a VLR with user id LAS_SYNTH_USER
 * (malloc'd, NUL-terminated) or NULL. On failure returns -1 with a reason
 * in err (size errlen). */
#define LAS_SYNTH_USER "msg-synth"
int las_read(const char *path, struct las_header *h, struct las_point **pts,
	     char **vlr_text, char *err, size_t errlen);

/* Write points as LAS 1.<minor> (2 or 4), format 0-3, with the given scale
 * and offset; vlr_text (may be NULL) goes into one VLR. Returns 0 or -1. */
int las_write(const char *path, int minor, int format, const double scale[3],
	      const double offset[3], const struct las_point *pts, uint64_t n,
	      const char *vlr_text, char *err, size_t errlen);

#endif
