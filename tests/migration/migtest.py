#!/usr/bin/env python3
"""Migration and regeneration against real daemons (msgrun, msgctl).

  migtest.py move  --app A --plan single|seq4|conc2|conc4 [--bin DIR]
      r = 1, n = 4 (so replication cannot hide a broken migration). Ranks are
      moved during the run with msgctl migrate onto hosts that held nothing;
      once a move is restored its source host is killed (msgctl kill-host):
      the job must finish with the checked answer of the sequential reference
      (no residual dependency on any source host).
        single  rank 1: host 1 -> 4; kill host 1                 (6 hosts)
        seq4    rank 1: host 1 -> 4 -> 5 -> 6 -> 7, one after the other,
                each source killed once the move is restored     (9 hosts)
        conc2   ranks 1 and 2 at once -> hosts 4, 5; kill 1, 2   (6 hosts)
        conc4   ranks 0..3 at once -> hosts 4..7; kill 0..3      (9 hosts)
      Four killed hosts need 9: a daemon that cannot reach a majority of the
      job's hosts fences its own processes (DESIGN rule 3), and lost hosts
      still count until add-host replaces them.
  migtest.py recur [--losses 10] [--iters K] [--bin DIR]
      Dirichlet n = 4, r = 3 on 6 hosts: --losses host losses spread over the
      run, each repaired (every rank 3/3 verified) and the host replaced with
      msgctl add-host before the next; same checksum as the reference.
  migtest.py regen --fault kill-host|corrupt|stall [--n 16] [--mode M] [--bin DIR]
      Dirichlet n = 16 (or --n), r = 3 on 6 virtual hosts. The fault is injected while
      it runs; then msgctl status is polled while the job still runs until every
      rank shows 3 verified live replicas again (after the fault was detected:
      its fences are in the event log). The checksum must equal the sequential
      reference's, and msgrun must have waited for every replica at the end
      (no laggard event). corrupt runs in vote mode (or --mode).

Exit 0 = pass. Every wait is bounded."""
import argparse
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import migjob  # noqa: E402

PLANS = {
    # plan: hosts, [(rank, [hosts it moves to, in order])], concurrent
    "single": (6, [(1, [4])], False),
    "seq4": (9, [(1, [4, 5, 6, 7])], False),
    "conc2": (6, [(1, [4]), (2, [5])], True),
    "conc4": (9, [(0, [4]), (1, [5]), (2, [6]), (3, [7])], True),
}


def fail(msg, job=None):
    print("FAIL:", msg + (job.tail() if job else ""), flush=True)
    if job and job.running() and os.environ.get("MIGTEST_HOLD"):
        # debugging a hang: the job stays up this long (gdb, /proc, msgctl)
        print("holding job %s (msgrun pid %d) for %ss" % (job.dir, job.p.pid,
                                                         os.environ["MIGTEST_HOLD"]), flush=True)
        time.sleep(float(os.environ["MIGTEST_HOLD"]))
    if job:
        print("events:", job.ev_path)
        job.cleanup(keep=True)
    sys.exit(1)


def check_answer(job, ref_cmd, names):
    out = job.stdout()
    line = migjob.result_line(out)
    ref = migjob.reference(ref_cmd)
    print("run:", line)
    print("ref:", ref)
    bad = migjob.compare(line, ref, names)
    if bad:
        fail("answer differs: " + bad, job)


