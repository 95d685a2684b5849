/* LAS reader (see las.h). Offsets follow the ASPRS LAS 1.2 and 1.4
 * specifications; the header fields added by 1.3/1.4 are read only when
 * the header is large enough to hold them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "las.h"
#include "las_bytes.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Fixed-size text field to a NUL-terminated string without trailing blanks. */
static void get_text(char *dst, const unsigned char *src, size_t len)
{
	memcpy(dst, src, len);
	dst[len] = 0;
	while (len > 0 && (dst[len - 1] == ' ' || dst[len - 1] == 0))
		dst[--len] = 0;
}

static int parse_header(const unsigned char *b, size_t size, struct las_header *h,
			char *err, size_t errlen)
{
	int i;

	if (size < 227 || memcmp(b, "LASF", 4) != 0)
		return fail(err, errlen, "not a LAS file (no LASF signature)");
	memset(h, 0, sizeof *h);
	h->version_major = b[24];
	h->version_minor = b[25];
	get_text(h->system_id, b + 26, 32);
	get_text(h->software, b + 58, 32);
	h->header_size = get_u16(b + 94);
	h->offset_to_points = get_u32(b + 96);
	h->num_vlrs = get_u32(b + 100);
	/* Bits 6-7 flag LAZ compression: not ours to read. */
	if (b[104] & 0xc0)
		return fail(err, errlen, "compressed (LAZ) point data is not supported");
	h->point_format = b[104] & 0x3f;
	h->record_length = get_u16(b + 105);
	h->num_points = get_u32(b + 107);
	for (i = 0; i < 3; i++) {
		h->scale[i] = get_f64(b + 131 + 8 * i);
		h->offset[i] = get_f64(b + 155 + 8 * i);
		h->max[i] = get_f64(b + 179 + 16 * i);
		h->min[i] = get_f64(b + 187 + 16 * i);
	}
	if (h->version_major != 1 || h->version_minor > 4)
		return fail(err, errlen, "unsupported LAS version %d.%d", h->version_major,
			    h->version_minor);
	if (h->header_size < 227 || h->header_size > size)
		return fail(err, errlen, "bad header size %u", h->header_size);
	/* LAS 1.4 keeps a 64-bit count; the legacy 32-bit one may be zero. */
	if (h->version_minor >= 4 && h->header_size >= 375 && h->num_points == 0)
		h->num_points = get_u64(b + 247);
	return 0;
}

/* Payload of the VLR written by our generator, if present. */
static char *find_synth_vlr(const unsigned char *b, size_t size, const struct las_header *h)
{
	size_t off = h->header_size;
	uint32_t k;

	for (k = 0; k < h->num_vlrs && off + 54 <= size; k++) {
		uint16_t len = get_u16(b + off + 20);
		char user[17];

		get_text(user, b + off + 2, 16);
		if (off + 54 + len > size)
			return NULL;
		if (strcmp(user, LAS_SYNTH_USER) == 0) {
			char *t = malloc((size_t)len + 1);

			if (t) {
				memcpy(t, b + off + 54, len);
				t[len] = 0;
			}
			return t;
		}
		off += 54 + (size_t)len;
	}
	return NULL;
}

/* Minimum record size of each supported format. */
static int format_size(int f)
{
	static const int sizes[] = { 20, 28, 26, 34, -1, -1, 30, 36, 38 };

	return f >= 0 && f <= 8 ? sizes[f] : -1;
}

static void parse_point(const unsigned char *p, const struct las_header *h,
			struct las_point *o)
{
	int f = h->point_format;

	memset(o, 0, sizeof *o);
	o->x = (int32_t)get_u32(p) * h->scale[0] + h->offset[0];
	o->y = (int32_t)get_u32(p + 4) * h->scale[1] + h->offset[1];
	o->z = (int32_t)get_u32(p + 8) * h->scale[2] + h->offset[2];
	o->intensity = get_u16(p + 12);
	if (f <= 5) {
		o->return_number = p[14] & 7;
		o->number_of_returns = (p[14] >> 3) & 7;
		o->classification = p[15] & 31;
		if (f == 1 || f == 3)
			o->gps_time = get_f64(p + 20);
		if (f == 2 || f == 3) {
			const unsigned char *c = p + (f == 2 ? 20 : 28);

			o->red = get_u16(c);
			o->green = get_u16(c + 2);
			o->blue = get_u16(c + 4);
		}
	} else {
		o->return_number = p[14] & 15;
		o->number_of_returns = (p[14] >> 4) & 15;
		o->classification = p[16];
		o->gps_time = get_f64(p + 22);
		if (f >= 7) {
			o->red = get_u16(p + 30);
			o->green = get_u16(p + 32);
			o->blue = get_u16(p + 34);
		}
	}
}

static unsigned char *slurp(const char *path, size_t *size, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "rb");
	unsigned char *b = NULL;
	long len;

	if (!fp) {
		fail(err, errlen, "cannot open %s", path);
		return NULL;
	}
	if (fseek(fp, 0, SEEK_END) == 0 && (len = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)len + 1)) && fread(b, 1, (size_t)len, fp) == (size_t)len) {
		*size = (size_t)len;
	} else {
		free(b);
		b = NULL;
		fail(err, errlen, "cannot read %s", path);
	}
	fclose(fp);
	return b;
}

int las_read(const char *path, struct las_header *h, struct las_point **pts,
	     char **vlr_text, char *err, size_t errlen)
{
	size_t size = 0;
	unsigned char *b = slurp(path, &size, err, errlen);
	struct las_point *out;
	uint64_t k;

	*pts = NULL;
	*vlr_text = NULL;
	if (!b)
		return -1;
	if (parse_header(b, size, h, err, errlen) < 0)
		goto bad;
	if (format_size(h->point_format) < 0) {
		fail(err, errlen, "unsupported point format %d", h->point_format);
		goto bad;
	}
	if (h->record_length < format_size(h->point_format) ||
	    h->offset_to_points + h->num_points * h->record_length > size) {
		fail(err, errlen, "point records do not fit the file (format %d, length %u)",
		     h->point_format, h->record_length);
		goto bad;
	}
	out = malloc((h->num_points ? h->num_points : 1) * sizeof *out);
	if (!out) {
		fail(err, errlen, "out of memory for %llu points", (unsigned long long)h->num_points);
		goto bad;
	}
	for (k = 0; k < h->num_points; k++)
		parse_point(b + h->offset_to_points + k * h->record_length, h, &out[k]);
	*vlr_text = find_synth_vlr(b, size, h);
	*pts = out;
	free(b);
	return 0;
bad:
	free(b);
	return -1;
}
