# shellcheck shell=bash
# tests/cluster/lib.sh: a cluster of msg hosts in network namespaces, on one
# machine. Sourced by the cluster tests (netns.sh and later partition tests);
# the caller runs with `set -euo pipefail`.
#
#   cl_require                 root and `ip netns`, or skip (exit 77) / fail in CI
#   cl_up M BINDIR             M hosts h1..hM on a switch, msgd started in each
#   cl_exec I CMD...           run CMD inside host I (1-based)
#   cl_msgrun I ARGS...        msgrun from host I on the cluster's host file
#   cl_cut I / cl_heal I       take host I's link down / up (partitions)
#   cl_shape I RATE            limit host I's outgoing link (tc tbf), e.g. 1gbit
#   cl_msgd_alive I            true while host I's msgd runs
#   cl_down                    kill our msgd, delete our namespaces (trap EXIT)
#
# Topology (M hosts), everything inside namespaces named with our pid $$:
#
#   msg-h1-$$             msg-h2-$$            ...   msg-hM-$$
#   eth0 10.77.0.1/24     eth0 10.77.0.2/24          eth0 10.77.0.M/24
#   msgd :7420            msgd :7420                 msgd :7420
#     |                     |                          |
#   p1                    p2                         pM          (veth peers)
#   +---------------------- br0 in msg-sw-$$ -----------------------+
#
# The root namespace is not touched: no address, route or link is added
# there. cl_cut I sets host I's switch port (pI) down: every other host, and
# whatever runs in host I, loses host I at once, as when a cable is pulled.
#
# Variables after cl_up: CL_M (hosts), CL_DIR (scratch, logs), CL_KEY (site key),
# CL_HOSTFILE, CL_BIN, CL_PIDS[I] (msgd pid of host I).

CL_PREFIX=${CL_PREFIX:-msg}
CL_NET=${CL_NET:-10.77.0}
CL_PORT=${CL_PORT:-7420}
# shellcheck disable=SC2034  # read by the tests that source this file
CL_M=0
CL_JOBS=0
CL_DIR=
CL_KEY=
CL_HOSTFILE=
CL_BIN=
CL_SW="${CL_PREFIX}-sw-$$"
declare -a CL_PIDS=()
declare -a CL_NS=()

cl_log() { printf '[cluster] %s\n' "$*" >&2; }

# Not able to run here: a skip (77) outside CI, a failure in CI.
cl_cannot() {
	if [ "${CI:-}" = true ]; then
		cl_log "FAIL (CI=true, a skip is a failure): $*"
		exit 1
	fi
	cl_log "SKIP: $*"
	exit 77
}

cl_require() {
	[ "$(id -u)" -eq 0 ] || cl_cannot "needs root for network namespaces"
	command -v ip >/dev/null 2>&1 || cl_cannot "no 'ip' command (iproute2)"
	command -v timeout >/dev/null 2>&1 || cl_cannot "no 'timeout' command (coreutils)"
	local probe="${CL_PREFIX}-probe-$$"
	if ! ip netns add "$probe" 2>/dev/null; then
		cl_cannot "'ip netns add' does not work here"
	fi
	if ! ip netns exec "$probe" ip link set lo up 2>/dev/null ||
		! ip -n "$probe" link add "${CL_PREFIX}v0" type veth peer name "${CL_PREFIX}v1" 2>/dev/null; then
		ip netns del "$probe" 2>/dev/null || true
		cl_cannot "'ip netns exec' or veth pairs do not work here"
	fi
	ip netns del "$probe"
}

cl_ns() { printf '%s-h%s-%s' "$CL_PREFIX" "$1" "$$"; }

cl_exec() {
	local i=$1
	shift
	ip netns exec "$(cl_ns "$i")" "$@"
}

# Host I's msgd accepts connections on its address.
cl_listening() {
	local i=$1
	[ -n "$(cl_exec "$i" ss -Hltn "sport = :$CL_PORT" 2>/dev/null)" ]
}

