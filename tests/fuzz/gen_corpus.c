/* Writes the seed corpora: one encoded frame of every type (with its
 * trailing payload, if it has one) for fuzz_frame, and the same frames as
 * daemon input streams for fuzz_conn (2 option bytes first; one file per
 * type and one stream of all of them).
 *   fuzz_gen_corpus OUTDIR   (creates OUTDIR/frame and OUTDIR/conn) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frame_samples.h"

static int put(const char *dir, const char *name, const unsigned char *pre, size_t npre,
	       const unsigned char *b, size_t n)
{
	char path[4096];
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		fprintf(stderr, "gen_corpus: path too long: %s/%s\n", dir, name);
		return -1;
	}
	f = fopen(path, "wb");
	if (!f || (npre && fwrite(pre, 1, npre, f) != npre) || fwrite(b, 1, n, f) != n) {
		perror(path);
		return -1;
	}
	return fclose(f);
}

int main(int argc, char **argv)
{
	struct frame v[64];
	size_t n = frame_samples(v, 64), all_len = 0;
	unsigned char *all = NULL;
	const unsigned char pre[2] = { 1, 7 };
	char fdir[4096], cdir[4096], name[64];

	if (argc != 2) {
		fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
		return 2;
	}
	snprintf(fdir, sizeof(fdir), "%s/frame", argv[1]);
	snprintf(cdir, sizeof(cdir), "%s/conn", argv[1]);
	if ((mkdir(argv[1], 0755) && errno != EEXIST) || (mkdir(fdir, 0755) && errno != EEXIST) ||
	    (mkdir(cdir, 0755) && errno != EEXIST)) {
		perror("mkdir");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		long hl = frame_encode(&v[i], NULL, 0);
		size_t pl = (size_t)frame_payload_len(&v[i]);
		unsigned char *b = malloc((size_t)hl + pl);

		if (hl < 0 || !b || frame_encode(&v[i], b, (size_t)hl) != hl)
			return 1;
		frame_sample_payload(&v[i], b + hl, pl);
		snprintf(name, sizeof(name), "%02d-%s", v[i].h.type, frame_type_name(v[i].h.type));
		if (put(fdir, name, NULL, 0, b, (size_t)hl + pl) ||
		    put(cdir, name, pre, 2, b, (size_t)hl + pl))
			return 1;
		all = realloc(all, all_len + (size_t)hl + pl);
		memcpy(all + all_len, b, (size_t)hl + pl);
		all_len += (size_t)hl + pl;
		free(b);
	}
	if (put(fdir, "all-types", NULL, 0, all, all_len) || put(cdir, "all-types", pre, 2, all, all_len))
		return 1;
	printf("%zu frame types written to %s\n", n, argv[1]);
	free(all);
	return 0;
}
