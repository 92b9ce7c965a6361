"""A real Ray cluster on this machine whose worker nodes do not see the driver's folder (tests).

The head (no CPUs: every game runs on a worker node) and each worker node run in PID and mount
namespaces of their own (``unshare``). A worker node mounts a private tmpfs over the driver's
folder, so it finds that folder empty: what a cloud or Slurm cluster without a shared
filesystem looks like. All of them speak to each other over the machine's own network, with a
token of the test's (``RAY_AUTH_TOKEN``).

Nothing outlives the test: the first process of a PID namespace takes every process of the
namespace with it when it dies, so :meth:`LoopbackCluster.close` (killing each namespace) stops
every Ray process the cluster started, and the namespaces die with the test process too
(``PR_SET_PDEATHSIG``) should it be killed. A node is stopped the way an operator would stop it,
``ray stop`` run inside its namespaces (:meth:`LoopbackCluster.stop_node`); ``ray stop`` there
sees no other Ray process of the machine.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Generous: only a hang reaches it.
DEADLINE_S = 300.0
_BIN = Path(sys.executable).parent
_STARTED = b"Ray runtime started"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_the_test() -> None:
    """In the child, before ``exec``: die when the test process dies (Linux)."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def unavailable() -> str | None:
    """Why this machine cannot build the cluster (the reason a test skips with), or ``None``."""
    if not sys.platform.startswith("linux"):
        return "the two-node Ray cluster test needs Linux namespaces (unshare)"
    for tool in ("unshare", "nsenter"):
        if shutil.which(tool) is None:
            return f"the two-node Ray cluster test needs {tool} (util-linux)"
    if not (_BIN / "ray").exists():
        return f"the two-node Ray cluster test needs the ray command beside {sys.executable}"
    folder = Path(tempfile.mkdtemp(prefix="mzr-probe-"))
    try:
        (folder / "seen").touch()
        probe = subprocess.run(
            [
                "unshare",
                "--mount",
                "--pid",
                "--fork",
                "--mount-proc",
                "sh",
                "-c",
                f"mount -t tmpfs tmpfs {folder} && test ! -e {folder}/seen",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"cannot run unshare here: {exc}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if probe.returncode != 0:
        why = (probe.stderr or probe.stdout).strip().splitlines()
        return (
            "this machine does not permit private mount and PID namespaces (unshare --mount "
            f"--pid, then mount -t tmpfs): {why[-1] if why else probe.returncode}"
        )
    return None


class LoopbackCluster:
    """A head without CPUs and worker nodes blind to ``private`` (see the module docstring).

    ``base``: a short folder of its own (Ray's socket paths must stay short) for the nodes'
    Ray folders and logs.
    """

    def __init__(self, base: Path, private: Path) -> None:
        self.base = base
        self.private = private
        self.port = _free_port()
        self.env = {
            **os.environ,
            "PATH": f"{_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": secrets.token_hex(32),
            "RAY_USAGE_STATS_ENABLED": "0",
        }
        self._nodes: dict[str, subprocess.Popen[bytes]] = {}
        self._count = 0

    @property
    def address(self) -> str:
        """What ``--ray-address`` takes: the head's ``host:port``."""
        return f"127.0.0.1:{self.port}"

    def _start(self, name: str, script: str) -> str:
        log = self.base / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [
                    "unshare",
                    "--mount",
                    "--pid",
                    "--fork",
                    "--kill-child",
                    "--mount-proc",
                    "sh",
                    "-c",
                    script,
                ],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_the_test,
            )
        self._nodes[name] = process
        deadline = time.monotonic() + DEADLINE_S
        while _STARTED not in log.read_bytes():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Ray node {name} did not start:\n{log.read_text()[-4000:]}")
            time.sleep(0.2)
        return name

    def start_head(self) -> str:
        """The head node: the cluster's control, no CPUs (the driver's node)."""
        return self._start(
            "head",
            f"exec ray start --head --num-cpus=0 --port={self.port} "
            f"--node-ip-address=127.0.0.1 --temp-dir={self.base / 'head'} "
            f"--dashboard-port={_free_port()} --dashboard-agent-listen-port={_free_port()} "
            "--include-dashboard=false --disable-usage-stats --block",
        )

    def add_node(self, cpus: int = 2) -> str:
        """A new worker node with ``cpus`` CPUs, a private, empty ``private`` folder and a
        temporary folder of its own (``TMPDIR``)."""
        self._count += 1
        name = f"node{self._count}"
        temp = self.temp_folder(name)
        temp.mkdir()
        return self._start(
            name,
            f"mount -t tmpfs tmpfs {self.private} && TMPDIR={temp} "
            f"exec ray start --address={self.address} "
            f"--num-cpus={cpus} --node-ip-address=127.0.0.1 --temp-dir={self.base / name} "
            f"--dashboard-agent-listen-port={_free_port()} --block",
        )

    def temp_folder(self, name: str) -> Path:
        """Worker node ``name``'s temporary folder (``TMPDIR`` of its Ray workers)."""
        return self.base / f"{name}-tmp"

    def worker_nodes(self) -> list[str]:
        """The names of the worker nodes running."""
        return [name for name in self._nodes if name != "head"]

    def _init_pid(self, name: str) -> int:
        """The host's pid of the first process of node ``name``'s namespaces."""
        process = self._nodes[name]
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        return int(children[0])

    def inside(self, name: str, *command: str) -> subprocess.CompletedProcess[str]:
        """Run ``command`` in node ``name``'s mount and PID namespaces."""
        return subprocess.run(
            ["nsenter", "--target", str(self._init_pid(name)), "--mount", "--pid", *command],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=DEADLINE_S,
            check=False,
        )

    def stop_node(self, name: str) -> None:
        """``ray stop`` on node ``name`` (inside its namespaces), then end them."""
        stopped = self.inside(name, str(_BIN / "ray"), "stop")
        if stopped.returncode != 0:
            raise RuntimeError(f"ray stop failed on {name}: {stopped.stderr[-2000:]}")
        self._end(name)

    def _end(self, name: str) -> None:
        process = self._nodes.pop(name)
        if process.poll() is None:
            process.kill()  # --kill-child: the namespace's first process, hence all of it
        process.wait(timeout=DEADLINE_S)

    def close(self) -> None:
        """Stop every node, the head last."""
        for name in sorted(self._nodes, key=lambda node: node == "head"):
            with contextlib.suppress(Exception):
                self._end(name)
