/* msgd: the per-host daemon of msg. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "msgmig_client.h"
#include "util/log.h"

struct daemon g_msgd;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: msgd --key-file FILE [--listen ADDR:PORT] [options]\n"
		"\n"
		"The msg daemon: one per host. msgrun starts it by itself for virtual hosts;\n"
		"on a cluster, start one per host and list the hosts in a host file.\n"
		"\n"
		"  -k, --key-file FILE   site key (32 bytes or 64 hex digits, mode 0600, yours):\n"
		"                        jobs whose keys derive from it are accepted\n"
		"  -l, --listen ADDR:PORT  address to listen on (default 0.0.0.0:7420;\n"
		"                        port 0 picks a free port)\n"
		"      --port-fd N       write the bound port to file descriptor N, then close it\n"
		"      --once            exit when the first job ends (virtual hosts)\n"
		"      --ckpt-engine auto|user|kmod  how a process is captured for a move\n"
		"                        or a copy: user = libmsg captures itself; kmod =\n"
		"                        msgd saves it through /dev/msgmig (msgmig.ko; an\n"
		"                        error at startup if the device is missing); auto\n"
		"                        (default) = kmod when /dev/msgmig opens, else user\n"
		"      --tcp-congestion LIST|system  congestion control of msgd's TCP\n"
		"                        connections (peer links, image and direct streams):\n"
		"                        the first of the comma-separated LIST the kernel\n"
		"                        allows (default cubic,reno: no pacing, which over\n"
		"                        loopback reorders segments); system = the system's\n"
		"      --cut-links       an injected cut takes this host's links (all but lo)\n"
		"                        down, a real link cut (test clusters in network\n"
		"                        namespaces; needs CAP_NET_ADMIN); default: the daemon\n"
		"                        closes its peer connections and drops their frames\n"
		"  -v, --verbose         more log lines (repeat for debug)\n"
		"  -h, --help            this text\n"
		"\n"
		"Environment:\n"
		"  MSG_PRIO=watch|rt|nice  the daemon's CPU class: watch (default) runs at\n"
		"                        nice -10 and a real-time watchdog thread moves it to\n"
		"                        SCHED_RR while its ticks come late; rt: SCHED_RR all\n"
		"                        along; nice: nice -10 only (tests)\n");
}

static int listen_on(const char *spec, int port_fd)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char ip[64];
	const char *colon = strrchr(spec, ':');
	socklen_t len = sizeof(sa);
	int fd, one = 1;

	if (!colon || colon - spec >= (long)sizeof(ip)) {
		fprintf(stderr, "msgd: --listen wants ADDR:PORT, not '%s'\n", spec);
		return -1;
	}
	memcpy(ip, spec, colon - spec);
	ip[colon - spec] = 0;
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
		fprintf(stderr, "msgd: '%s' is not an IPv4 address\n", ip);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 256) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		fprintf(stderr, "msgd: cannot listen on %s: %s\n", spec, strerror(errno));
		close(fd);
		return -1;
	}
	if (port_fd >= 0) {
		dprintf(port_fd, "%u\n", ntohs(sa.sin_port));
		close(port_fd);
	}
	return fd;
}

/* --ckpt-engine: decided once, here, so a missing device is an error at
 * startup and not at the first migration. */
static int pick_engine(const char *name)
{
	char why[160];
	bool want_kmod = !strcmp(name, "kmod");

	if (!strcmp(name, "user")) {
		g_msgd.engine = ENGINE_USER;
		return 0;
	}
	if (!want_kmod && strcmp(name, "auto")) {
		fprintf(stderr, "msgd: --ckpt-engine is auto, user or kmod, not '%s'\n", name);
		return 2;
	}
	if (msgmig_probe(why, sizeof(why))) {
		if (want_kmod) {
			fprintf(stderr, "msgd: --ckpt-engine=kmod: %s\n", why);
			return 1;
		}
		log_info("checkpoint engine: user (%s)", why);
		g_msgd.engine = ENGINE_USER;
		return 0;
	}
	g_msgd.engine = ENGINE_KMOD;
	g_msgd.engine_auto = !want_kmod;
	log_info("checkpoint engine: kmod (%s)", MSGMIG_DEVICE);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key-file", required_argument, NULL, 'k' },
		{ "listen", required_argument, NULL, 'l' },
		{ "port-fd", required_argument, NULL, 'p' },
		{ "once", no_argument, NULL, 'o' },
		{ "ckpt-engine", required_argument, NULL, 'e' },
		{ "cut-links", no_argument, NULL, 'c' },
		{ "tcp-congestion", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *key_file = NULL, *listen_spec = "0.0.0.0:7420", *engine = "auto";
	const char *tcp_cc = "cubic,reno";
	bool tcp_cc_given = false;
	int port_fd = -1, verbosity = LOG_WARN, c;
	struct loop loop;
	char why[256];

	while ((c = getopt_long(argc, argv, "k:l:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'k': key_file = optarg; break;
		case 'l': listen_spec = optarg; break;
		case 'p': port_fd = atoi(optarg); break;
		case 'o': g_msgd.once = true; break;
		case 'e': engine = optarg; break;
		case 'c': g_msgd.cut_links = true; break;
		case 't': tcp_cc = optarg; tcp_cc_given = true; break;
		case 'v': verbosity++; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !key_file) {
		fprintf(stderr, "msgd: %s\n", key_file ? "unexpected argument" : "--key-file is required");
		usage(stderr);
		return 2;
	}
	log_init("msgd", verbosity);
	c = pick_engine(engine);
	if (c)
		return c;
	if (tcpcc_pick(tcp_cc, tcp_cc_given, why, sizeof(why))) {
		fprintf(stderr, "msgd: %s\n", why);
		return 2;
	}
	if (auth_init()) {
		fprintf(stderr, "msgd: libsodium failed to initialise\n");
		return 1;
	}
	if (auth_load_key(key_file, g_msgd.site_key, why, sizeof(why))) {
		fprintf(stderr, "msgd: %s\n", why);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	mbuf_set_unmapper(loop_unmap_later);
	g_msgd.listen_fd = listen_on(listen_spec, port_fd);
	if (g_msgd.listen_fd < 0)
		return 1;
	if (loop_init(&loop, 1024) || spawn_signals_start() || server_start(g_msgd.listen_fd) ||
	    ticker_start())
		return 1;
	priority_start(); /* after the signals are the loop's (signalfd) */
	loop_run(&loop);
	for (struct job *j = g_msgd.jobs; j; j = j->next)
		spawn_kill_all(j, SIGKILL);
	loop_exit(&loop);
	if (priority_boosts())
		log_info("the watchdog moved the loop to real time %u times", priority_boosts());
	return 0;
}
