"""A one-node SLURM cluster on 127.0.0.1, for testing the slurm profile for real.

munged, slurmctld and slurmd come from Debian's `munge` and `slurm-wlm` (22.05). Nothing is
written outside the cluster's directory and no system service is touched: the daemons run in
the foreground as children of this module, on a munge key, a munge socket, free ports and a
slurm.conf of their own. Client commands find that cluster through ``SLURM_CONF`` and
through wrappers in ``DIR/bin`` that set it (``LocalSlurm.env`` puts them first on PATH):
the slurm-jobstep plugin drops every ``SLURM_*`` variable but a few before it calls
``srun`` inside a job (on a real cluster ``srun`` then finds /etc/slurm/slurm.conf).
There is no accounting (``sacct`` fails: job states come from ``squeue``), no cgroups
(``proctrack/linuxproc``, ``task/none``), and one partition ``local`` with the machine's
cores and 90 % of its memory. Needs root (slurmd runs jobs as their user). Bring-up takes
about a second. ``LocalSlurm(directory, hostname="node1")`` runs slurmd in a UTS namespace of its
own (``unshare --uts``) under that host name: its jobs run "on another host" than the login side
(``socket.gethostname()`` differs), on the same machine, processes and files.

As a library::

    with LocalSlurm(directory) as cluster:      # up: returns once the node is idle
        subprocess.run(["sbatch", ...], env=cluster.env)
    # down: cancels the jobs, stops exactly the daemons it started

From a shell (the daemons outlive the command until `down`)::

    python tests/cluster/localslurm.py up /tmp/slurm     # prints `export SLURM_CONF=... PATH=...`
    python tests/cluster/localslurm.py down /tmp/slurm
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "squeue", "scancel", "sinfo", "scontrol", "sacct", "salloc", "sstat")
PARTITION = "local"
NODE = "localhost"


def missing_tools():
    """The programs the cluster needs that are not installed (empty when it can run)."""
    needed = ["munged", "slurmctld", "slurmd", "sinfo", "squeue", "sbatch", "scancel", "scontrol"]
    return [tool for tool in needed if not shutil.which(tool, path=_sbin_path())]


def _sbin_path():
    return os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _memory_mb():
    """Most of the machine's memory (slurmd marks a node invalid that has less than configured)."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(int(line.split()[1]) / 1024 * 0.9)
    raise RuntimeError("no MemTotal in /proc/meminfo")


