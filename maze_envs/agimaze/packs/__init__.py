"""The shipped AGI Maze packs and safe access to them by pack-relative path.

Packs are addressed like the real server's paths: ``TUTORIAL/STAGE-01/0000.json``,
``TRAINING/S0-keys/STAGE-01/0005.json``, ``CLASSIC/EASY/pits/4x4/0000.json``,
``EXTENDED/boat/STAGE-01-4x4`` ... A path names either one bundle file or a directory; a
directory stands for every bundle below it, and one of them is drawn with the caller's numpy
Generator. Paths come from users and HTTP clients, so anything that could reach outside the
pack root (``..``, absolute paths, backslashes, symbolic links) is refused with a
:class:`PackPathError`, and so is every path the file system cannot take (a part longer than
:data:`MAX_PART_BYTES` bytes, any ``OSError``). Only regular files are bundles: a FIFO, socket or
device named ``x.json`` is skipped in listings and refused by name, so nothing ever blocks on
it. Error messages name only the requested, root-relative path, never a path of the machine
(they travel to HTTP clients). The pack root is :data:`PACK_ROOT` unless a function is given another
``root`` (a bundle tree of the same layout, e.g. ``maze-envs agimaze serve --pack-root``). The
stage table behind the packs is :mod:`.catalog`; ``maze-envs agimaze build-packs``
(:mod:`.build`) regenerates them.

Pack versions. :data:`PACK_ROOT` holds the current version, :data:`DEFAULT_PACK_VERSION`; every
earlier version still ships, unchanged, so results obtained on it can be reproduced:
:func:`version_root` gives the bundle tree of a version named in :data:`PACK_VERSIONS` (pass it
as ``root``, or ``pack_version=`` to the environments and ``maze-envs bench``). A bundle's
``meta.pack_version`` names the version it belongs to.

Example:
    >>> import numpy as np
    >>> name, bundle = resolve_pack_path("TRAINING/S0-keys/STAGE-01/0005.json")
    >>> name, bundle.labyrinth.rows, bundle.labyrinth.cols
    ('TRAINING/S0-keys/STAGE-01/0005.json', 3, 3)
    >>> name, _ = resolve_pack_path("TRAINING/S0-keys/STAGE-01", np.random.default_rng(0))
    >>> name.startswith("TRAINING/S0-keys/STAGE-01/")
    True
    >>> len(list_bundles("TRAINING/S0-keys/STAGE-01/"))
    10
    >>> old = version_root("agimaze-packs-2")
    >>> resolve_pack_path("TRAINING/S0-keys/STAGE-01/0005.json", root=old)[1].meta.pack_version
    'agimaze-packs-2'
"""

from __future__ import annotations

import difflib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

import numpy as np

from maze_envs.agimaze.bundle import BundleError, parse_bundle
from maze_envs.agimaze.types import Bundle

_HERE: Final = Path(__file__).resolve().parent
#: Package data directory that holds TUTORIAL/, TRAINING/, CLASSIC/ and EXTENDED/.
PACK_ROOT: Final[Path] = _HERE / "data"
#: The pack version in :data:`PACK_ROOT`, played unless another is asked for.
DEFAULT_PACK_VERSION: Final = "agimaze-packs-3"
#: Every shipped pack version -> its bundle tree, newest first. ``agimaze-packs-2`` (generator
#: version 2) may hold reachable dead states; ``agimaze-packs-3`` has none outside grenade
#: throws and calibrates the good / late split too (``docs/agimaze-packs.md``).
PACK_VERSIONS: Final[dict[str, Path]] = {
    DEFAULT_PACK_VERSION: PACK_ROOT,
    "agimaze-packs-2": _HERE / "archive" / "agimaze-packs-2",
}
#: Longest pack path accepted, in characters (real paths are far shorter; as the API allows).
MAX_PATH_LENGTH: Final = 512
#: Longest part (file or folder name) of a pack path, in UTF-8 bytes (POSIX NAME_MAX).
MAX_PART_BYTES: Final = 255
#: Largest bundle file read (shipped bundles are a few KiB).
MAX_BUNDLE_BYTES: Final = 4 * 1024 * 1024
_BUNDLE_SUFFIX: Final = ".json"


class PackPathError(ValueError):
    """A pack path that is malformed, unknown, or would leave the pack root."""


#: Pack roots named by a path of another machine -> their copy here (:func:`use_copy`).
_COPIES: dict[str, Path] = {}


def use_copy(root: str | Path, copy: Path) -> None:
    """Read the pack root ``root``, a path of another machine (a Ray run's driver), from
    ``copy``: a folder of this machine holding the bundles of it that were sent here
    (:mod:`maze_envs.bench.travel`). Games keep naming ``root``; only reading goes to the copy.
    """
    _COPIES[str(Path(root))] = Path(copy).resolve()


