/* Option parsing (see args.h). */
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int args_has(int argc, char **argv, const char *name)
{
	int i;

	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return i;
	return 0;
}

static const char *value_of(int argc, char **argv, const char *name)
{
	int i = args_has(argc, argv, name);

	if (!i)
		return NULL;
	if (i + 1 >= argc) {
		fprintf(stderr, "option %s needs a value\n", name);
		exit(2);
	}
	return argv[i + 1];
}

long long args_ll(int argc, char **argv, const char *name, long long def)
{
	const char *v = value_of(argc, argv, name);
	char *end;
	double d;

	if (!v)
		return def;
	/* Accept 1e8 style as well as plain integers. */
	d = strtod(v, &end);
	if (*end || end == v) {
		fprintf(stderr, "option %s: bad number '%s'\n", name, v);
		exit(2);
	}
	return (long long)d;
}

double args_double(int argc, char **argv, const char *name, double def)
{
	const char *v = value_of(argc, argv, name);
	char *end;
	double d;

	if (!v)
		return def;
	d = strtod(v, &end);
	if (*end || end == v) {
		fprintf(stderr, "option %s: bad number '%s'\n", name, v);
		exit(2);
	}
	return d;
}

const char *args_str(int argc, char **argv, const char *name, const char *def)
{
	const char *v = value_of(argc, argv, name);

	return v ? v : def;
}
