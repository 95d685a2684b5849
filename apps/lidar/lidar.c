/* LiDAR digital terrain model, irregular decomposition (the paper's third
 * exemplar). Rank 0 (the manager) reads an ASPRS LAS file and cuts it into
 * tiles; workers ask for work, and the manager hands the next tile to
 * whichever worker reports first (MSG_ANYSRC). Workers filter the ground
 * and interpolate the tile's grid with kd-trees (dtm.c) and send it back.
 * The manager places each tile by its number, so the result and its
 * checksum do not depend on n nor on who got which tile.
 *
 *   lidar --input F.las [--cell C] [--tile T] [--max-rmse R] [--out F.asc]
 *         [--sequential] [--time]
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "comm.h"
#include "dtm.h"
#include "hash.h"
#include "las.h"
#include "terrain.h"
#include "tiles.h"

#define TAG_RESULT 21 /* worker -> manager: a finished tile, or "ready" */
#define TAG_SPEC 22   /* manager -> worker: next tile spec, or id -1 = stop */
#define TAG_POINTS 23 /* manager -> worker: the tile's points */

struct result_hdr {
	int32_t tile, ncells, nground, pad;
};

struct job {
	struct dtm_params prm;
	struct tile_pt *pts;
	int64_t npts;
	struct tiling T;
	char *truth;   /* terrain parameters from the generator's VLR, or NULL */
	double *grid;  /* T.ny x T.nx */
	long long nground;
};

static void die(const char *what)
{
	fprintf(stderr, "lidar: %s\n", what);
	exit(2);
}

static void load(struct job *J, const char *path)
{
	struct las_header h;
	struct las_point *lp;
	char err[256];
	uint64_t k;

	if (las_read(path, &h, &lp, &J->truth, err, sizeof err))
		die(err);
	J->npts = (int64_t)h.num_points;
	J->pts = malloc(sizeof *J->pts * (size_t)(J->npts + 1));
	if (!J->pts)
		die("out of memory");
	for (k = 0; k < h.num_points; k++) {
		struct tile_pt *p = &J->pts[k];

		p->x = lp[k].x;
		p->y = lp[k].y;
		p->z = lp[k].z;
		p->ret = lp[k].return_number;
		p->nret = lp[k].number_of_returns;
	}
	free(lp);
	if (tiling_make(&J->T, J->pts, J->npts, &J->prm))
		die("cannot tile the point cloud (empty or out of memory)");
	J->grid = malloc(sizeof(double) * (size_t)J->T.nx * (size_t)J->T.ny);
	if (!J->grid)
		die("out of memory for the grid");
}

/* Compute tile t locally (sequential run, or n = 1). */
static void run_tile(struct job *J, int t)
{
	struct tile_spec s = tiling_spec(&J->T, &J->prm, t);
	int npts, ng = 0;
	struct tile_pt *tp = tiling_points(&J->T, J->pts, t, &npts);
	double *z = malloc(sizeof(double) * (size_t)s.nx * (size_t)s.ny);

	if (!tp || !z || dtm_tile(&s, tp, npts, &J->prm, z, &ng))
		die("out of memory in a tile");
	tiling_store(&J->T, &s, z, J->grid);
	J->nground += ng;
	free(tp);
	free(z);
}

static void send_tile(struct job *J, int dest, int t)
{
	struct tile_spec s = tiling_spec(&J->T, &J->prm, t);
	int npts;
	struct tile_pt *tp = tiling_points(&J->T, J->pts, t, &npts);

	if (!tp)
		die("out of memory");
	comm_send(dest, TAG_SPEC, &s, sizeof s);
	comm_send_big(dest, TAG_POINTS, tp, sizeof *tp * (size_t)npts);
	free(tp);
}

static void manager(struct job *J, int n)
{
	size_t maxres = sizeof(struct result_hdr) + sizeof(double) * (size_t)J->prm.tile * J->prm.tile;
	unsigned char *buf = malloc(maxres);
	int next = 0, active = n - 1;
	struct tile_spec stop;

	if (!buf)
		die("out of memory");
	memset(&stop, 0, sizeof stop);
	stop.id = -1;
	while (active > 0) {
		struct result_hdr h;
		int from;

		comm_recv(MSG_ANYSRC, TAG_RESULT, buf, maxres, &from, NULL);
		memcpy(&h, buf, sizeof h);
		if (h.tile >= 0) {
			struct tile_spec s = tiling_spec(&J->T, &J->prm, h.tile);

			tiling_store(&J->T, &s, (const double *)(buf + sizeof h), J->grid);
			J->nground += h.nground;
		}
		if (next < J->T.ntiles) {
			send_tile(J, from, next++);
		} else {
			comm_send(from, TAG_SPEC, &stop, sizeof stop);
			active--;
		}
	}
	free(buf);
}

