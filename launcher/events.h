/* The job's event log (msgrun --events FILE: JSON lines with monotonic and
 * job-relative times) and the end-of-job report (msgrun --report). */
#ifndef MSG_LAUNCHER_EVENTS_H
#define MSG_LAUNCHER_EVENTS_H

#include <stdbool.h>
#include <stdio.h>

#include "wire/frame.h"

struct events;

struct events *events_open(const char *path, char *why, size_t whylen);
/* A daemon's event; host and times are added here. */
void events_take(struct events *e, const struct f_event *ev);
/* The job's program: divergence reports resolve send sites in it. */
void events_program(struct events *e, const char *prog);
/* An event of msgrun itself: json is an object body without braces. */
void events_note(struct events *e, const char *kind, const char *fields);
void events_report(struct events *e, FILE *out, int exit_code);
/* A replica's new place, if ev says one moved or was regenerated. */
int events_relocation(const struct f_event *ev, uint32_t *g, uint32_t *k, uint32_t *host);
/* A rank with no replica left in one daemon's view (event group-lost): its
 * number, or -1. */
int events_group_lost(const struct f_event *ev);
/* host-lost: the host a daemon declared lost, or -1 */
int events_host_lost(const struct f_event *ev);
/* The daemon that sent ev says it is cut off from the majority. */
bool events_isolated(const struct f_event *ev);
/* A daemon relays msgctl add-host: host h is to be taken over at addr. */
int events_host_add(const struct f_event *ev, uint32_t *h, char *addr, size_t len);
void events_close(struct events *e);

#endif