def pack_root(root: Path | None = None) -> Path:
    """The resolved pack root: :data:`PACK_ROOT` for None, else ``root`` if it is a directory
    (or its copy on this machine, :func:`use_copy`).

    Raises :class:`PackPathError` when ``root`` is given and is not a directory.
    """
    if root is None:
        return PACK_ROOT
    copy = _COPIES.get(str(Path(root)))
    if copy is not None:
        return copy
    resolved = Path(root).resolve()
    if not resolved.is_dir():
        raise PackPathError(f"pack root {str(root)!r} is not a directory")
    return resolved


def version_root(version: str) -> Path:
    """The bundle tree of the shipped pack version ``version`` (see :data:`PACK_VERSIONS`).

    Raises :class:`PackPathError` naming the versions that exist.
    """
    if not isinstance(version, str) or version not in PACK_VERSIONS:
        known = ", ".join(PACK_VERSIONS)
        raise PackPathError(f"no pack version {version!r}; shipped versions: {known}")
    return PACK_VERSIONS[version]


def _split(path: str, root: Path) -> list[str]:
    """Validate the spelling of a pack path and return its components."""
    if not isinstance(path, str):
        raise PackPathError(f"a pack path is a string, got {type(path).__name__}")
    if not path:
        raise PackPathError(f"empty pack path; {_choices_text(root, root)}")
    if len(path) > MAX_PATH_LENGTH:
        raise PackPathError(f"pack path longer than {MAX_PATH_LENGTH} characters")
    if "\\" in path:
        raise PackPathError(f"pack path {path!r} contains a backslash; separate parts with '/'")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise PackPathError(
            f"pack path {path!r} is absolute; give a path relative to the pack root, "
            "e.g. 'TRAINING/S0-keys/STAGE-01/0000.json'"
        )
    parts = path.removesuffix("/").split("/")
    for part in parts:
        if part in {"", ".", ".."}:
            raise PackPathError(
                f"pack path {path!r} has an empty, '.' or '..' part; pack paths only go down "
                "from the pack root"
            )
        if not part.isprintable() or part.startswith("."):
            raise PackPathError(f"pack path {path!r} has an invalid part {part!r}")
        if len(part.encode("utf-8", "surrogatepass")) > MAX_PART_BYTES:
            raise PackPathError(
                f"pack path {path!r} has a part longer than {MAX_PART_BYTES} bytes (UTF-8)"
            )
    return parts


def _entries(directory: Path) -> Iterator[os.DirEntry[str]]:
    """The visible entries of ``directory``: no dot or underscore names, no symbolic links."""
    with os.scandir(directory) as found:
        for entry in found:
            if not entry.name.startswith((".", "_")) and not entry.is_symlink():
                yield entry


def _is_bundle(entry: os.DirEntry[str]) -> bool:
    """A bundle is a *regular* ``.json`` file (never a FIFO, socket or device)."""
    return entry.name.endswith(_BUNDLE_SUFFIX) and entry.is_file(follow_symlinks=False)


def _visible_children(directory: Path) -> list[str]:
    """Names under ``directory`` a user may address: folders (with '/') and bundle files."""
    out: list[str] = []
    for entry in _entries(directory):
        if entry.is_dir(follow_symlinks=False):
            out.append(entry.name + "/")
        elif _is_bundle(entry):
            out.append(entry.name)
    return sorted(out)


def _choices_text(directory: Path, root: Path, wanted: str = "", limit: int = 12) -> str:
    rel = directory.relative_to(root).as_posix()
    where = "the pack root" if rel == "." else f"'{rel}/'"
    children = _visible_children(directory)
    if not children:
        return f"{where} holds nothing"
    close = difflib.get_close_matches(wanted, children, n=3, cutoff=0.5) if wanted else []
    ordered = close + [c for c in children if c not in close]
    shown = ", ".join(ordered[:limit])
    more = f", ... ({len(children)} in all)" if len(children) > limit else ""
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"{hint}{where} holds: {shown}{more}"


def _locate(path: str, root: Path) -> Path:
    """The regular file or directory ``path`` names under ``root``, refusing any escape."""
    if not root.is_dir():
        raise PackPathError(
            f"no pack entry {path!r}: the pack root is missing (the shipped packs are built "
            "by 'maze-envs agimaze build-packs')"
        )
    parts = _split(path, root)
    try:
        current = root
        for part in parts:
            if not current.is_dir():
                raise PackPathError(f"pack path {path!r} continues below a file")
            candidate = current / part
            if candidate.is_symlink():
                raise PackPathError(f"pack path {path!r} goes through a symbolic link; refused")
            if not candidate.exists():
                choices = _choices_text(current, root, part)
                raise PackPathError(f"no pack entry {path!r}: {choices}")
            current = candidate
        mode = current.lstat().st_mode
        resolved = current.resolve()
    except OSError as exc:  # the OS message would name the server's own path: keep it out
        raise PackPathError(
            f"pack path {path!r} cannot be read ({os.strerror(exc.errno or 0).lower()})"
        ) from None
    if not resolved.is_relative_to(root):
        raise PackPathError(f"pack path {path!r} leaves the pack root; refused")
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        raise PackPathError(f"pack path {path!r} is not a regular file or a directory; refused")
    return current