static void worker(const struct dtm_params *prm)
{
	size_t maxres = sizeof(struct result_hdr) + sizeof(double) * (size_t)prm->tile * prm->tile;
	unsigned char *buf = calloc(1, maxres);
	struct result_hdr h = { -1, 0, 0, 0 };

	if (!buf)
		die("out of memory");
	comm_send(0, TAG_RESULT, &h, sizeof h); /* ready */
	for (;;) {
		struct tile_spec s;
		size_t bytes;
		struct tile_pt *tp;
		int ng = 0;

		comm_recv(0, TAG_SPEC, &s, sizeof s, NULL, NULL);
		if (s.id < 0)
			break;
		tp = comm_recv_big(0, TAG_POINTS, &bytes);
		if (dtm_tile(&s, tp, (int)(bytes / sizeof *tp), prm,
			     (double *)(buf + sizeof h), &ng))
			die("out of memory in a tile");
		free(tp);
		h.tile = s.id;
		h.ncells = s.nx * s.ny;
		h.nground = ng;
		memcpy(buf, &h, sizeof h);
		comm_send(0, TAG_RESULT, buf, sizeof h + sizeof(double) * (size_t)h.ncells);
	}
	free(buf);
}

/* RMSE of the DTM against the generator's true ground, if known (< 0 if
 * not); summed in grid order, so it is deterministic too. */
static double truth_rmse(const struct job *J)
{
	struct terrain t;
	uint64_t seed;
	double size, x0, y0, sum = 0.0;
	long i, j, cnt = 0;

	if (!J->truth || terrain_parse(J->truth, &seed, &size, &x0, &y0) ||
	    terrain_make(&t, seed, size, x0, y0))
		return -1.0;
	for (j = 0; j < J->T.ny; j++)
		for (i = 0; i < J->T.nx; i++) {
			double z = J->grid[(size_t)j * J->T.nx + i];
			double x = J->T.ox + (i + 0.5) * J->prm.cell, y = J->T.oy + (j + 0.5) * J->prm.cell;
			double d;

			if (z == DTM_NODATA || x >= x0 + size || y >= y0 + size)
				continue;
			d = z - terrain_ground(&t, x, y);
			sum += d * d;
			cnt++;
		}
	terrain_free(&t);
	return cnt ? sqrt(sum / (double)cnt) : -1.0;
}

static int write_asc(const struct job *J, const char *path)
{
	FILE *fp = fopen(path, "w");
	long i, j;

	if (!fp)
		return -1;
	fprintf(fp, "ncols %ld\nnrows %ld\nxllcorner %.3f\nyllcorner %.3f\ncellsize %g\n"
		    "NODATA_value %g\n",
		J->T.nx, J->T.ny, J->T.ox, J->T.oy, J->prm.cell, DTM_NODATA);
	for (j = J->T.ny - 1; j >= 0; j--) /* ESRI grids list the north row first */
		for (i = 0; i < J->T.nx; i++)
			fprintf(fp, "%.3f%c", J->grid[(size_t)j * J->T.nx + i],
				i + 1 == J->T.nx ? '\n' : ' ');
	return fclose(fp);
}

static int report(const struct job *J, int n, double max_rmse)
{
	uint64_t sum = 0;
	size_t k, cells = (size_t)J->T.nx * (size_t)J->T.ny, nodata = 0;
	double rmse = truth_rmse(J);
	int ok = rmse < 0 || rmse <= max_rmse;

	for (k = 0; k < cells; k++) {
		sum += hash_point(k, J->grid[k]);
		nodata += J->grid[k] == DTM_NODATA;
	}
	printf("lidar n=%d points=%" PRId64 " grid=%ldx%ld tiles=%d ground=%lld nodata=%zu "
	       "rmse=%.4f checksum=%016" PRIx64 " %s\n",
	       n, J->npts, J->T.nx, J->T.ny, J->T.ntiles, J->nground, nodata, rmse, sum,
	       ok ? "ok" : "FAIL");
	return ok;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void parse_params(int argc, char **argv, struct dtm_params *prm)
{
	dtm_default_params(prm);
	prm->cell = args_double(argc, argv, "--cell", prm->cell);
	prm->tile = (int)args_ll(argc, argv, "--tile", prm->tile);
	prm->window = args_double(argc, argv, "--window", prm->window);
	if (prm->cell <= 0 || prm->tile < 1 || prm->tile > 1024 || prm->window <= 0)
		die("bad --cell, --tile or --window");
}

int main(int argc, char **argv)
{
	const char *in = args_str(argc, argv, "--input", NULL);
	const char *out = args_str(argc, argv, "--out", NULL);
	double max_rmse = args_double(argc, argv, "--max-rmse", 0.5), t0 = now();
	int sequential = args_has(argc, argv, "--sequential") != 0;
	int id = 0, n = 1, ok = 1, t;
	struct job J;

	memset(&J, 0, sizeof J);
	parse_params(argc, argv, &J.prm);
	if (!in)
		die("usage: lidar --input F.las [--cell C] [--tile T] [--out F.asc] [--sequential]");
	if (!sequential) {
		comm_check(msgInitialize(), "msgInitialize");
		comm_check(msgid(&id), "msgid");
		comm_check(msgn(&n), "msgn");
	}
	if (id == 0) {
		load(&J, in);
		if (n == 1)
			for (t = 0; t < J.T.ntiles; t++)
				run_tile(&J, t);
		else
			manager(&J, n);
		ok = report(&J, n, max_rmse);
		if (out && write_asc(&J, out))
			die("cannot write the output grid");
		if (args_has(argc, argv, "--time"))
			fprintf(stderr, "lidar wall %.6f s\n", now() - t0);
	} else {
		worker(&J.prm);
	}
	if (!sequential)
		comm_check(msgFinalize(), "msgFinalize");
	return ok ? 0 : 1;
}