def move(a):
    m, moves, concurrent = PLANS[a.plan]
    n = 4
    prog, ref_cmd, names = migjob.app_case(a.app, n, a.bin, a.data, a.size)
    migjob.reference(ref_cmd)  # before the job: not competing for the CPU
    job = migjob.Job(n, 1, m, prog, bindir=a.bin, timeout=a.timeout)
    try:
        job.wait_up()
        t_up = time.monotonic()
        restored = lambda g: job.count("migrate-restored", group=g)
        killed = []

        def one(g, path):
            src = g  # placement: rank g on host g (r = 1)
            for i, h in enumerate(path):
                job.migrate(g, 0, h)
                job.wait_for(lambda: restored(g) >= i + 1, 60,
                             "migration %d of rank %d to host %d" % (i + 1, g, h))
                if not job.running():
                    raise AssertionError("the job ended before migration %d of rank %d was "
                                         "restored: make the run longer" % (i + 1, g))
                if not concurrent:
                    job.ctl("kill-host", src)
                    killed.append(src)
                src = h

        errors = []
        if concurrent:
            def run(g, path):
                try:
                    one(g, path)
                except Exception as e:  # reported below
                    errors.append(str(e))
            ts = [threading.Thread(target=run, args=(g, p)) for g, p in moves]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            if errors:
                fail("; ".join(errors), job)
            for g, _ in moves:
                job.ctl("kill-host", g)
                killed.append(g)
        else:
            for g, p in moves:
                one(g, p)
        t_done = time.monotonic()
        if not job.running():
            fail("the job ended before every source host was killed (%.1fs after it was up): "
                 "make the run longer" % (t_done - t_up), job)
        # where every rank is now, as the daemons see it
        loc = job.where()
        for g, path in moves:
            if loc.get((g, 0)) != path[-1]:
                fail("rank %d is on host %s, not %d: %s" % (g, loc.get((g, 0)), path[-1], loc),
                     job)
        rc = job.finish(a.timeout)
        if rc != 0:
            fail("msgrun exit %d" % rc, job)
        ev = job.events()
        saves = [e for e in ev if e.get("event") == "migrate-save"]
        rest = [e for e in ev if e.get("event") == "migrate-restored"]
        want = sum(len(p) for _, p in moves)
        if len(rest) != want:
            fail("%d migrations restored, %d wanted" % (len(rest), want), job)
        gone = sum(1 for e in ev if e.get("event") == "host-gone")
        if gone != len(killed):
            fail("%d host losses seen by msgrun, %d hosts killed" % (gone, len(killed)), job)
        ends = [e for e in ev if e.get("event") == "job-end"]
        if ends and any(e.get("event") == "host-gone" and e["mono_ns"] > ends[0]["mono_ns"]
                        for e in ev):
            fail("a host was lost after the job's end", job)
        if concurrent and len(moves) > 1:
            first_restored = min(e["mono_ns"] for e in rest)
            overlap = sum(1 for e in saves if e["mono_ns"] < first_restored)
            print("concurrent: %d of %d saves began before the first restore" %
                  (overlap, len(saves)))
        # msgd's spare restorer (spawn.c, MSG_SPARE_RESTORER=1): every target
        # of these plans is a host that had not restored before, so each
        # restore finds its job's spare; without it none may (msgd forks)
        starts = [e.get("spare") for e in ev if e.get("event") == "restore-start"]
        if len(starts) != want:
            fail("%d restore-start events, %d wanted" % (len(starts), want), job)
        if a.spares == "used" and not all(starts):
            fail("a restore did not use the spare restorer: %s" % starts, job)
        if a.spares == "none" and any(starts):
            fail("a restore used a spare restorer: %s" % starts, job)
        dur = []
        for s in saves:
            r = [e for e in rest if e["group"] == s["group"] and e["mono_ns"] > s["mono_ns"]]
            if r:
                dur.append((min(e["mono_ns"] for e in r) - s["mono_ns"]) / 1e6)
        print("migrations: %d, durations ms: %s; killed hosts %s; job %.1fs" %
              (len(rest), " ".join("%.1f" % d for d in dur), killed, job.t_end - job.t0))
        check_answer(job, ref_cmd, names)
    except AssertionError as e:
        fail(str(e), job)
    job.cleanup()
    print("PASS")