def _bundle_names(directory: Path, root: Path) -> list[str]:
    """Root-relative names of the regular bundle files below ``directory``, sorted.

    Symbolic links, hidden names and non-regular files are skipped.
    """
    base = directory.relative_to(root).as_posix()
    out: list[str] = []
    pending = [(directory, "" if base == "." else base + "/")]
    while pending:
        folder, prefix = pending.pop()
        try:
            entries = list(_entries(folder))
        except OSError:  # an unreadable folder holds no bundles we can serve
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                pending.append((Path(entry.path), f"{prefix}{entry.name}/"))
            elif _is_bundle(entry):
                out.append(prefix + entry.name)
    return sorted(out)


def _read_bytes(target: Path, name: str) -> bytes:
    """The bytes of the bundle file ``target`` (pack name ``name``), refusing anything not
    regular.

    Opened without following links and without blocking, then checked with ``fstat``: a file
    swapped for a FIFO after the listing cannot stall the caller. Messages name only ``name``.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags)
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(file.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise PackPathError(f"pack path {name!r} is not a regular file; refused")
            if info.st_size > MAX_BUNDLE_BYTES:
                raise PackPathError(
                    f"pack bundle {name!r} is larger than {MAX_BUNDLE_BYTES} bytes; refused"
                )
            data = file.read(MAX_BUNDLE_BYTES + 1)
    except OSError as exc:
        raise PackPathError(
            f"pack bundle {name!r} cannot be read ({os.strerror(exc.errno or 0).lower()})"
        ) from None
    return data


def _read_bundle(target: Path, name: str) -> Bundle:
    """Load the bundle file ``target`` (pack name ``name``); see :func:`_read_bytes`."""
    data = _read_bytes(target, name)
    try:
        return parse_bundle(data.decode("utf-8"), source=name)
    except UnicodeDecodeError:
        raise PackPathError(f"pack bundle {name!r} is damaged: not UTF-8 text") from None
    except BundleError as exc:
        raise PackPathError(f"pack bundle {name!r} is damaged: {exc}") from None


def resolve_pack_path(
    path: str, rng: np.random.Generator | None = None, root: Path | None = None
) -> tuple[str, Bundle]:
    """Load the bundle ``path`` names: a ``.json`` file, or one bundle drawn from a directory.

    A directory stands for every bundle below it (in sorted order); ``rng`` draws one of them
    uniformly, and ``rng=None`` takes the first. ``path`` is relative to ``root`` (default
    :data:`PACK_ROOT`). Returns the root-relative path of the bundle chosen and the bundle.
    Raises :class:`PackPathError` for malformed, unknown or escaping paths (the message lists
    the valid entries nearby), for a bundle file that does not load and for a ``root`` that is
    not a directory.
    """
    base = pack_root(root)
    target = _locate(path, base)
    if target.is_dir():
        names = _bundle_names(target, base)
        if not names:
            raise PackPathError(f"pack directory {path!r} holds no bundles")
        index = 0 if rng is None else int(rng.integers(len(names)))
        target = base / names[index]
    elif target.suffix != _BUNDLE_SUFFIX:
        raise PackPathError(f"pack path {path!r} is not a {_BUNDLE_SUFFIX} bundle")
    name = target.relative_to(base).as_posix()
    return name, _read_bundle(target, name)


def list_bundles(prefix: str = "", root: Path | None = None) -> list[str]:
    """Root-relative paths of every bundle under ``root`` whose path starts with ``prefix``.

    ``root`` defaults to the shipped packs (:data:`PACK_ROOT`; an empty list before they are
    built); another ``root`` must be a directory. ``prefix`` is a plain string prefix:
    ``"TRAINING/S0-keys/STAGE-01/"`` gives that stage's ten bundles and ``"TRAINING/S1"`` every
    S1-rivers bundle. The result is sorted.
    """
    if not isinstance(prefix, str):
        raise PackPathError(f"a pack path prefix is a string, got {type(prefix).__name__}")
    base = pack_root(root)
    if not base.is_dir():
        return []
    return [n for n in _bundle_names(base, base) if n.startswith(prefix)]


def bundle_files(paths: Iterable[str], root: Path) -> dict[str, bytes]:
    """The bytes of every bundle ``paths`` name under ``root`` (a directory: each bundle below
    it), by root-relative name: what a copy of ``root`` on another machine needs to play them
    (:func:`use_copy`). Raises :class:`PackPathError` as :func:`resolve_pack_path` does."""
    base = pack_root(root)
    files: dict[str, bytes] = {}
    for path in paths:
        target = _locate(path, base)
        names = (
            _bundle_names(target, base)
            if target.is_dir()
            else [target.relative_to(base).as_posix()]
        )
        for name in names:
            if name not in files:
                files[name] = _read_bytes(base / name, name)
    return files


__all__ = [
    "DEFAULT_PACK_VERSION",
    "MAX_PART_BYTES",
    "PACK_ROOT",
    "PACK_VERSIONS",
    "PackPathError",
    "bundle_files",
    "list_bundles",
    "pack_root",
    "resolve_pack_path",
    "use_copy",
    "version_root",
]
