/* Minimal "--name value" option parsing shared by the exemplars. */
#ifndef APPS_ARGS_H
#define APPS_ARGS_H

/* Index of "--name" in argv, or 0 if absent. */
int args_has(int argc, char **argv, const char *name);

/* The value after "--name" as a number or string, or def if absent.
 * A malformed number exits with a message. */
long long args_ll(int argc, char **argv, const char *name, long long def);
double args_double(int argc, char **argv, const char *name, double def);
const char *args_str(int argc, char **argv, const char *name, const char *def);

#endif
