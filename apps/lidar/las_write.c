/* LAS writer (see las.h): LAS 1.2 (227-byte header) or 1.4 (375 bytes),
 * point formats 0-3, one optional VLR. Coordinates are rounded to the
 * scale; header bounds are those of the stored (rounded) values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "las.h"
#include "las_bytes.h"

static const int rec_len[4] = { 20, 28, 26, 34 };

static int32_t quantise(double v, double scale, double offset)
{
	return (int32_t)lround((v - offset) / scale);
}

static void put_text(unsigned char *dst, const char *s, size_t len)
{
	size_t n = strlen(s);

	memcpy(dst, s, n < len ? n : len);
}

static void encode_point(unsigned char *p, int format, const struct las_point *pt,
			 const double scale[3], const double offset[3])
{
	memset(p, 0, (size_t)rec_len[format]);
	put_u32(p, (uint32_t)quantise(pt->x, scale[0], offset[0]));
	put_u32(p + 4, (uint32_t)quantise(pt->y, scale[1], offset[1]));
	put_u32(p + 8, (uint32_t)quantise(pt->z, scale[2], offset[2]));
	put_u16(p + 12, pt->intensity);
	p[14] = (unsigned char)((pt->return_number & 7) | (pt->number_of_returns & 7) << 3);
	p[15] = pt->classification & 31;
	if (format == 1 || format == 3)
		put_f64(p + 20, pt->gps_time);
	if (format == 2 || format == 3) {
		unsigned char *c = p + (format == 2 ? 20 : 28);

		put_u16(c, pt->red);
		put_u16(c + 2, pt->green);
		put_u16(c + 4, pt->blue);
	}
}

/* Bounds and per-return counts, from the values as stored. */
static void summarise(const struct las_point *pts, uint64_t n, const double scale[3],
		      const double offset[3], double mn[3], double mx[3], uint64_t by_ret[15])
{
	uint64_t k;
	int i;

	for (i = 0; i < 3; i++) {
		mn[i] = n ? INFINITY : 0;
		mx[i] = n ? -INFINITY : 0;
	}
	memset(by_ret, 0, 15 * sizeof(uint64_t));
	for (k = 0; k < n; k++) {
		double v[3] = { pts[k].x, pts[k].y, pts[k].z };

		for (i = 0; i < 3; i++) {
			double q = quantise(v[i], scale[i], offset[i]) * scale[i] + offset[i];

			mn[i] = q < mn[i] ? q : mn[i];
			mx[i] = q > mx[i] ? q : mx[i];
		}
		if (pts[k].return_number >= 1 && pts[k].return_number <= 15)
			by_ret[pts[k].return_number - 1]++;
	}
}

static void encode_header(unsigned char *b, int minor, int format, const double scale[3],
			  const double offset[3], const struct las_point *pts, uint64_t n,
			  size_t vlr_len)
{
	size_t hsize = minor >= 4 ? 375 : 227;
	double mn[3], mx[3];
	uint64_t by_ret[15];
	int i;

	summarise(pts, n, scale, offset, mn, mx, by_ret);
	memset(b, 0, hsize);
	memcpy(b, "LASF", 4);
	b[24] = 1;
	b[25] = (unsigned char)minor;
	put_text(b + 26, "msg lidar exemplar", 32);
	put_text(b + 58, "lidar_gen (msg)", 32);
	put_u16(b + 90, 1);
	put_u16(b + 92, 2026);
	put_u16(b + 94, (uint16_t)hsize);
	put_u32(b + 96, (uint32_t)(hsize + vlr_len));
	put_u32(b + 100, vlr_len ? 1 : 0);
	b[104] = (unsigned char)format;
	put_u16(b + 105, (uint16_t)rec_len[format]);
	put_u32(b + 107, n <= 0xffffffffu ? (uint32_t)n : 0);
	for (i = 0; i < 5; i++)
		put_u32(b + 111 + 4 * i, (uint32_t)by_ret[i]);
	for (i = 0; i < 3; i++) {
		put_f64(b + 131 + 8 * i, scale[i]);
		put_f64(b + 155 + 8 * i, offset[i]);
		put_f64(b + 179 + 16 * i, mx[i]);
		put_f64(b + 187 + 16 * i, mn[i]);
	}
	if (minor >= 4) {
		put_u64(b + 247, n);
		for (i = 0; i < 15; i++)
			put_u64(b + 255 + 8 * i, by_ret[i]);
	}
}

int las_write(const char *path, int minor, int format, const double scale[3],
	      const double offset[3], const struct las_point *pts, uint64_t n,
	      const char *vlr_text, char *err, size_t errlen)
{
	size_t tlen = vlr_text ? strlen(vlr_text) : 0;
	size_t vlr_len = vlr_text ? 54 + tlen : 0;
	unsigned char head[375 + 54], rec[34];
	FILE *fp;
	uint64_t k;
	int ok;

	if ((minor != 2 && minor != 4) || format < 0 || format > 3 || tlen > 65535) {
		snprintf(err, errlen, "cannot write LAS 1.%d format %d", minor, format);
		return -1;
	}
	fp = fopen(path, "wb");
	if (!fp) {
		snprintf(err, errlen, "cannot create %s", path);
		return -1;
	}
	encode_header(head, minor, format, scale, offset, pts, n, vlr_len);
	ok = fwrite(head, 1, minor >= 4 ? 375 : 227, fp) > 0;
	if (vlr_text) {
		unsigned char v[54];

		memset(v, 0, sizeof v);
		put_text(v + 2, LAS_SYNTH_USER, 16);
		put_u16(v + 18, 1);
		put_u16(v + 20, (uint16_t)tlen);
		put_text(v + 22, "synthetic terrain parameters", 32);
		ok = ok && fwrite(v, 1, 54, fp) == 54 && fwrite(vlr_text, 1, tlen, fp) == tlen;
	}
	for (k = 0; ok && k < n; k++) {
		encode_point(rec, format, &pts[k], scale, offset);
		ok = fwrite(rec, 1, (size_t)rec_len[format], fp) == (size_t)rec_len[format];
	}
	if (fclose(fp) != 0 || !ok) {
		snprintf(err, errlen, "write error on %s", path);
		return -1;
	}
	return 0;
}
