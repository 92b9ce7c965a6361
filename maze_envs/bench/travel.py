"""What travels between a Ray run's driver and its workers, whose nodes need not share a disk.

A worker on another node can neither read nor write the driver's files, so on Ray:

* **Games come back through Ray.** A worker records a batch's games in a journal of its own in
  its node's temporary folder (:func:`batch_journal`, deleted when the batch ends) and returns,
  with each finished game's row, the game's stored rows
  (:class:`~maze_envs.journal.StoredGame`, through the object store). The driver stores them in
  the run's journal (:meth:`~maze_envs.journal.Journal.add_stored_game`: whole or absent, each
  run key at most once), the same function that stores a shard's games in the process pool.
* **A user's pack tree travels with the tasks.** The driver puts the bundles the tasks name
  under their ``pack_root`` in the object store once (:func:`ship_packs`); each node writes them
  once into its temporary folder, in a folder named after their digest, and the packs module
  reads them there in place of the driver's path (:func:`install_packs`,
  :func:`maze_envs.agimaze.packs.use_copy`). The games still record the path the driver gave,
  so they replay and verify on the driver.
* **What the driver owns stays on its node.** The batches' start marks and the objects that own
  a file of the driver (the LLM policies' response cache) live in one actor placed on the
  driver's node, :class:`RunServices`, which the run stops when it ends; a worker reaches such
  an object with :func:`~maze_envs.policies.driver.driver_call` (``await`` ``adriver_call``
  in an event loop). The run's ledger (:mod:`.ledger`) is an actor on the driver's node too.
  A worker node that dies takes none of them with it.

Everything else a worker needs comes with the task (cases, policy specs, seeds) or from the
package installed on every node (shipped packs, prompts, configurations).

Nothing here imports Ray, or the experiment's models, at module level: the process pool and
inline runs never load Ray, and the response cache reads
:func:`~maze_envs.policies.driver.driver_link` cheaply.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    import fcntl
except ImportError:  # not POSIX: journals of killed workers stay in the temporary folder
    fcntl = None  # type: ignore[assignment]

# the policies read the link set here through maze_envs.policies.driver; its calls are this
# module's too (the runner's side names them here)
from maze_envs.policies.driver import adriver_call as adriver_call
from maze_envs.policies.driver import driver_call as driver_call
from maze_envs.policies.driver import driver_link as driver_link
from maze_envs.policies.driver import driver_path as driver_path
from maze_envs.policies.driver import use_link

if TYPE_CHECKING:
    from maze_envs.bench.spec import GameTask

#: The folders, in a node's temporary folder, that hold the copies of pack trees and the
#: journals of the batches playing.
PACKS_FOLDER = "maze-envs-packs"
GAMES_FOLDER = "maze-envs-games"
#: Seconds after which the journal of a batch whose lock is free is taken for a dead worker's.
STALE_S = 60.0


@dataclass(frozen=True, slots=True)
class PackCopy:
    """A pack tree of the driver's (``root``, as the tasks name it) sent to the workers:
    the bundles the tasks play (``files``: an object reference to ``{name: bytes}``), and
    their digest, which names the folder each node writes them into."""

    root: str
    digest: str
    files: Any


@dataclass(frozen=True, slots=True)
class DriverLink:
    """What a Ray worker knows of its run's driver (it comes with every batch).

    ``services``: the run's :class:`RunServices` actor; ``cwd``: the driver's working folder
    (a relative path a task names is relative to it); ``record``: whether the run keeps a
    journal (then the worker returns each game's rows); ``packs``: the pack trees sent.
    """

    services: Any
    cwd: str
    record: bool
    packs: tuple[PackCopy, ...] = ()


# --- the driver's side ------------------------------------------------------------------------


class RunServices:
    """The driver's side of a Ray run, an actor on the driver's node (see the module docstring):
    the batches' start marks, and objects that own files of the driver, made on first use by
    ``factory(*key)`` and kept for the run."""

    def __init__(self) -> None:
        self._started: set[int] = set()
        self._objects: dict[tuple[Any, tuple[Any, ...]], Any] = {}

    def mark(self, number: int) -> None:
        """Batch ``number`` has started playing."""
        self._started.add(number)

    def started(self, number: int) -> bool:
        """Whether batch ``number`` had started (a batch whose worker died)."""
        return number in self._started

    def call(
        self, factory: Callable[..., Any], key: tuple[Any, ...], method: str, args: tuple[Any, ...]
    ) -> Any:
        """``factory(*key).method(*args)``, the object made once per ``(factory, key)``."""
        found = self._objects.get((factory, key))
        if found is None:
            found = self._objects[(factory, key)] = factory(*key)
        return getattr(found, method)(*args)

    def close(self) -> None:
        """Close every object that can be closed (their files are the driver's)."""
        for found in self._objects.values():
            close = getattr(found, "close", None)
            if callable(close):
                with contextlib.suppress(Exception):
                    close()
        self._objects.clear()


def ship_packs(tasks: Sequence[GameTask], put: Callable[[Any], Any]) -> tuple[PackCopy, ...]:
    """The pack trees of a user's own (``pack_root``) that ``tasks`` play, each put in the
    object store once with ``put`` (``ray.put``): the bundles the tasks name, not the whole
    tree. Raises :class:`~maze_envs.agimaze.packs.PackPathError` for a path that cannot be
    read."""
    from maze_envs.agimaze.packs import bundle_files
    from maze_envs.bench.agimaze_spec import AgiMazeSetCase
    from maze_envs.bench.spec import AgiMazeCase

    wanted: dict[str, dict[str, None]] = {}
    for task in tasks:
        case = task.case
        if isinstance(case, AgiMazeCase) and case.pack_root is not None:
            wanted.setdefault(case.pack_root, {})[case.pack] = None
        elif isinstance(case, AgiMazeSetCase) and case.pack_root is not None:
            wanted.setdefault(case.pack_root, {}).update(dict.fromkeys(case.paths))
    copies = []
    for root, paths in wanted.items():
        files = bundle_files(paths, Path(root))
        digest = hashlib.sha256()
        for name in sorted(files):
            digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
        copies.append(PackCopy(root, digest.hexdigest()[:32], put(files)))
    return tuple(copies)


# --- the worker's side ------------------------------------------------------------------------


_INSTALLED: set[str] = set()  # digests of the pack copies this process reads


def install_packs(copies: Sequence[PackCopy], get: Callable[[Any], Any]) -> None:
    """Make the pack trees ``copies`` readable in this process: written once per node into its
    temporary folder (atomically: a half-written copy is never used), then read in place of
    the driver's paths (:func:`maze_envs.agimaze.packs.use_copy`). ``get``: ``ray.get``."""
    from maze_envs.agimaze.packs import use_copy

    for copy in copies:
        if copy.digest in _INSTALLED:
            continue
        parent = Path(tempfile.gettempdir()) / PACKS_FOLDER
        folder = parent / copy.digest
        if not folder.is_dir():
            parent.mkdir(parents=True, exist_ok=True)
            files: dict[str, bytes] = get(copy.files)
            staging = Path(tempfile.mkdtemp(prefix=f".{copy.digest}-", dir=parent))
            try:
                for name, data in files.items():
                    target = staging / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
                with contextlib.suppress(OSError):  # another worker of this node was first
                    staging.rename(folder)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        use_copy(copy.root, folder)
        _INSTALLED.add(copy.digest)


@contextlib.contextmanager
def linked(link: DriverLink, get: Callable[[Any], Any]) -> Iterator[None]:
    """Play a batch for the driver of ``link``: its packs readable, :func:`driver_link` set."""
    install_packs(link.packs, get)
    with use_link(link):
        yield


def _journal_files(lock: str) -> list[str]:
    """The files of the batch journal whose lock file is ``lock`` (the lock last)."""
    base = lock.removesuffix(".lock")
    return [base + ".sqlite", base + ".sqlite-wal", base + ".sqlite-shm", lock]


def _sweep(folder: Path) -> None:
    """Delete the batch journals left by workers that died mid-batch: a playing batch holds
    its lock file's ``flock`` (freed by the kernel however its process ends, whatever PID
    namespace it is in); a lock younger than :data:`STALE_S` may not be taken yet."""
    if fcntl is None:
        return
    now = time.time()
    for lock in folder.glob("*.lock"):
        try:
            if now - lock.stat().st_mtime < STALE_S:
                continue
            handle = os.open(lock, os.O_RDWR)
        except OSError:
            continue
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(handle)  # its batch is playing
            continue
        try:
            for name in _journal_files(str(lock)):
                with contextlib.suppress(OSError):
                    os.unlink(name)
        finally:
            os.close(handle)


@contextlib.contextmanager
def batch_journal(record: bool) -> Iterator[Any]:
    """A journal of this batch's own in the node's temporary folder (``None`` when the run
    keeps none), deleted when the batch ends: the games' rows leave it with the results. The
    journals of batches whose worker was killed are deleted by the next batch of the node."""
    if not record:
        yield None
        return
    from maze_envs.bench.folder import JOURNAL_HASH_SIZE
    from maze_envs.journal import Journal

    folder = Path(tempfile.gettempdir()) / GAMES_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    _sweep(folder)
    handle, lock = tempfile.mkstemp(suffix=".lock", dir=folder)
    files = _journal_files(lock)
    journal = None
    try:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX)
        journal = Journal(files[0], durable=False, hash_size=JOURNAL_HASH_SIZE)
        yield journal
    finally:
        try:
            if journal is not None:
                journal.close()
        finally:
            for name in files:
                with contextlib.suppress(OSError):
                    os.unlink(name)
            os.close(handle)