cl_msgd_alive() {
	local pid=${CL_PIDS[$1]:-}
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

cl_start_msgd() {
	local i=$1
	# shellcheck disable=SC2086 # CL_MSGD_OPTS: extra msgd options, split
	ip netns exec "$(cl_ns "$i")" "$CL_BIN/msgd" --key-file "$CL_KEY" \
		--listen "$CL_NET.$i:$CL_PORT" -v ${CL_MSGD_OPTS:-} >"$CL_DIR/msgd-h$i.log" 2>&1 &
	CL_PIDS[i]=$!
}

cl_up() {
	local m=$1 i ns t
	CL_BIN=$2
	# shellcheck disable=SC2034
	CL_M=$m
	if [ ! -x "$CL_BIN/msgd" ] || [ ! -x "$CL_BIN/msgrun" ]; then
		cl_log "no msgd/msgrun in $CL_BIN"
		return 1
	fi
	CL_DIR=$(mktemp -d "${TMPDIR:-/tmp}/msg-cluster-$$.XXXXXX")
	CL_KEY=$CL_DIR/site.key
	CL_HOSTFILE=$CL_DIR/hosts
	# site key: 64 hex digits, mode 0600, owned by us
	(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$CL_KEY")
	: >"$CL_HOSTFILE"

	ip netns add "$CL_SW"
	CL_NS+=("$CL_SW")
	ip -n "$CL_SW" link set lo up
	ip -n "$CL_SW" link add br0 type bridge
	ip -n "$CL_SW" link set br0 up
	for ((i = 1; i <= m; i++)); do
		ns=$(cl_ns "$i")
		ip netns add "$ns"
		CL_NS+=("$ns")
		ip -n "$ns" link set lo up
		ip -n "$ns" link add eth0 type veth peer name "p$i" netns "$CL_SW"
		ip -n "$ns" addr add "$CL_NET.$i/24" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$CL_SW" link set "p$i" master br0
		ip -n "$CL_SW" link set "p$i" up
		printf '%s.%s:%s slots=1\n' "$CL_NET" "$i" "$CL_PORT" >>"$CL_HOSTFILE"
	done
	for ((i = 1; i <= m; i++)); do
		cl_start_msgd "$i"
	done
	# every msgd listening within 10 s
	for ((i = 1; i <= m; i++)); do
		for ((t = 0; t < 100; t++)); do
			cl_listening "$i" && break
			cl_msgd_alive "$i" || break
			sleep 0.1
		done
		if ! cl_listening "$i"; then
			cl_log "msgd on host $i is not listening; its log:"
			cat "$CL_DIR/msgd-h$i.log" >&2 || true
			return 1
		fi
	done
	# the switch forwards: host 1 reaches every other host's msgd
	for ((i = 2; i <= m; i++)); do
		cl_reach 1 "$i" || {
			cl_log "host 1 cannot reach host $i"
			return 1
		}
	done
	cl_log "up: $m hosts, msgd pids ${CL_PIDS[*]}, host file $CL_HOSTFILE"
}

# A TCP connection from host I to host J's msgd succeeds within 3 s.
cl_reach() {
	cl_exec "$1" timeout 3 bash -c "exec 3<>/dev/tcp/$CL_NET.$2/$CL_PORT" 2>/dev/null
}

# A fresh job directory for each msgrun (msgrun removes it at the end).
cl_jobdir() {
	CL_JOBS=$((CL_JOBS + 1))
	printf '%s/job%s' "$CL_DIR" "$CL_JOBS"
}

# msgrun from inside host I on the cluster (bounded by CL_TIMEOUT seconds).
cl_msgrun() {
	local i=$1 dir
	shift
	dir=$(cl_jobdir)
	cl_exec "$i" timeout -k 5 "${CL_TIMEOUT:-60}" "$CL_BIN/msgrun" \
		--hostfile "$CL_HOSTFILE" --key-file "$CL_KEY" --job-dir "$dir" "$@"
}

cl_cut() { ip -n "$CL_SW" link set "p$1" down; }
cl_heal() { ip -n "$CL_SW" link set "p$1" up; }

# Host I sends at most RATE (tc syntax: 1gbit, 100mbit); RATE "off" removes it.
cl_shape() {
	local ns
	ns=$(cl_ns "$1")
	tc -n "$ns" qdisc del dev eth0 root 2>/dev/null || true
	[ "$2" = off ] && return 0
	tc -n "$ns" qdisc add dev eth0 root tbf rate "$2" burst 256kbit latency 50ms
}

cl_down() {
	local i pid ns t p
	for i in "${!CL_PIDS[@]}"; do
		pid=${CL_PIDS[$i]}
		kill -TERM "$pid" 2>/dev/null || true
	done
	for i in "${!CL_PIDS[@]}"; do
		pid=${CL_PIDS[$i]}
		for ((t = 0; t < 30; t++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	CL_PIDS=()
	# anything still running inside our namespaces was started by us
	for ns in "${CL_NS[@]}"; do
		for p in $(ip netns pids "$ns" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null || true
		done
	done
	for ns in "${CL_NS[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	CL_NS=()
	if [ -n "$CL_DIR" ] && [ -d "$CL_DIR" ]; then
		rm -rf -- "$CL_DIR"
	fi
	CL_DIR=
}

# On failure: the daemons' logs.
cl_dump_logs() {
	local f
	for f in "$CL_DIR"/msgd-h*.log; do
		[ -s "$f" ] || continue
		printf '%s\n' "---- ${f##*/}" >&2
		tail -n 40 "$f" >&2
	done
}

# The test script's frame: `ok=1` at its end marks success; on any exit the
# job it started in the background ($CL_JOB, a pid) is stopped, the logs are
# shown if it failed, and the cluster is taken down.
ok=0
CL_JOB=
cl_finish() {
	local rc=$?
	if [ -n "$CL_JOB" ]; then kill "$CL_JOB" 2>/dev/null || true; fi
	if [ "$ok" -ne 1 ] && [ -n "$CL_DIR" ]; then
		cl_dump_logs
	fi
	cl_down
	exit "$rc"
}
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
pass() { echo "ok: $*"; }
cl_trap() {
	trap cl_finish EXIT
	trap 'exit 130' INT TERM
}