def slow_reader(a):
    """A move whose restorer starts reading the image only after
    --restore-delay-ms (msgd's test hook MSG_TEST_RESTORE_DELAY_MS), as on a
    loaded target host. The source's stream must wait for it: the answer is
    unchanged. --expect-reset is the negative control: the image stream gets
    the daemons' link timeout back (250 ms, MSG_TEST_IMAGE_USER_TIMEOUT_MS),
    and the restorer must then read a reset (ECONNRESET, -104)."""
    n = 4
    os.environ["MSG_TEST_RESTORE_DELAY_MS"] = str(a.restore_delay_ms)
    if a.expect_reset:
        os.environ["MSG_TEST_IMAGE_USER_TIMEOUT_MS"] = "250"
    prog, ref_cmd, names = migjob.app_case(a.app, n, a.bin, a.data, a.size)
    migjob.reference(ref_cmd)
    job = migjob.Job(n, 1, 6, prog, bindir=a.bin, timeout=a.timeout)
    try:
        job.wait_up()
        job.migrate(1, 0, 4)
        if a.expect_reset:
            job.wait_for(lambda: "read error -104" in job.stderr() or not job.running(),
                         a.timeout, "the restorer's read error")
            if "read error -104" not in job.stderr():
                fail("no reset with the 250 ms link timeout on the image stream "
                     "(the negative control did not reproduce it)", job)
            print("negative control: the restorer read a reset, as expected:",
                  [l for l in job.stderr().splitlines() if "read error" in l][:1])
            job.finish(a.timeout)
        else:
            job.wait_for(lambda: job.count("migrate-restored", group=1) >= 1, a.timeout,
                         "the move of rank 1 restored")
            rc = job.finish(a.timeout)
            if rc != 0 or "read error" in job.stderr():
                fail("msgrun exit %d after a move with a restorer slow to read" % rc, job)
            check_answer(job, ref_cmd, names)
    except AssertionError as e:
        fail(str(e), job)
    job.cleanup()
    print("PASS")


def waits(a):
    """SIGUSR1 to every msgd of a running r = 3 job: one wait-state event
    per replica (12) and wait-chan events naming real channels, and the job
    goes on to the right answer (a daemon without the handler would die)."""
    n, r, m = 4, 3, 6
    prog, ref_cmd, names = migjob.app_case("dirichlet", n, a.bin, a.data, a.size)
    migjob.reference(ref_cmd)
    job = migjob.Job(n, r, m, prog, bindir=a.bin, timeout=a.timeout,
                     extra=["--stall-min", str(a.stall_min)])
    try:
        job.wait_up()
        told = job.dump_waits()
        if told != m:
            fail("%d daemons signalled, %d wanted" % (told, m), job)
        job.wait_for(lambda: job.count("wait-state") >= n * r, 30, "a wait-state per replica")
        st = [e for e in job.events() if e.get("event") == "wait-state"]
        got = sorted((e["group"], e["rep"]) for e in st)
        if got != [(g, k) for g in range(n) for k in range(r)]:
            fail("wait-state events for %s" % got, job)
        ch = [e for e in job.events() if e.get("event") == "wait-chan"]
        if any(not 0 <= e["src"] < n or e["low"] > e["contig"] for e in ch):
            fail("a wait-chan event out of range: %s" % ch, job)
        print("wait-state %d, wait-chan %d" % (len(st), len(ch)))
        rc = job.finish(a.timeout)
        if rc != 0:
            fail("msgrun exit %d after the dump" % rc, job)
        check_answer(job, ref_cmd, names)
    except AssertionError as e:
        fail(str(e), job)
    job.cleanup()
    print("PASS")


