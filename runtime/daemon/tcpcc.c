/* tcpcc.c: the TCP congestion control of the job's connections.
 *
 * msgd sets it on every TCP socket it dials or accepts: peer links, image
 * streams and the direct streams it hands to processes. Why not the
 * system's: a default that paces (bbr) sends part of a stream from the
 * pacing timer, on whichever CPU that fires; over loopback each CPU queues
 * what it sent, so segments overtake each other, SACK sees holes and TCP
 * retransmits what was never lost (tens of spurious retransmits per 200
 * MiB here, 1 MiB streams at 6-7 GB/s against 11 with cubic or reno;
 * docs/datapath.md §11). A cluster's interconnect has no use for pacing
 * either. "system" keeps the system's default. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"

static char chosen[16]; /* TCP_CA_NAME_MAX; empty: the system's default */

static int try_on(int fd, const char *name)
{
	return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, (socklen_t)strlen(name));
}

int tcpcc_pick(const char *spec, bool given, char *why, size_t whylen)
{
	char list[256], *save = NULL, *name;
	int fd;

	chosen[0] = 0;
	if (!strcmp(spec, "system"))
		return 0;
	if (strlen(spec) >= sizeof(list)) {
		snprintf(why, whylen, "--tcp-congestion: list too long");
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, whylen, "cannot make a TCP socket: %s", strerror(errno));
		return -1;
	}
	strcpy(list, spec);
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		if (strlen(name) >= sizeof(chosen)) {
			snprintf(why, whylen, "--tcp-congestion: '%s' is not a congestion control",
				 name);
			close(fd);
			return -1;
		}
		if (!try_on(fd, name)) {
			strcpy(chosen, name);
			break;
		}
	}
	close(fd);
	if (chosen[0]) {
		log_info("TCP congestion control: %s", chosen);
		return 0;
	}
	if (!given) { /* the default list: the system's then, said once */
		log_info("TCP congestion control: none of %s allowed here, the system's", spec);
		return 0;
	}
	snprintf(why, whylen,
		 "--tcp-congestion %s: none of these is available and allowed here "
		 "(see /proc/sys/net/ipv4/tcp_allowed_congestion_control), or 'system'", spec);
	return -1;
}

void tcpcc_apply(int fd)
{
	if (chosen[0] && try_on(fd, chosen))
		log_warn("TCP congestion control %s refused on a connection: %s", chosen,
			 strerror(errno));
}
