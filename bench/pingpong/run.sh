#!/usr/bin/env bash
# bench/pingpong/run.sh: 8-byte one-way latency and 1 MiB bandwidth, msg
# against Open MPI, in one run, on two paths:
#
#   same host    msgrun -n 2 --virtual-hosts 1      (rings between the ranks,
#                                                    docs/datapath.md; the default)
#                msgrun ... --no-shm                (both ranks through one msgd)
#                mpirun --mca pml ob1 --mca btl self,vader       (shared memory)
#   cross host   msgrun -n 2 --virtual-hosts 2      (two msgd over loopback TCP)
#                msgrun ... --tcp-congestion system (the system's congestion
#                                                    control, as Open MPI's sockets)
#                mpirun --mca pml ob1 --mca btl self,tcp --mca btl_tcp_if_include lo
#
# msgd gives its connections cubic (else reno), not a pacing default such
# as bbr, which reorders loopback segments (docs/datapath.md §11); the
# "system cc" row is msg on the same congestion control as Open MPI. Each
# cross-host run also counts the TCP segments the kernel retransmitted
# (/proc/net/snmp; system-wide, so a quiet machine's figure).
# NETNS_CC=NAME (root): the whole run inside a fresh network namespace
# whose default congestion control is NAME (e.g. reno: Open MPI on it too).
#
# The four runs are interleaved REPS times (so load from elsewhere hits all
# of them alike); the table shows medians and best runs, and the ratios
# msg / Open MPI.
# Targets (DESIGN goals, not pass/fail): same-host latency <= 3x vader,
# cross-host latency <= 1.0x Open MPI tcp, bandwidth >= 0.9x on both.
#
# Usage: bench/pingpong/run.sh [BUILD_DIR]     (default: build)
# Env:   REPS (5), LAT_ITERS (20000), BW_MSGS (200), RUN_TIMEOUT (300 s),
#        NETNS_CC (unset)
# Exit:  0 when every run finished (targets missed or not), 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$root/build}
bin=$build/bin
reps=${REPS:-5}
lat_iters=${LAT_ITERS:-20000}
bw_msgs=${BW_MSGS:-200}
tmo=${RUN_TIMEOUT:-300}

for f in msgrun msgd pingpong_msg pingpong_mpi; do
	if [ ! -x "$bin/$f" ]; then
		echo "run.sh: $bin/$f missing (build: cmake -S $root -B $build -G Ninja &&" \
			"ninja -C $build msgrun msgd pingpong_msg pingpong_mpi)" >&2
		exit 1
	fi
done
command -v mpirun >/dev/null || {
	echo "run.sh: no mpirun (scripts/setup.sh installs openmpi-bin)" >&2
	exit 1
}

if [ -n "${NETNS_CC:-}" ]; then
	ns=msg-pingpong-$$
	ip netns add "$ns" || exit 1
	trap 'ip netns del "$ns"' EXIT
	ip -n "$ns" link set lo up
	if ! ip netns exec "$ns" sh -c "echo $NETNS_CC > /proc/sys/net/ipv4/tcp_congestion_control"; then
		echo "run.sh: the namespace refuses congestion control '$NETNS_CC'" >&2
		exit 1
	fi
	NETNS_CC= ip netns exec "$ns" "$0" "$build"
	exit
fi

out=$(mktemp -d "${TMPDIR:-/tmp}/msg-pingpong.XXXXXX")
trap 'rm -rf -- "$out"' EXIT

mpi=(mpirun --allow-run-as-root --oversubscribe -np 2 --mca pml ob1)
declare -A cmd
cmd[msg_same]="$bin/msgrun -n 2 -r 1 --virtual-hosts 1 $bin/pingpong_msg $lat_iters $bw_msgs"
cmd[msgd_same]="$bin/msgrun -n 2 -r 1 --virtual-hosts 1 --no-shm $bin/pingpong_msg $lat_iters $bw_msgs"
cmd[mpi_same]="${mpi[*]} --mca btl self,vader $bin/pingpong_mpi $lat_iters $bw_msgs"
cmd[msg_cross]="$bin/msgrun -n 2 -r 1 --virtual-hosts 2 $bin/pingpong_msg $lat_iters $bw_msgs"
cmd[msg_cross_sys]="$bin/msgrun -n 2 -r 1 --virtual-hosts 2 --tcp-congestion system $bin/pingpong_msg $lat_iters $bw_msgs"
cmd[mpi_cross]="${mpi[*]} --mca btl self,tcp --mca btl_tcp_if_include lo $bin/pingpong_mpi $lat_iters $bw_msgs"
order=(msg_same msgd_same mpi_same msg_cross msg_cross_sys mpi_cross)

# TCP segments retransmitted so far, system-wide
retrans() { awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "RetransSegs") c = i; h = 1 } else print $c }' /proc/net/snmp; }

