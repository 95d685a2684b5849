/* msgd --cut-links: an injected cut (`msgctl cut H`, `--inject 'cut H'`)
 * takes this host's network links down, a real link cut, instead of the
 * daemon merely closing its peer connections and dropping their frames.
 * Meant for test clusters in network namespaces, where each msgd owns its
 * namespace's links (tests/faults/netns_cut.sh); needs CAP_NET_ADMIN. A
 * healing cut (`cut H MS`) brings the same links up again after MS ms:
 * the kernel restores their addresses' routes. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"

#define MAX_LINKS 16

static struct {
	char name[MAX_LINKS][IF_NAMESIZE];
	unsigned n;
	uint64_t heal_at; /* ns; 0: cut for good (or nothing cut) */
} down;

static int set_up(int fd, const char *name, bool up)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr))
		return -1;
	if (up)
		ifr.ifr_flags |= IFF_UP;
	else
		ifr.ifr_flags &= ~IFF_UP;
	return ioctl(fd, SIOCSIFFLAGS, &ifr);
}

int links_cut(uint32_t ms)
{
	struct if_nameindex *all = if_nameindex(), *i;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (!all || fd < 0) {
		log_warn("--cut-links: cannot list the links: %s", strerror(errno));
		if (all)
			if_freenameindex(all);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (i = all; i->if_index && down.n < MAX_LINKS; i++) {
		if (!strcmp(i->if_name, "lo"))
			continue;
		if (set_up(fd, i->if_name, false)) {
			log_warn("--cut-links: cannot take %s down: %s", i->if_name, strerror(errno));
			continue;
		}
		log_warn("cut: link %s down%s", i->if_name, ms ? " for a while" : "");
		snprintf(down.name[down.n++], IF_NAMESIZE, "%s", i->if_name);
	}
	if_freenameindex(all);
	close(fd);
	down.heal_at = ms ? mono_ns() + (uint64_t)ms * 1000000 : 0;
	return (int)down.n;
}

void links_tick(uint64_t now)
{
	int fd;

	if (!down.n || !down.heal_at || now < down.heal_at)
		return;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (unsigned k = 0; k < down.n; k++)
		if (fd < 0 || set_up(fd, down.name[k], true))
			log_warn("--cut-links: cannot bring %s up again: %s", down.name[k],
				 strerror(errno));
		else
			log_warn("cut healed: link %s up", down.name[k]);
	if (fd >= 0)
		close(fd);
	down.n = 0;
	down.heal_at = 0;
}
