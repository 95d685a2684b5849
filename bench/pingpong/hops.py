#!/usr/bin/env python3
"""Per-hop times of the cross-host daemon path, from a `perf script` text dump
(bench/pingpong/hops.sh makes one). For every L_SEND (the sender's 2-vector
writev to its msgd) it follows the chain

  sender writev -> msgd A runs -> msgd A wakes msgd B (the TCP data landed)
  -> msgd B runs -> the receiver's read of the frame header returns

and prints the median and quartiles of each step in microseconds. A chain it
cannot follow (another event interleaved in an unexpected order) is skipped.
"""
import re
import statistics as st
import sys

RX = re.compile(r'^\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)$')


def load(path):
    ev = []
    for line in open(path, errors='replace'):
        m = RX.match(line)
        if m:
            ev.append((m.group(1), int(m.group(2)), float(m.group(4)) * 1e6,
                       m.group(5), m.group(6)))
    return ev


def main(path):
    ev = load(path)
    apps = sorted({p for c, p, _, _, _ in ev if c == 'pingpong_msg'})
    names = ['sender writev -> msgd A runs', 'msgd A runs -> wakes msgd B',
             'wake -> msgd B runs', 'msgd B runs -> receiver has it', 'one way, total']
    hops = {k: [] for k in names}
    n = len(ev)

    def find(start, pred, limit=3000):
        for k in range(start, min(n, start + limit)):
            if pred(ev[k]):
                return k
        return None

    def runs(pid):
        return lambda x: ((x[3] == 'sched:sched_switch' and ('next_pid=%d ' % pid) in x[4] + ' ')
                          or (x[1] == pid and x[3] == 'syscalls:sys_exit_io_uring_enter'))

    for i, (c, p, t, e, tr) in enumerate(ev):
        if c != 'pingpong_msg' or e != 'syscalls:sys_enter_writev' or 'vlen: 0x00000002' not in tr:
            continue
        other = [a for a in apps if a != p]
        if len(other) != 1:
            continue
        k = find(i, lambda x: x[1] == p and x[3] == 'sched:sched_waking' and 'comm=msgd' in x[4], 20)
        if k is None:
            continue
        da = int(re.search(r'pid=(\d+)', ev[k][4]).group(1))
        k1 = find(k, runs(da))
        k2 = k1 is not None and find(k1, lambda x: x[1] == da and x[3] == 'sched:sched_waking'
                                     and 'comm=msgd' in x[4])
        if not k2:
            continue
        db = int(re.search(r'pid=(\d+)', ev[k2][4]).group(1))
        k3 = find(k2, runs(db))
        k4 = k3 is not None and find(k3, lambda x: x[1] == other[0]
                                     and x[3] == 'syscalls:sys_exit_recvmsg')
        if not k4:
            continue
        ts = [t, ev[k1][2], ev[k2][2], ev[k3][2], ev[k4][2]]
        for j in range(4):
            hops[names[j]].append(ts[j + 1] - ts[j])
        hops[names[4]].append(ts[4] - ts[0])
    for k, v in hops.items():
        if len(v) >= 4:
            q = st.quantiles(v, n=4)
            print('%-34s n=%5d  median %6.1f us  (p25 %6.1f, p75 %6.1f)' % (k, len(v), st.median(v), q[0], q[2]))
        else:
            print('%-34s no complete chain' % k)


if __name__ == '__main__':
    main(sys.argv[1])