echo "# pingpong: $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"reps=$reps lat_iters=$lat_iters bw_msgs=$bw_msgs"
for k in "${order[@]}"; do
	echo "#   $k: ${cmd[$k]}"
done
echo "#   TCP congestion control: system $(cat /proc/sys/net/ipv4/tcp_congestion_control)," \
	"allowed to all: $(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)"

failed=0
for ((i = 1; i <= reps; i++)); do
	for k in "${order[@]}"; do
		# shellcheck disable=SC2086  # the command lines are word lists
		r0=$(retrans)
		if line=$(timeout -k 5 "$tmo" ${cmd[$k]} 2>"$out/$k.$i.err" | grep '^pingpong '); then
			[[ $k == *cross* ]] && line="$line retrans=$(($(retrans) - r0))"
			echo "$line" >>"$out/$k"
			printf '#   rep %d %-9s %s\n' "$i" "$k" "${line#pingpong }"
		else
			echo "#   rep $i $k FAILED (exit or timeout); stderr:" >&2
			sed 's/^/#     /' "$out/$k.$i.err" >&2
			failed=1
		fi
	done
done

# stat FIELD FILE median|min|max
stat() {
	[ -s "$2" ] || {
		echo nan
		return
	}
	sed -n "s/.* $1=\([0-9.]*\).*/\1/p" "$2" | sort -g | awk -v want="$3" '{ v[NR] = $1 } END {
		if (want == "min") print v[1]
		else if (want == "max") print v[NR]
		else if (NR % 2) print v[(NR + 1) / 2]
		else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b == 0) print "nan"; else printf "%.2f", a / b }'; }

# verdict RATIO OP LIMIT: "met" or "MISSED"
verdict() {
	awk -v r="$1" -v op="$2" -v l="$3" 'BEGIN {
		if (r == "nan") { print "n/a"; exit }
		ok = (op == "<=") ? (r + 0 <= l + 0) : (r + 0 >= l + 0)
		print ok ? "met" : "MISSED" }'
}

echo
printf '%-24s | %-21s | %-21s | %-24s\n' "" "8 B one-way latency" "1 MiB bandwidth" "ratio msg/Open MPI"
printf '%-24s | %10s %10s | %10s %10s | %-24s\n' path "msg us" "OMPI us" "msg GB/s" "OMPI GB/s" "latency   bandwidth"
printf -- '-------------------------+-----------------------+-----------------------+-------------------------\n'
for path in same msgd cross cross_sys; do
	mine=msg_$path theirs=mpi_$path
	[ "$path" = msgd ] && mine=msgd_same theirs=mpi_same
	[ "$path" = cross_sys ] && theirs=mpi_cross
	# median of the runs, then the best run of each side (least disturbed)
	for kind in median best; do
		if [ "$kind" = median ]; then
			lo=median hi=median
		else
			lo=min hi=max
		fi
		ml=$(stat lat_us "$out/$mine" "$lo")
		ol=$(stat lat_us "$out/$theirs" "$lo")
		mb=$(stat bw_gbs "$out/$mine" "$hi")
		ob=$(stat bw_gbs "$out/$theirs" "$hi")
		rl=$(ratio "$ml" "$ol")
		rb=$(ratio "$mb" "$ob")
		case $path in
		same | msgd)
			name="same host"
			[ "$path" = msgd ] && name="same, --no-shm"
			vl=$(verdict "$rl" "<=" 3)
			tl="<=3"
			;;
		*)
			name="cross host"
			[ "$path" = cross_sys ] && name="cross, system cc"
			vl=$(verdict "$rl" "<=" 1.0)
			tl="<=1"
			;;
		esac
		vb=$(verdict "$rb" ">=" 0.9)
		printf '%-24s | %10s %10s | %10s %10s | %6sx (%s %s)  %5sx (>=0.9 %s)\n' "$name, $kind" \
			"$ml" "$ol" "$mb" "$ob" "$rl" "$tl" "$vl" "$rb" "$vb"
	done
done
echo "# Open MPI: same host = vader (shared memory), cross host = tcp over lo." \
	"median: of $reps runs; best: lowest latency / highest bandwidth of each side."
echo "# TCP retransmits per cross-host run (median): msg $(stat retrans "$out/msg_cross" median)," \
	"msg on the system's $(stat retrans "$out/msg_cross_sys" median), Open MPI $(stat retrans "$out/mpi_cross" median)"
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if awk -v l="$(cut -d' ' -f1 /proc/loadavg)" -v c="$(nproc)" 'BEGIN { exit !(l > c) }'; then
	echo "# WARNING: the 1-minute load exceeds the $(nproc) cores: other work shared the" \
		"CPUs, so these figures understate both sides and their ratios are noisy."
fi
exit "$failed"