def regen(a):
    n, r, m = a.n, 3, 6
    victim = (min(5, n - 1), 1)
    args = ["--nx", str(a.side), "--ny", str(a.side), "--tol", "1e-12", "--max-iters",
            str(a.iters)]
    b = migjob.bin_path
    prog = [b("dirichlet", a.bin)] + args
    ref_cmd = [b("dirichlet", a.bin), "--sequential"] + args
    names = ["grid", "iterations", "converged", "delta", "residual", "maxerr", "checksum"]
    migjob.reference(ref_cmd)
    mode = a.mode or ("vote" if a.fault == "corrupt" else None)
    if a.bgsnap:  # the background snapshot (the stop copies nothing)
        os.environ["MSG_CKPT_BGSNAP"] = "1"
    if a.snapshot == "fork":  # libmsg then finds no userfaultfd write-protect
        os.environ["MSG_CKPT_NO_UFFD_WP"] = "1"
    if a.one_receive:  # the write-protected capture inside one receive
        os.environ["MSG_CKPT_PREPARE"] = "0"
    if a.kill_in_prepared:  # the same as --kill-in-precopy, by the prepared stop
        a.kill_in_precopy = True
    elif a.spread or a.kill_in_precopy:  # the pre-copy spread over receives
        os.environ["MSG_CKPT_SPREAD"] = "1"
    if a.kill_in_precopy:
        # the first pre-copy never gets ready (its stream goes on) and its cut
        # waits 3 s: the target host is killed inside it; the copies after
        # it are cut at 3 s, ready or not
        os.environ["MSG_TEST_PRECOPY_NO_READY"] = "1"
        os.environ["MSG_TEST_PRECOPY_MAX_MS"] = "3000"
    job = migjob.Job(n, r, m, prog, bindir=a.bin, mode=mode, timeout=a.timeout,
                     extra=["--stall-min", str(a.stall_min)])
    try:
        job.wait_up(120)
        before = job.where()
        if a.fault == "kill-host":
            victims = {gk for gk, h in before.items() if h == 2}
            job.ctl("kill-host", 2)
        elif a.fault == "corrupt":
            victims = {victim}
            job.ctl("corrupt", "%d.%d" % victim)
        else:
            victims = {victim}
            job.ctl("stall", "%d.%d" % victim)
        t_fault = time.monotonic()
        print("fault %s at %.2fs: replicas %s" % (a.fault, t_fault - job.t0, sorted(victims)))
        fenced = lambda: {(e["group"], e["rep"]) for e in job.events()
                          if e.get("event") == "fence" and "group" in e}
        job.wait_for(lambda: victims <= fenced(), 60, "the fault's fences")
        t_fenced = time.monotonic()
        killed = {2} if a.fault == "kill-host" else set()
        if a.kill_in_precopy:
            job.wait_for(lambda: job.count("regen-precopy"), 60, "a pre-copy under way")
            pre = [e for e in job.events() if e.get("event") == "regen-precopy"][0]
            tgt = pre["target"]
            cut_before = lambda: [e for e in job.events() if e.get("event") == "regen-cut" and
                                  e.get("target") == tgt]
            job.ctl("kill-host", tgt)
            killed.add(tgt)
            if cut_before():
                fail("the pre-copy to host %d was cut before the kill" % tgt, job)
            print("killed host %d, the target of %d.%d's pre-copy, inside it" %
                  (tgt, pre["group"], pre["rep"]))
            job.wait_for(lambda: job.count("migrate-failed", group=pre["group"], rep=pre["rep"]),
                         60, "the pre-copy's failure")
        seen = None
        polls = 0
        while job.running() and time.monotonic() - t_fault < 90:
            v = job.verified(check=False)
            polls += 1
            if v and len(v) == n and all(x == r for x in v.values()) and job.running():
                seen = v
                break
            time.sleep(0.1)
        t_back = time.monotonic()
        if not seen:
            fail("no msgctl status with every rank at %d/%d verified while the job ran "
                 "(%d polls, job running: %s)" % (r, r, polls, job.running()), job)
        if not job.running():
            fail("the job ended before it was back to %d verified replicas" % r, job)
        loc = job.where()
        for g in range(n):
            hosts = [loc.get((g, k)) for k in range(r)]
            if None in hosts or len(set(hosts)) != r:
                fail("rank %d replicas on hosts %s (want %d distinct)" % (g, hosts, r), job)
            if killed & set(hosts):
                fail("rank %d still has a replica on a killed host" % g, job)
        rc = job.finish(a.timeout)
        if rc != 0:
            fail("msgrun exit %d" % rc, job)
        copies = job.count("regen-copied")
        verified = job.count("member-verified")
        print("fences after %.2fs, %d/%d verified everywhere %.2fs after the fault "
              "(msgctl status, job still running); %d copies, %d member-verified events; "
              "job %.1fs" % (t_fenced - t_fault, r, r, t_back - t_fault, copies, verified,
                             job.t_end - job.t0))
        if copies < len(victims):
            fail("%d regenerations for %d lost replicas" % (copies, len(victims)), job)
        if job.count("laggard"):
            fail("msgrun did not wait for %d replica(s) at the end (laggard events): a copy "
                 "or a replica never finished" % job.count("laggard"), job)
        # the live copies' engine: pre-copy, or fork where userfaultfd
        # write-protect is missing (--snapshot fork simulates that)
        engines = [e.get("detail") for e in job.events() if e.get("event") == "migrate-captured"
                   and e.get("mode") == "copy" and e.get("engine") == "user" and e.get("status") == 0]
        if not engines or any(x != a.snapshot for x in engines):
            fail("live copies taken by %s, want %s" % (engines, a.snapshot), job)
        # a pre-copy is spread over receives, and so is the prepared stop
        # (the default): begun at one (regen-precopy: the survivor goes
        # on), its cut at a later one (regen-cut); the capture inside one
        # receive (and the fork engine, the background snapshot) has none
        spread = job.count("regen-precopy")
        cuts = job.count("regen-cut")
        print("%d copies begun at one receive and cut at a later, %d cuts (%d ready)" %
              (spread, cuts, job.count("regen-cut", ready=True)))
        if a.one_receive or a.snapshot == "fork" or a.bgsnap:
            if spread or cuts:
                fail("%d copies spread over receives, want none" % spread, job)
        elif spread < len(victims) or cuts < len(victims):
            fail("%d spread copies, %d cuts for %d copies" % (spread, cuts, len(victims)), job)
        check_answer(job, ref_cmd, names)
    except AssertionError as e:
        fail(str(e), job)
    job.cleanup()
    print("PASS")



