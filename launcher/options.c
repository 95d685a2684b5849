/* msgrun's command line. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "wire/frame.h"

void usage(FILE *f)
{
	fprintf(f,
		"usage: msgrun -n N [-r R] [options] program [args...]\n"
		"\n"
		"Runs N logical processes of program, each as R replicas on different hosts.\n"
		"\n"
		"  -n, --np N               number of logical processes (ranks)\n"
		"  -r, --replicas R         replicas per rank (default 1)\n"
		"      --virtual-hosts M    start M virtual hosts on this machine\n"
		"                           (default max(R, 2); the embedded default)\n"
		"      --hostfile FILE      run on the hosts listed (Open MPI syntax:\n"
		"                           'name[:port] slots=K'); their msgd must run\n"
		"      --key-file FILE      site key the hosts' msgd were started with\n"
		"                           (default $MSG_KEY_FILE)\n"
		"      --mode first|vote    comparison of replicated messages (default first)\n"
		"      --digest sha256|xxh3 digest the copies are compared by: sha256\n"
		"                           (default; a forged copy cannot match) or\n"
		"                           xxh3 (XXH3-128, ~10x cheaper; accidental\n"
		"                           faults only, not a malicious replica)\n"
		"      --no-shm             same-host messages go through msgd, not from\n"
		"                           process to process through shared-memory rings\n"
		"                           (the rings are used, by default, when r = 1 and\n"
		"                           every rank runs on one host; docs/datapath.md);\n"
		"                           also MSG_SHM=0 (--shm / MSG_SHM=1: the rings)\n"
		"      --no-direct          messages between ranks on different hosts go\n"
		"                           through both msgd, not process to process over\n"
		"                           a TCP stream the daemons set up (the streams are\n"
		"                           used, by default, when r = 1; docs/datapath.md);\n"
		"                           also MSG_DIRECT=0 (--direct / MSG_DIRECT=1: on)\n"
		"      --output leader|all  show each byte once (default), or every\n"
		"                           replica's output prefixed [rank.replica]\n"
		"      --job-dir DIR        where replicas get their working directories\n"
		"                           (default a fresh directory under $TMPDIR or /tmp)\n"
		"      --keep-job-dir       do not remove the job directory at the end\n"
		"      --timeout SECONDS    end the job (exit 124) if it runs longer\n"
		"      --stats              print each host's message counters at the end\n"
		"      --events FILE        write the event log (JSON lines): launches,\n"
		"                           suspicions, fences, degraded groups, job end\n"
		"      --report             print a summary of the job's events at the end\n"
		"      --inject SCHEDULE    inject faults: 'KIND TARGET@WHEN; ...' with KIND\n"
		"                           kill|stall|corrupt|kill-host|cut|hold|release,\n"
		"                           TARGET rank.replica or host (or ? drawn from\n"
		"                           --inject-seed), WHEN 1.5s|300ms|send=N;\n"
		"                           'cut H MS@WHEN' heals after MS ms\n"
		"      --inject-seed N      seed for ? targets (default 1)\n"
		"      --hb-period MS       heartbeat period between daemons (default 50)\n"
		"      --hb-timeout MS      a host silent this long is lost (default 250)\n"
		"      --no-regen           fence faulty replicas but do not regenerate them\n"
		"      --ckpt-engine auto|user|kmod  how the virtual hosts' msgd capture a\n"
		"                           process to move or copy it: kmod = through\n"
		"                           /dev/msgmig (msgmig.ko; fails at start without\n"
		"                           it), user = libmsg, auto (default) = kmod if\n"
		"                           the device is there\n"
		"      --tcp-congestion LIST|system  the virtual hosts' msgd TCP congestion\n"
		"                           control: the first of LIST allowed (default\n"
		"                           cubic,reno), system = the system's default\n"
		"      --keep-fenced[=DIR]  keep each fenced replica's core dump as\n"
		"                           DIR/G.K.PID.core (default DIR ./msg-fenced;\n"
		"                           with --hostfile, DIR on each replica's host)\n"
		"      --stall-min MS       lower bound of the adaptive stall detector\n"
		"                           (default 750)\n"
		"      --test-switch NAME   test only: switch a protective mechanism off\n"
		"                           (no-anysrc-protocol, no-dedupe, no-exit-detect,\n"
		"                           no-heartbeat-detect, no-lag-detect,\n"
		"                           no-mismatch-fence, fixed-quorum,\n"
		"                           isolated-talks; and\n"
		"                           fail-restores: every restore fails once its\n"
		"                           image has arrived)\n"
		"  -v, --verbose            more detail (repeat for daemon logs)\n"
		"  -h, --help               this text\n"
		"      --version            version\n");
}

int die(const char *fmt, ...)
{
	va_list ap;

	fputs("msgrun: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

static int parse_u32(const char *s, const char *what, uint32_t min, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !*s || v < min || v > max)
		return die("%s must be a whole number from %u to %u, not '%s'", what, min, max, s);
	*out = (uint32_t)v;
	return 0;
}

int parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_VH = 256, O_HF, O_KEY, O_MODE, O_OUT, O_DIR, O_KEEP, O_TIMEOUT, O_STATS,
	       O_TEST, O_VERSION, O_EVENTS, O_REPORT, O_INJECT, O_SEED, O_HBP, O_HBT, O_STALL,
	       O_NOREGEN, O_ENGINE, O_TCPCC, O_DIGEST, O_KEEPF, O_SHM, O_NOSHM, O_DIRECT, O_NODIRECT };
	static const struct option lo[] = {
		{ "np", required_argument, NULL, 'n' },
		{ "replicas", required_argument, NULL, 'r' },
		{ "virtual-hosts", required_argument, NULL, O_VH },
		{ "hostfile", required_argument, NULL, O_HF },
		{ "key-file", required_argument, NULL, O_KEY },
		{ "mode", required_argument, NULL, O_MODE },
		{ "digest", required_argument, NULL, O_DIGEST },
		{ "shm", no_argument, NULL, O_SHM },
		{ "no-shm", no_argument, NULL, O_NOSHM },
		{ "direct", no_argument, NULL, O_DIRECT },
		{ "no-direct", no_argument, NULL, O_NODIRECT },
		{ "output", required_argument, NULL, O_OUT },
		{ "job-dir", required_argument, NULL, O_DIR },
		{ "keep-job-dir", no_argument, NULL, O_KEEP },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "stats", no_argument, NULL, O_STATS },
		{ "test-switch", required_argument, NULL, O_TEST },
		{ "events", required_argument, NULL, O_EVENTS },
		{ "report", no_argument, NULL, O_REPORT },
		{ "inject", required_argument, NULL, O_INJECT },
		{ "inject-seed", required_argument, NULL, O_SEED },
		{ "hb-period", required_argument, NULL, O_HBP },
		{ "hb-timeout", required_argument, NULL, O_HBT },
		{ "stall-min", required_argument, NULL, O_STALL },
		{ "no-regen", no_argument, NULL, O_NOREGEN },
		{ "keep-fenced", optional_argument, NULL, O_KEEPF },
		{ "ckpt-engine", required_argument, NULL, O_ENGINE },
		{ "tcp-congestion", required_argument, NULL, O_TCPCC },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->r = 1;
	o->inject_seed = 1;
	o->key_file = getenv("MSG_KEY_FILE");
	o->flags |= JOB_F_SHM; /* the rings where a job can use them */
	if (getenv("MSG_SHM") && !strcmp(getenv("MSG_SHM"), "0"))
		o->flags &= ~JOB_F_SHM;
	o->flags |= JOB_F_DIRECT; /* streams across hosts where a job can use them */
	if (getenv("MSG_DIRECT") && !strcmp(getenv("MSG_DIRECT"), "0"))
		o->flags &= ~JOB_F_DIRECT;
	while ((c = getopt_long(argc, argv, "+n:r:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_u32(optarg, "-n", 1, 1u << 20, &o->n))
				return 2;
			break;
		case 'r':
			if (parse_u32(optarg, "-r", 1, 16, &o->r))
				return 2;
			break;
		case O_VH:
			if (parse_u32(optarg, "--virtual-hosts", 1, 1024, &o->vhosts))
				return 2;
			break;
		case O_HF: o->hostfile = optarg; break;
		case O_KEY: o->key_file = optarg; break;
		case O_MODE:
			if (strcmp(optarg, "first") && strcmp(optarg, "vote"))
				return die("--mode is 'first' or 'vote', not '%s'", optarg);
			o->mode = !strcmp(optarg, "vote") ? CMP_VOTE : CMP_FIRST;
			break;
		case O_DIGEST:
			if (strcmp(optarg, "sha256") && strcmp(optarg, "xxh3"))
				return die("--digest is 'sha256' or 'xxh3', not '%s'", optarg);
			if (!strcmp(optarg, "xxh3"))
				o->flags |= JOB_F_DIGEST_XXH3;
			else
				o->flags &= ~JOB_F_DIGEST_XXH3;
			break;
		case O_OUT:
			if (strcmp(optarg, "leader") && strcmp(optarg, "all"))
				return die("--output is 'leader' or 'all', not '%s'", optarg);
			o->output_all = !strcmp(optarg, "all");
			break;
		case O_DIR: o->job_dir = optarg; break;
		case O_KEEP: o->keep_dir = true; break;
		case O_TIMEOUT: {
			char *end;

			o->timeout = strtod(optarg, &end);
			if (*end || o->timeout <= 0)
				return die("--timeout wants a positive number of seconds, not '%s'", optarg);
			break;
		}
		case O_STATS: o->stats = true; break;
		case O_TEST:
			if (!strcmp(optarg, "no-anysrc-protocol"))
				o->flags |= JOB_F_TEST_NO_ANYSRC_PROTOCOL;
			else if (!strcmp(optarg, "no-dedupe"))
				o->flags |= JOB_F_TEST_NO_DEDUPE;
			else if (!strcmp(optarg, "no-exit-detect"))
				o->flags |= JOB_F_TEST_NO_EXIT_DETECT;
			else if (!strcmp(optarg, "no-heartbeat-detect"))
				o->flags |= JOB_F_TEST_NO_HB_DETECT;
			else if (!strcmp(optarg, "no-lag-detect"))
				o->flags |= JOB_F_TEST_NO_LAG_DETECT;
			else if (!strcmp(optarg, "no-mismatch-fence"))
				o->flags |= JOB_F_TEST_NO_MISMATCH_FENCE;
			else if (!strcmp(optarg, "fixed-quorum"))
				o->flags |= JOB_F_TEST_FIXED_QUORUM;
			else if (!strcmp(optarg, "isolated-talks"))
				o->flags |= JOB_F_TEST_ISOLATED_TALKS;
			else if (!strcmp(optarg, "fail-restores"))
				o->flags |= JOB_F_TEST_FAIL_RESTORES;
			else
				return die("unknown --test-switch '%s'", optarg);
			break;
		case O_EVENTS: o->events_path = optarg; break;
		case O_NOREGEN: o->flags |= JOB_F_NO_REGEN; break;
		case O_KEEPF:
			o->keep_fenced = optarg ? optarg : "msg-fenced";
			if (!*o->keep_fenced || strlen(o->keep_fenced) > 512)
				return die("--keep-fenced wants a directory of 1 to 512 characters");
			break;
		case O_SHM: o->flags |= JOB_F_SHM; break;
		case O_NOSHM: o->flags &= ~JOB_F_SHM; break;
		case O_DIRECT: o->flags |= JOB_F_DIRECT; break;
		case O_NODIRECT: o->flags &= ~JOB_F_DIRECT; break;
		case O_REPORT: o->report = true; break;
		case O_ENGINE:
			if (strcmp(optarg, "auto") && strcmp(optarg, "user") && strcmp(optarg, "kmod"))
				return die("--ckpt-engine is auto, user or kmod, not '%s'", optarg);
			o->ckpt_engine = optarg;
			break;
		case O_TCPCC:
			if (!*optarg || strlen(optarg) > 200)
				return die("--tcp-congestion wants a list of names or 'system'");
			o->tcp_cc = optarg;
			break;
		case O_INJECT: o->inject = optarg; break;
		case O_SEED: {
			char *end;

			o->inject_seed = strtoull(optarg, &end, 10);
			if (*end || !*optarg)
				return die("--inject-seed wants a whole number, not '%s'", optarg);
			break;
		}
		case O_HBP:
			if (parse_u32(optarg, "--hb-period", 1, 60000, &o->hb_period_ms))
				return 2;
			break;
		case O_HBT:
			if (parse_u32(optarg, "--hb-timeout", 1, 600000, &o->hb_timeout_ms))
				return 2;
			break;
		case O_STALL:
			if (parse_u32(optarg, "--stall-min", 1, 3600000, &o->stall_min_ms))
				return 2;
			break;
		case 'v': o->verbose++; break;
		case 'h': usage(stdout); exit(0);
		case O_VERSION: printf("msgrun (msg) 0.1\n"); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (!o->n)
		return die("-n N is required (try --help)");
	if (optind >= argc)
		return die("no program to run (try --help)");
	if (o->hostfile && o->vhosts)
		return die("--hostfile and --virtual-hosts exclude each other");
	if (o->hostfile && o->ckpt_engine)
		return die("--ckpt-engine applies to the virtual hosts msgrun starts; with "
			   "--hostfile, start each host's msgd with --ckpt-engine");
	if (o->hostfile && o->tcp_cc)
		return die("--tcp-congestion applies to the virtual hosts msgrun starts; with "
			   "--hostfile, start each host's msgd with --tcp-congestion");
	if (!o->hostfile && !o->vhosts)
		o->vhosts = o->r > 2 ? o->r : 2;
	if (!o->hostfile && o->r > o->vhosts)
		return die("-r %u needs at least %u hosts: no two replicas of a rank may share "
			   "a host, and there are %u", o->r, o->r, o->vhosts);
	o->argv = argv + optind;
	o->argc = argc - optind;
	return 0;
}
