"""`scaling-study local-slurm -- COMMAND`: a private SLURM on this machine for as long as COMMAND
and the jobs it submits run, to try a study before taking it to a cluster (and for the test,
tests/cluster/slurm_sweep.py).

munged, slurmctld and slurmd from Debian's packages (slurm-wlm, munge) run as root with a
configuration of their own: controller and one node on localhost, key, sockets, state and logs
in a temporary folder, ports picked free, no cgroups, accounting or system files touched. Every
process they start carries a marker in its environment, so that stopping them stops exactly
those, and the daemons die with the process that started them.
"""
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

NODE = "cuboid-node"
PARTITION = "cuboid"
MARK = "CUBOID_LOCAL_SLURM"
DAEMONS = ("munged", "slurmctld", "slurmd", "slurmstepd")
CLIENTS = ("sbatch", "squeue", "sinfo", "scontrol", "scancel", "srun")


class Unavailable(Exception):
    """SLURM cannot run here; the message says why."""


def which(name):
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin:/bin")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)\n"


def _die_with_parent():
    # PR_SET_PDEATHSIG: a daemon gets SIGTERM when the process that started it dies, even by SIGKILL.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


class Cluster:
    def __init__(self, cpus=None):
        if os.geteuid() != 0:
            raise Unavailable("not root: a private slurmd runs jobs as the user that submits them and needs root")
        missing = [b for b in DAEMONS + CLIENTS if not which(b)]
        if missing:
            raise Unavailable(f"not installed: {', '.join(missing)} (scripts/setup-deps installs slurm-wlm and munge)")
        self.cpus = cpus or max(2, os.cpu_count() or 2)
        self.root = tempfile.mkdtemp(prefix="cuboid-slurm-")
        os.chmod(self.root, 0o711)  # munged wants its socket's folder searchable
        self.conf = self.path("slurm.conf")
        self.procs = []
        self.env = dict(os.environ, SLURM_CONF=self.conf, **{MARK: self.root})

    def path(self, *p):
        return os.path.join(self.root, *p)

    def _spawn(self, name, argv):
        out = open(self.path("log", f"{name}.stdout"), "w")
        p = subprocess.Popen(argv, env=self.env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        self.procs.append((name, p))

    def start(self, timeout=30):
        for d in ("state", "spool", "log"):
            os.makedirs(self.path(d))
        key = self.path("munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        sock = self.path("munge.sock")
        self._spawn("munged", [which("munged"), "--foreground", "--force", f"--key-file={key}", f"--socket={sock}",
                               f"--pid-file={self.path('munged.pid')}", f"--log-file={self.path('log', 'munged.log')}",
                               f"--seed-file={self.path('munged.seed')}"])
        deadline = time.time() + timeout
        while not os.path.exists(sock):
            if self.procs[0][1].poll() is not None or time.time() > deadline:
                raise Unavailable(f"munged does not start:\n{tail(self.path('log', 'munged.log'))}"
                                  f"{tail(self.path('log', 'munged.stdout'))}")
            time.sleep(0.1)
        with open(self.conf, "w") as f:
            f.write(f"""# Private cluster of scripts/scaling-study local-slurm
ClusterName=cuboidlocal
SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={sock}
CredType=cred/munge
StateSaveLocation={self.path('state')}
SlurmdSpoolDir={self.path('spool')}
SlurmctldPidFile={self.path('slurmctld.pid')}
SlurmdPidFile={self.path('slurmd.pid')}
SlurmctldLogFile={self.path('log', 'slurmctld.log')}
SlurmdLogFile={self.path('log', 'slurmd.log')}
# No cgroups, accounting or job completion plug-ins: nothing outside this folder.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
# The node as declared here, whatever slurmd detects.
SlurmdParameters=config_overrides
NodeName={NODE} NodeAddr=127.0.0.1 CPUs={self.cpus} State=UNKNOWN
PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=60 State=UP
""")
        self._spawn("slurmctld", [which("slurmctld"), "-D", "-f", self.conf])
        self._spawn("slurmd", [which("slurmd"), "-D", "-f", self.conf, "-N", NODE])
        while time.time() < deadline:
            for name, p in self.procs:
                if p.poll() is not None:
                    logs = tail(self.path("log", name + ".log")) + tail(self.path("log", name + ".stdout"))
                    raise Unavailable(f"{name} exited with status {p.returncode}:\n{logs}")
            r = self.run(["sinfo", "-h", "-N", "-n", NODE, "-o", "%t"], check=False)
            if r.returncode == 0 and r.stdout.strip() == "idle":
                return self
            time.sleep(0.3)
        raise Unavailable(f"the node did not become idle in {timeout} s:\n{tail(self.path('log', 'slurmctld.log'))}"
                          f"{tail(self.path('log', 'slurmd.log'))}")

    def run(self, argv, check=True, timeout=60):
        r = subprocess.run([which(argv[0]) or argv[0]] + argv[1:], env=self.env, capture_output=True, text=True,
                           timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): {r.stdout}{r.stderr}")
        return r

    def wait_idle(self, timeout):
        """Until no job is pending or running; False on timeout."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not self.run(["squeue", "-h", "-o", "%i"]).stdout.strip():
                return True
            time.sleep(0.5)
        return False

    def ours(self):
        """Live processes started by this cluster: daemons, job steps and ranks all carry MARK."""
        pids = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if f"{MARK}={self.root}".encode() in f.read().split(b"\0"):
                        pids.append(int(pid))
            except OSError:
                pass
        return pids

    def stop(self):
        """Cancels the jobs, stops the daemons and what they started, removes the folder; returns
        the processes that could not be stopped (none, normally)."""
        try:
            self.run(["scancel", f"--partition={PARTITION}"], check=False, timeout=20)
        except (OSError, subprocess.SubprocessError):
            pass
        for _, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        deadline = time.time() + 10
        while self.ours() and time.time() < deadline:
            time.sleep(0.2)
        for pid in self.ours():  # anything that outlived its daemon (a job step, a rank)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.2)
        left = self.ours()
        shutil.rmtree(self.root, ignore_errors=True)
        return left

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        left = self.stop()
        if left:
            print(f"local-slurm: processes still running after the stop: {left}", file=sys.stderr)


def run(args):
    if not args.command:
        raise SystemExit("scaling-study local-slurm: give the command to run, e.g. local-slurm -- study/submit.sh")
    # SIGTERM (a ctest or batch timeout) goes through the same clean-up as an error.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        cluster = Cluster(args.cpus)
    except Unavailable as e:
        raise SystemExit(f"scaling-study local-slurm: cannot run SLURM here: {e}")
    status = 0
    try:
        cluster.start()
        print(f"local-slurm: SLURM up (node {NODE}, {cluster.cpus} CPUs, partition {PARTITION}, "
              f"SLURM_CONF={cluster.conf})", flush=True)
        status = subprocess.run(args.command, env=cluster.env).returncode
        if status == 0 and not args.no_wait:
            print("local-slurm: waiting for the jobs to finish", flush=True)
            if not cluster.wait_idle(args.timeout):
                print(f"local-slurm: jobs still queued after {args.timeout} s; cancelling them", file=sys.stderr)
                status = 1
    except Unavailable as e:
        print(f"scaling-study local-slurm: cannot run SLURM here: {e}", file=sys.stderr)
        status = 1
    finally:
        left = cluster.stop()
        if left:
            print(f"local-slurm: processes still running after the stop: {left}", file=sys.stderr)
            status = status or 1
    return status
