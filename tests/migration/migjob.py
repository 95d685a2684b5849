"""A running msg job, driven from outside like an operator would: msgrun in
the background with --job-dir and --events, msgctl commands against it, the
event log read as it grows. Shared by tests/migration, bench/migration and
bench/campaign.

Only processes started here are stopped (by pid)."""
import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time

BIN = os.environ.get("MSG_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "build", "bin"))


def bin_path(name, bindir=None):
    return os.path.join(bindir or BIN, name)


# The exemplars: arguments of a run, its sequential reference and the fields
# of the result line that must equal the reference's (as tests/apps does).
def app_case(app, n, bindir, data_dir, size="test"):
    """size "test": a few seconds at n = 4 on a loaded 2-core machine; "long": ~3x."""
    b = lambda x: bin_path(x, bindir)
    k = 3 if size == "long" else 1
    if app == "integration":
        iv, rounds = 2000000, 150 * k
        return ([b("integration"), "--intervals", str(iv), "--rounds", str(rounds)],
                [b("integration"), "--sequential", "--parts", str(n), "--intervals", str(iv)],
                ["intervals", "result", "bits"])
    if app == "dirichlet":
        # a fixed number of sweeps (not converged): the work does not depend on the grid
        args = ["--nx", "160", "--ny", "160", "--tol", "1e-12", "--max-iters", str(6000 * k)]
        return ([b("dirichlet")] + args, [b("dirichlet"), "--sequential"] + args,
                ["grid", "iterations", "converged", "delta", "residual", "maxerr", "checksum"])
    if app == "lidar":
        las = os.path.join(data_dir, "terrain-mig-%d.las" % k)
        if not os.path.exists(las):
            os.makedirs(data_dir, exist_ok=True)
            subprocess.run([b("lidar_gen"), "--out", las + ".tmp", "--points", str(30000 * k),
                            "--size", str(120 * k), "--seed", "11", "--version", "1.2",
                            "--format", "1"], check=True, capture_output=True, timeout=60)
            os.replace(las + ".tmp", las)
        args = ["--input", las, "--tile", "20"]
        return ([b("lidar")] + args, [b("lidar"), "--sequential"] + args,
                ["points", "grid", "tiles", "ground", "nodata", "rmse", "checksum"])
    raise ValueError(app)


def result_line(text):
    lines = [l for l in text.splitlines() if l.split() and l.split()[-1] in ("ok", "FAIL")]
    return lines[-1] if lines else None


def fields(line):
    return dict(w.split("=", 1) for w in (line or "").split() if "=" in w)


_ref_cache = {}


def reference(cmd, timeout=300):
    key = tuple(cmd)
    if key not in _ref_cache:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        line = result_line(p.stdout)
        if p.returncode != 0 or not line:
            raise RuntimeError("reference failed: %s\n%s" % (" ".join(cmd), p.stderr[-2000:]))
        _ref_cache[key] = line
    return _ref_cache[key]


def compare(line, ref, names):
    """None if line agrees with ref on names, else what differs."""
    if not line:
        return "no result line"
    if line.split()[-1] != "ok":
        return "the program's own check failed: " + line
    got, want = fields(line), fields(ref)
    bad = ["%s=%s (reference %s)" % (f, got.get(f), want.get(f)) for f in names
           if got.get(f) != want.get(f)]
    return "; ".join(bad) or None


class Job:
    def __init__(self, n, r, m, prog, bindir=None, mode=None, inject=None, timeout=240,
                 extra=(), log=print):
        self.n, self.r, self.m = n, r, m
        self.bindir = bindir or BIN
        self.top = tempfile.mkdtemp(prefix="msgmig-")
        self.dir = os.path.join(self.top, "job")
        self.ev_path = os.path.join(self.top, "events.jsonl")
        self.log = log
        cmd = [bin_path("msgrun", self.bindir), "-n", str(n), "-r", str(r), "--virtual-hosts",
               str(m), "--job-dir", self.dir, "--events", self.ev_path, "--timeout", str(timeout)]
        if mode:
            cmd += ["--mode", mode]
        if inject:
            cmd += ["--inject", inject]
        cmd += list(extra) + list(prog)
        self.cmd = cmd
        # O_APPEND, and read through a descriptor of our own (stdout(),
        # stderr()): msgrun, its daemons and processes share this file
        # description, and a seek(0) on it to read the log made their next
        # writes land at the start, over what was there (a restorer's "read
        # error -104" line was lost that way: mig-slow-reader-negctl, CI)
        self.out = open(os.path.join(self.top, "stdout"), "a")
        self.err = open(os.path.join(self.top, "stderr"), "a")
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(cmd, stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL)
        self._ev = []
        self._pos = 0
        self._lock = threading.Lock()  # concurrent moves read the log from threads
        self.rc = None

    # --- the event log -------------------------------------------------
    def events(self):
        with self._lock:
            return list(self._events())

    def _events(self):
        try:
            with open(self.ev_path) as f:
                f.seek(self._pos)
                chunk = f.read()
        except FileNotFoundError:
            return self._ev
        last = chunk.rfind("\n")
        if last >= 0:
            for l in chunk[:last].splitlines():
                try:
                    self._ev.append(json.loads(l))
                except ValueError:
                    pass
            self._pos += len(chunk[:last + 1].encode())
        return self._ev

    def count(self, kind, **match):
        return sum(1 for e in self.events() if e.get("event") == kind and
                   all(e.get(k) == v for k, v in match.items()))

    def wait_for(self, pred, timeout, what):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return True
            if self.p.poll() is not None:
                self.events()
                return pred()
            time.sleep(0.02)
        raise AssertionError("timed out after %.0fs waiting for %s" % (timeout, what))

    # --- msgctl --------------------------------------------------------
    def ctl(self, *args, timeout=30, check=True):
        # output through a file, not a pipe: add-host starts a daemon that
        # inherits msgctl's stdout/stderr and keeps a pipe open for good
        with tempfile.TemporaryFile("w+") as o, tempfile.TemporaryFile("w+") as e:
            p = subprocess.run([bin_path("msgctl", self.bindir), "--job-dir", self.dir] +
                               [str(a) for a in args], stdout=o, stderr=e, text=True,
                               timeout=timeout)
            o.seek(0)
            e.seek(0)
            p.stdout, p.stderr = o.read(), e.read()
        if check and p.returncode != 0:
            raise AssertionError("msgctl %s: exit %d: %s%s" % (" ".join(map(str, args)),
                                                              p.returncode, p.stdout, p.stderr))
        return p

    def running(self):
        return self.p.poll() is None

    def dump_waits(self):
        """SIGUSR1 to msgrun's virtual-host daemons (its msgd children): each
        writes what its replicas wait for into the event log (wait-state and
        wait-chan events). For a job that hangs; returns how many were told."""
        told = 0
        try:
            with open("/proc/%d/task/%d/children" % (self.p.pid, self.p.pid)) as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            return 0
        for pid in kids:
            try:
                with open("/proc/%d/comm" % pid) as f:
                    if f.read().strip() != "msgd":
                        continue
                os.kill(pid, signal.SIGUSR1)
                told += 1
            except OSError:
                pass
        return told

    def wait_up(self, timeout=60):
        """Until every rank has r verified live replicas (msgctl status)."""
        def up():
            if not os.path.exists(os.path.join(self.dir, "job.info")) and \
               not any(e.get("event") == "launch" for e in self.events()):
                return False
            v = self.verified(check=False)
            return v is not None and len(v) == self.n and all(x == self.r for x in v.values())
        self.wait_for(up, timeout, "the job to be up")
        if not self.running():
            raise AssertionError("the job ended before it was up: " + self.tail())

    def verified(self, check=True):
        """{rank: verified live replicas} from msgctl status, or None."""
        p = self.ctl("status", check=check, timeout=20)
        if p.returncode != 0 and check:
            return None
        v, on = {}, False
        for l in p.stdout.splitlines():
            if l.startswith("rank"):
                on = True
                continue
            w = l.split()
            if on and len(w) == 2 and "/" in w[1]:
                v[int(w[0])] = int(w[1].split("/")[0])
        return v if v else None

    def where(self):
        """{(g, k): host} of live replicas, from msgctl ps."""
        p = self.ctl("ps", check=False)
        loc = {}
        for l in p.stdout.splitlines():
            w = l.split()
            if len(w) >= 3 and "." in w[0] and w[0].replace(".", "").isdigit() and w[2] in (
                    "live", "joining"):
                g, k = w[0].split(".")
                loc[(int(g), int(k))] = int(w[1])
        return loc

    def migrate(self, g, k, host):
        self.ctl("migrate", "%d.%d" % (g, k), host)

    def finish(self, timeout=300):
        try:
            self.rc = self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            raise AssertionError("msgrun did not end within %ds" % timeout)
        self.events()
        self.t_end = time.monotonic()
        return self.rc

    def stdout(self):
        with open(self.out.name, errors="replace") as f:
            return f.read()

    def stderr(self):
        with open(self.err.name, errors="replace") as f:
            return f.read()

    def tail(self):
        return "\n--- stdout\n%s\n--- stderr\n%s" % (self.stdout()[-2000:], self.stderr()[-3000:])

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()

    def cleanup(self, keep=False):
        self.stop()
        self.out.close()
        self.err.close()
        if not keep:
            shutil.rmtree(self.top, ignore_errors=True)