def slurm_conf(root, cpus, memory_mb, ctld_port, slurmd_port):
    """slurm.conf text: every path under ``root``; no empty ``Key=`` lines (22.05 rejects them)."""
    return "\n".join(
        [
            "ClusterName=attnrepro-test",
            "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={ctld_port}",
            f"SlurmdPort={slurmd_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={root}/munge/munge.socket",
            f"PlugStackConfig={root}/plugstack.conf",
            f"StateSaveLocation={root}/state",
            f"SlurmdSpoolDir={root}/spool",
            f"SlurmctldPidFile={root}/slurmctld.pid",
            f"SlurmdPidFile={root}/slurmd.pid",
            f"SlurmctldLogFile={root}/log/slurmctld.log",
            f"SlurmdLogFile={root}/log/slurmd.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SlurmdParameters=config_overrides",
            "MpiDefault=none",
            "ReturnToService=2",
            # squeue reports a finished job for MinJobAge seconds: the plugin needs at least
            # 3 x its first status-check delay; an hour lets a test count every job of a run
            "MinJobAge=3600",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "InactiveLimit=0",
            "KillWait=5",
            f"NodeName={NODE} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


class LocalSlurm:
    def __init__(self, root, cpus=None, timeout=60, hostname=None):
        self.root = Path(root).resolve()
        self.cpus = cpus or os.cpu_count()
        self.hostname = hostname  # the compute node's own host name (module docstring), or this one's
        self.timeout = timeout
        self.procs = {}  # name -> Popen, when started by this object
        self.conf = self.root / "slurm.conf"

    @property
    def env(self):
        """The environment for client commands (sbatch, squeue, snakemake) of this cluster."""
        path = os.pathsep.join([str(self.root / "bin"), _sbin_path()])
        return {**os.environ, "SLURM_CONF": str(self.conf), "PATH": path}

    # -- bring-up ----------------------------------------------------------------------
    def up(self):
        if os.geteuid() != 0:
            raise RuntimeError("the local SLURM cluster needs root (slurmd runs the jobs)")
        if missing_tools():
            raise RuntimeError(f"not installed: {', '.join(missing_tools())}")
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)  # munged refuses directories others can write to
        for sub in ("munge", "state", "spool", "log"):
            (self.root / sub).mkdir(mode=0o700, exist_ok=True)
        key = self.root / "munge" / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        (self.root / "plugstack.conf").write_text("")
        (self.root / "bin").mkdir(mode=0o700, exist_ok=True)
        for tool in CLIENTS:
            real = shutil.which(tool, path=_sbin_path())
            if real:
                wrapper = self.root / "bin" / tool
                wrapper.write_text(f'#!/bin/sh\nSLURM_CONF={self.conf} exec {real} "$@"\n')
                wrapper.chmod(0o700)
        self.conf.write_text(
            slurm_conf(self.root, self.cpus, _memory_mb(), _free_port(), _free_port())
        )
        try:
            munge = self.root / "munge"
            self._start(
                "munged",
                ["munged", "--foreground", "--force", f"--socket={munge}/munge.socket",
                 f"--key-file={key}", f"--pid-file={munge}/munged.pid",
                 f"--seed-file={munge}/munged.seed", f"--log-file={self.root}/log/munged.log"],
            )
            self._wait(lambda: (munge / "munge.socket").exists(), "munged socket")
            self._start("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
            self._wait(self._controller_answers, "slurmctld to answer")
            slurmd = ["slurmd", "-D", "-N", NODE, "-f", str(self.conf)]
            if self.hostname:  # unshare and sh exec: the pid stays slurmd's
                rename = 'hostname "$0" && exec "$@"'
                slurmd = ["unshare", "--uts", "sh", "-c", rename, self.hostname, *slurmd]
            self._start("slurmd", slurmd)
            self._wait(self._node_idle, f"node {NODE} to be idle")
        except BaseException:
            self.down()
            raise
        self._save_state()
        return self

    def _start(self, name, argv):
        log = open(self.root / "log" / f"{name}.out", "ab")
        self.procs[name] = subprocess.Popen(
            argv, env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, cwd=self.root,
        )
        log.close()

    def _wait(self, check, what):
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited ({proc.returncode}) while waiting for {what}:\n"
                                       + self.logs())
            if check():
                return
            time.sleep(0.2)
        raise TimeoutError(f"timed out after {self.timeout} s waiting for {what}:\n" + self.logs())

    def _run(self, *argv, timeout=10):
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)

    def _controller_answers(self):
        return self._run("scontrol", "ping").stdout.count("UP") > 0

    def _node_idle(self):
        out = self._run("sinfo", "--noheader", "--Node", "--format=%N %t").stdout.split()
        return out == [NODE, "idle"]

    def logs(self, tail=4000):
        parts = []
        for path in sorted((self.root / "log").glob("*")):
            parts.append(f"--- {path.name}\n{path.read_text(errors='replace')[-tail:]}")
        return "\n".join(parts)

    # -- tear-down ---------------------------------------------------------------------
    def pids(self):
        """{daemon: pid} of the daemons this cluster started."""
        if self.procs:
            return {name: proc.pid for name, proc in self.procs.items()}
        state = self.root / "daemons.json"
        return json.loads(state.read_text()) if state.exists() else {}

    def _save_state(self):
        (self.root / "daemons.json").write_text(json.dumps(self.pids()))

    def _ours(self, pid, name):
        """Whether ``pid`` is still the ``name`` daemon started on this cluster's files."""
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            return False
        return name in cmdline and str(self.root) in cmdline

    def _stepds(self):
        """slurmstepd processes of this cluster (they inherit its SLURM_CONF)."""
        marker = f"SLURM_CONF={self.conf}".encode()
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                if proc.joinpath("comm").read_text().strip() != "slurmstepd":
                    continue
                if marker in proc.joinpath("environ").read_bytes().split(b"\0"):
                    found.append(int(proc.name))
            except OSError:
                continue
        return found

    def down(self, timeout=20):
        """Cancel every job, stop the daemons this cluster started and what they left running,
        wait until they are gone. Returns {daemon: pid} of the daemons it stopped."""
        pids = self.pids()
        if self.conf.exists() and pids.get("slurmctld") and self._ours(pids["slurmctld"], "slurmctld"):
            try:
                jobs = self._run("squeue", "--noheader", "--format=%i").stdout.split()
                if jobs:
                    self._run("scancel", *jobs)
                    deadline = time.monotonic() + timeout
                    while time.monotonic() < deadline and self._run(
                        "squeue", "--noheader", "--states=PENDING,RUNNING,COMPLETING", "--format=%i"
                    ).stdout.split():
                        time.sleep(0.5)
            except (subprocess.SubprocessError, OSError):
                pass
        for name in reversed(DAEMONS):  # slurmd, slurmctld, munged
            pid = pids.get(name)
            if pid and name in self.procs:
                self._stop_child(self.procs[name], timeout)
            elif pid and self._ours(pid, name):
                self._stop_pid(pid, timeout)
        # what the daemons left behind: helpers in their process groups (slurmscriptd) and
        # job steps (slurmstepd detaches from slurmd; it carries this cluster's SLURM_CONF)
        for pid, _ in self.leftovers(pids):
            self._stop_pid(pid, timeout)
        self.procs = {}
        (self.root / "daemons.json").unlink(missing_ok=True)
        return pids

    def leftovers(self, pids):
        """[(pid, command)] of live processes of this cluster: the daemons ``pids``
        ({name: pid}, as `pids()` gave them), anything in their process groups (each
        daemon leads a session of its own), and this cluster's slurmstepd processes."""
        groups, stepds = set(pids.values()), set(self._stepds())
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                stat = proc.joinpath("stat").read_text()
            except OSError:
                continue
            comm = stat[stat.index("(") + 1 : stat.rindex(")")]
            state, _ppid, pgid = stat[stat.rindex(")") + 2 :].split()[:3]
            if state == "Z":  # exited, not yet reaped
                continue
            pid = int(proc.name)
            if pid in groups or int(pgid) in groups or pid in stepds:
                found.append((pid, comm))
        return found

    @staticmethod
    def _stop_child(proc, timeout):
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    @staticmethod
    def _stop_pid(pid, timeout):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            time.sleep(0.1)
        if Path(f"/proc/{pid}").exists():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["up", "down"])
    parser.add_argument("directory", help="where the cluster keeps every file")
    args = parser.parse_args(argv)
    cluster = LocalSlurm(args.directory)
    if args.action == "up":
        start = time.monotonic()
        cluster.up()
        daemons = cluster.pids()
        cluster.procs.clear()  # they outlive this command: `down` finds them in daemons.json
        print(f"# cluster up in {time.monotonic() - start:.1f} s; daemons {daemons}", file=sys.stderr)
        print(f"export SLURM_CONF={cluster.conf} PATH={cluster.root / 'bin'}:$PATH")
    else:
        cluster.down()
        print("# cluster down", file=sys.stderr)


if __name__ == "__main__":
    main()
