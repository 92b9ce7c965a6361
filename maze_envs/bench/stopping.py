"""Stopping a run cleanly: SIGINT (Ctrl-C) and SIGTERM (``timeout``, Slurm, CI).

Inside ``with StopSignals():`` (the runner's main thread), both signals raise
:class:`RunStopped` where the run is (waiting for a worker, inside a game played in this
process), except inside :meth:`StopSignals.shielded` blocks (storing a finished game in the run's
journal and its row): there the signal waits for the block's end, so a finished game is stored
whole or not at all. The executors then end their workers (see :mod:`maze_envs.bench.executors`)
and the runner leaves the run resumable: every finished game in the journal once, the games in
progress dropped (they are played again by ``--resume``). Signals after the first are noted and
ignored until the block ends (the clean-up is bounded), so an impatient second Ctrl-C cannot
leave workers behind.

``maze-envs bench`` turns :class:`RunStopped` into a message and the shell's convention for a
death by signal: exit status 128 + the signal number (130 for SIGINT, 143 for SIGTERM).

Worker processes ignore SIGINT (:func:`worker_signals`): a Ctrl-C on a terminal reaches the whole
process group, and the parent alone decides what happens; they also die with the process that
started them (Linux), so no worker outlives a runner that was killed outright (SIGKILL).

Example:
    >>> import os, signal
    >>> try:
    ...     with StopSignals():
    ...         os.kill(os.getpid(), signal.SIGTERM)
    ... except RunStopped as stop:
    ...     print(stop, stop.exit_status)
    stopped by SIGTERM 143
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType, TracebackType
from typing import Any

#: The signals that stop a run.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class RunStopped(KeyboardInterrupt):
    """The run was stopped by a signal (a :class:`KeyboardInterrupt`, so that code which lets
    Ctrl-C through, asyncio included, lets this through too).

    ``done`` and ``total`` (games of the run finished and in all) and ``out`` (its folder) are
    filled in by the runner when it knows them.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum
        self.done: int | None = None
        self.total: int | None = None
        self.out: str | None = None

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """128 + the signal number: 130 for SIGINT, 143 for SIGTERM."""
        return 128 + self.signum


class StopSignals:
    """Turns SIGINT and SIGTERM into :class:`RunStopped` while the block runs (module doc).

    Outside the main thread (where Python delivers signals) it does nothing.
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self._raised = False
        self._shield = 0
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.getsignal(signum)
                signal.signal(signum, self._handle)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()
        if exc_type is None and self.received is not None and not self._raised:
            self._raised = True
            raise RunStopped(self.received)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
        if self._shield == 0 and not self._raised:
            self._raised = True
            raise RunStopped(signum)

    def stopped(self, interrupt: KeyboardInterrupt) -> RunStopped:
        """``interrupt`` as a :class:`RunStopped` (libraries such as Ray turn the exception a
        signal handler raised into a plain ``KeyboardInterrupt``; the signal is known here)."""
        if isinstance(interrupt, RunStopped):
            return interrupt
        return RunStopped(self.received or signal.SIGINT)

    @contextlib.contextmanager
    def shielded(self) -> Iterator[None]:
        """A block that a stop signal does not interrupt; it raises at the block's end."""
        self._shield += 1
        try:
            yield
        finally:
            self._shield -= 1
        if self._shield == 0 and self.received is not None and not self._raised:
            self._raised = True
            raise RunStopped(self.received)


def worker_signals() -> None:
    """In a worker process: ignore SIGINT (the parent handles Ctrl-C) and, on Linux, die with
    the parent process (``PR_SET_PDEATHSIG``), so a worker never outlives its runner."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes
        import os

        pr_set_pdeathsig = 1
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            parent = os.getppid()
            libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
            if os.getppid() != parent:  # the parent died before the call: follow it now
                os.kill(os.getpid(), signal.SIGKILL)
