"""A real Spark standalone cluster on 127.0.0.1, from the installed pyspark's ``spark-class``.

    python scripts/spark_cluster.py start DIR [--workers 2] [--cores 1]   # prints the master URL
    python scripts/spark_cluster.py stop DIR

One master and N workers (each ``--cores`` cores, 1 GiB), on free ports, logs and work folders
under DIR, their PIDs in ``DIR/pids.json``; ``stop`` ends exactly those processes (by PID,
TERM then KILL). Used by ``tests/test_spark_cluster.py`` and docs/audit.md. Needs a JRE
(``java`` on PATH or JAVA_HOME; Debian: default-jre-headless).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def java_ok() -> bool:
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else shutil.which("java")
    if not java:
        return False
    return subprocess.run([str(java), "-version"], capture_output=True).returncode == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    folder: Path
    master_url: str = ""
    pids: list[int] = field(default_factory=list)

    def stop(self) -> None:
        for pid in reversed(self.pids):
            executors = _session(pid)  # a worker's executors (its session: started by it)
            _end(pid)
            for child in executors:
                _end(child)
        self.pids.clear()
        (self.folder / "pids.json").unlink(missing_ok=True)


def _session(leader: int) -> list[int]:
    """The other processes of the session ``leader`` started (each daemon is started as the
    leader of a session of its own): a worker's executors, which outlive a worker that is ended
    while an application runs."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != leader:
            try:
                stat = open(f"/proc/{d}/stat").read()
                if int(stat[stat.rindex(")") + 2:].split()[3]) == leader:
                    out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


def _end(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(100):
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
        except ChildProcessError:  # not our child (``stop`` from another process): poll
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def _spawn(folder: Path, name: str, args: list[str], env: dict) -> tuple[subprocess.Popen, Path]:
    log = folder / f"{name}.log"
    fh = open(log, "wb")
    # spark-class ends in ``exec java ...``: the PID is the JVM's
    p = subprocess.Popen([str(spark_home() / "bin" / "spark-class"), *args], stdout=fh, stderr=subprocess.STDOUT,
                         env=env, cwd=folder, start_new_session=True)
    fh.close()
    return p, log


def _wait_for(log: Path, text: str, p: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if p.poll() is not None:
            break
        time.sleep(0.2)
    raise RuntimeError(f"{log.name}: no {text!r} within {timeout:.0f} s:\n{log.read_text(errors='replace')[-3000:]}")


def start(folder: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g", timeout: float = 90) -> Cluster:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SPARK_HOME=str(spark_home()), SPARK_LOG_DIR=str(folder), SPARK_NO_DAEMONIZE="1",
               SPARK_LOCAL_IP="127.0.0.1", SPARK_WORKER_DIR=str(folder / "work"))
    c = Cluster(folder)
    try:
        port = free_port()
        m, mlog = _spawn(folder, "master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                            "--port", str(port), "--webui-port", str(free_port())], env)
        c.pids.append(m.pid)
        c.master_url = f"spark://127.0.0.1:{port}"
        _wait_for(mlog, "I have been elected leader", m, timeout)
        for i in range(workers):
            w, wlog = _spawn(folder, f"worker{i}", [
                "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", str(cores),
                "--memory", memory, "--webui-port", str(free_port()), "--work-dir", str(folder / f"work{i}"),
                c.master_url], env)
            c.pids.append(w.pid)
            _wait_for(wlog, "Successfully registered with master", w, timeout)
    except BaseException:
        c.stop()
        raise
    (folder / "pids.json").write_text(json.dumps({"master": c.master_url, "pids": c.pids}))
    return c


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["start", "stop"])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cores", type=int, default=1)
    args = ap.parse_args(argv)
    if args.action == "start":
        print(start(args.folder, workers=args.workers, cores=args.cores).master_url)
        return 0
    state = json.loads((args.folder / "pids.json").read_text())
    Cluster(args.folder, state["master"], state["pids"]).stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
