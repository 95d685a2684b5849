#include "jobinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int jobinfo_write(const char *dir, const struct jobinfo *ji)
{
	char path[4096];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/job.info", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		return -1;
	fprintf(f, "job %016llx\nn %u\nr %u\nm %u\n", (unsigned long long)ji->job, ji->n, ji->r,
		ji->m);
	if (ji->key_file)
		fprintf(f, "key %s\n", ji->key_file);
	for (uint32_t h = 0; h < ji->m; h++)
		fprintf(f, "host %u %s\n", h, ji->hosts[h]);
	return fclose(f);
}

int jobinfo_read(const char *dir, struct jobinfo *ji, char *why, size_t whylen)
{
	char path[4096], line[512], val[480];
	unsigned long long job;
	unsigned h;
	FILE *f;

	memset(ji, 0, sizeof(*ji));
	snprintf(path, sizeof(path), "%s/job.info", dir);
	f = fopen(path, "r");
	if (!f) {
		snprintf(why, whylen, "no job at %s: %s", dir, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "job %llx", &job) == 1)
			ji->job = job;
		else if (sscanf(line, "n %u", &ji->n) == 1 || sscanf(line, "r %u", &ji->r) == 1)
			continue;
		else if (sscanf(line, "m %u", &ji->m) == 1) {
			if (ji->m == 0 || ji->m > 4096)
				break;
			ji->hosts = calloc(ji->m, sizeof(char *));
		} else if (sscanf(line, "key %479s", val) == 1)
			ji->key_file = strdup(val);
		else if (sscanf(line, "host %u %479s", &h, val) == 2 && ji->hosts && h < ji->m)
			ji->hosts[h] = strdup(val);
	}
	fclose(f);
	for (h = 0; ji->hosts && h < ji->m; h++)
		if (!ji->hosts[h])
			break;
	if (!ji->job || !ji->n || !ji->r || !ji->hosts || h < ji->m) {
		snprintf(why, whylen, "%s is damaged", path);
		jobinfo_free(ji);
		return -1;
	}
	return 0;
}

int jobinfo_find(const char *want, char *out, size_t len, char *why, size_t whylen)
{
	const char *tmp = getenv("TMPDIR");
	struct dirent *e;
	int found = 0;
	DIR *d;

	if (!want)
		want = getenv("MSG_JOB_DIR");
	if (want) {
		snprintf(out, len, "%s", want);
		return 0;
	}
	tmp = tmp && *tmp ? tmp : "/tmp";
	d = opendir(tmp);
	if (!d) {
		snprintf(why, whylen, "cannot read %s", tmp);
		return -1;
	}
	while ((e = readdir(d))) {
		char path[4096];

		if (strncmp(e->d_name, "msg-", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s/job.info", tmp, e->d_name);
		if (access(path, R_OK))
			continue;
		found++;
		snprintf(out, len, "%s/%s", tmp, e->d_name);
	}
	closedir(d);
	if (found == 1)
		return 0;
	snprintf(why, whylen, found ? "several jobs run under %s: name one with --job-dir"
				    : "no running job under %s (use --job-dir)", tmp);
	return -1;
}

void jobinfo_free(struct jobinfo *ji)
{
	for (uint32_t h = 0; ji->hosts && h < ji->m; h++)
		free(ji->hosts[h]);
	free(ji->hosts);
	free(ji->key_file);
	memset(ji, 0, sizeof(*ji));
}