def recur(a):
    """One Dirichlet run (n = 4, r = 3, 6 hosts) survives --losses host losses
    spread over time: each host killed once the previous loss is repaired
    (every rank 3/3 verified in msgctl status), and replaced by msgctl add-host
    before the next one. Same checksum as the sequential reference."""
    n, r, m = 4, 3, 6
    args = ["--nx", "160", "--ny", "160", "--tol", "1e-12", "--max-iters", str(a.iters)]
    b = migjob.bin_path
    prog = [b("dirichlet", a.bin)] + args
    ref_cmd = [b("dirichlet", a.bin), "--sequential"] + args
    names = ["grid", "iterations", "converged", "delta", "residual", "maxerr", "checksum"]
    migjob.reference(ref_cmd)
    job = migjob.Job(n, r, m, prog, bindir=a.bin, timeout=a.timeout,
                     extra=["--stall-min", str(a.stall_min)])
    try:
        job.wait_up(120)
        def back(h):  # one status answer (two could differ: a daemon lost meanwhile)
            lines = job.ctl("status", check=False).stdout.splitlines()
            return any(l.startswith("host %d " % h) and " up," in l for l in lines)
        for i in range(a.losses):
            h = (2 + i) % m
            if not back(h):  # lost by itself meanwhile (a daemon late under load): replace it first
                job.ctl("add-host", h)
                job.wait_for(lambda: back(h), 30, "host %d back (add-host) before its loss" % h)
                print("host %d was lost by itself before its turn; replaced" % h, flush=True)
            lost_before = job.count("host-gone")
            seen_lost = job.count("host-lost", lost=h)
            job.ctl("kill-host", h)
            job.wait_for(lambda: job.count("host-gone") > lost_before, 30,
                         "msgrun to see host %d go" % h)

            def repaired():
                v = job.verified(check=False)
                return bool(v) and len(v) == n and all(x == r for x in v.values())
            job.wait_for(lambda: not job.running() or job.count("host-lost", lost=h) > seen_lost,
                         30, "the daemons to see host %d lost" % h)
            job.wait_for(lambda: not job.running() or repaired(), 60,
                         "3/3 after losing host %d" % h)
            if not job.running():
                raise AssertionError("the job ended after %d host losses: make the run longer "
                                     "(--iters)" % (i + 1))
            job.ctl("add-host", h)
            job.wait_for(lambda: back(h), 30, "host %d back (add-host)" % h)
            print("loss %d: host %d killed, repaired to 3/3, replaced (%.1fs)" %
                  (i + 1, h, time.monotonic() - job.t0), flush=True)
        if not job.running():
            fail("the job ended before the last replacement", job)
        rc = job.finish(a.timeout)
        if rc != 0:
            fail("msgrun exit %d" % rc, job)
        print("%d host losses, %d copies; job %.1fs" % (a.losses, job.count("regen-copied"),
                                                       job.t_end - job.t0))
        if job.count("laggard"):
            fail("msgrun did not wait for %d replica(s) at the end (laggard events)" %
                 job.count("laggard"), job)
        check_answer(job, ref_cmd, names)
    except AssertionError as e:
        fail(str(e), job)
    job.cleanup()
    print("PASS")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["move", "regen", "recur", "slow-reader", "waits"])
    ap.add_argument("--app", default="dirichlet", choices=["integration", "dirichlet", "lidar"])
    ap.add_argument("--plan", default="single", choices=sorted(PLANS))
    ap.add_argument("--fault", default="kill-host", choices=["kill-host", "corrupt", "stall"])
    ap.add_argument("--size", default="test")
    ap.add_argument("--n", type=int, default=16, help="regen: ranks")
    ap.add_argument("--mode", choices=["first", "vote"], help="regen: comparison mode "
                    "(default vote for corrupt, first otherwise)")
    ap.add_argument("--side", type=int, default=160, help="regen: Dirichlet grid side")
    ap.add_argument("--iters", type=int, default=1500, help="regen: Dirichlet sweeps (run length)")
    ap.add_argument("--stall-min", type=int, default=2000,
                    help="regen: lag detector floor, ms (48 processes on 2 shared cores)")
    ap.add_argument("--bgsnap", action="store_true",
                    help="MSG_CKPT_BGSNAP=1: the pre-copy's background snapshot")
    ap.add_argument("--snapshot", default="pre-copy", choices=["pre-copy", "fork"],
                    help="regen: the live copy engine expected (fork: pre-copy made unavailable)")
    ap.add_argument("--one-receive", action="store_true",
                    help="regen: the pre-copy inside one receive instead of the prepared stop")
    ap.add_argument("--kill-in-prepared", action="store_true",
                    help="regen: the first copy's target host killed before its prepared stop's cut")
    ap.add_argument("--spread", action="store_true",
                    help="regen: pre-copies spread over receives (MSG_CKPT_SPREAD); asserted")
    ap.add_argument("--kill-in-precopy", action="store_true",
                    help="regen: --spread, and the first copy's target host killed inside its "
                    "pre-copy")
    ap.add_argument("--spares", choices=["used", "none", "any"], default="any",
                    help="move: whether every restore took msgd's spare msg-restore")
    ap.add_argument("--bin", default=migjob.BIN)
    ap.add_argument("--data", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "msgmig-data"))
    ap.add_argument("--timeout", type=float, default=200)
    ap.add_argument("--losses", type=int, default=10, help="recur: host losses")
    ap.add_argument("--restore-delay-ms", type=int, default=1500,
                    help="slow-reader: the target's restorer waits this long before reading")
    ap.add_argument("--expect-reset", action="store_true",
                    help="slow-reader: negative control (the 250 ms link timeout on the stream)")
    a = ap.parse_args()
    migjob.BIN = a.bin
    {"move": move, "regen": regen, "recur": recur, "slow-reader": slow_reader,
     "waits": waits}[a.what](a)


if __name__ == "__main__":
    main()
