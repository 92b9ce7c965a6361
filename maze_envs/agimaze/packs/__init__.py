"""The shipped AGI Maze packs and safe access to them by pack-relative path.

Packs are addressed like the real server's paths: ``TUTORIAL/STAGE-01/0000.json``,
``TRAINING/S0-keys/STAGE-01/0005.json``, ``CLASSIC/EASY/pits/4x4/0000.json``,
``EXTENDED/boat/STAGE-01-4x4`` ... A path names either one bundle file or a directory; a
directory stands for every bundle below it, and one of them is drawn with the caller's numpy
Generator. Paths come from users and HTTP clients, so anything that could reach outside the
pack root (``..``, absolute paths, backslashes, symbolic links) is refused with a
:class:`PackPathError`. The pack root is :data:`PACK_ROOT` unless a function is given another
``root`` (a bundle tree of the same layout, e.g. ``maze-envs agimaze serve --pack-root``). The
stage table behind the packs is :mod:`.catalog`; ``maze-envs agimaze build-packs``
(:mod:`.build`) regenerates them.

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
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Final

import numpy as np

from maze_envs.agimaze.bundle import BundleError, load_bundle
from maze_envs.agimaze.types import Bundle

#: Package data directory that holds TUTORIAL/, TRAINING/, CLASSIC/ and EXTENDED/.
PACK_ROOT: Final[Path] = Path(__file__).resolve().parent / "data"
#: Longest pack path accepted (real paths are far shorter).
MAX_PATH_LENGTH: Final = 256
_BUNDLE_SUFFIX: Final = ".json"


class PackPathError(ValueError):
    """A pack path that is malformed, unknown, or would leave the pack root."""


def pack_root(root: Path | None = None) -> Path:
    """The resolved pack root: :data:`PACK_ROOT` for None, else ``root`` if it is a directory.

    Raises :class:`PackPathError` when ``root`` is given and is not a directory.
    """
    if root is None:
        return PACK_ROOT
    resolved = Path(root).resolve()
    if not resolved.is_dir():
        raise PackPathError(f"pack root {str(root)!r} is not a directory")
    return resolved


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
    return parts


def _visible_children(directory: Path) -> list[str]:
    """Names under ``directory`` a user may address: folders (with '/') and bundle files."""
    out: list[str] = []
    for child in sorted(directory.iterdir()):
        if child.name.startswith((".", "_")) or child.is_symlink():
            continue
        if child.is_dir():
            out.append(child.name + "/")
        elif child.suffix == _BUNDLE_SUFFIX:
            out.append(child.name)
    return out


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
    """The file or directory ``path`` names under ``root``, refusing any escape."""
    if not root.is_dir():
        raise PackPathError(
            f"no pack entry {path!r}: the pack root is missing (the shipped packs are built "
            "by 'maze-envs agimaze build-packs')"
        )
    current = root
    for part in _split(path, root):
        if not current.is_dir():
            raise PackPathError(f"pack path {path!r} continues below a file")
        candidate = current / part
        if candidate.is_symlink():
            raise PackPathError(f"pack path {path!r} goes through a symbolic link; refused")
        if not candidate.exists():
            raise PackPathError(f"no pack entry {path!r}: {_choices_text(current, root, part)}")
        current = candidate
    resolved = current.resolve()
    if not resolved.is_relative_to(root):
        raise PackPathError(f"pack path {path!r} leaves the pack root; refused")
    return current


def _bundle_names(directory: Path, root: Path) -> list[str]:
    """Root-relative names of the bundle files below ``directory`` (links skipped), sorted."""
    base = directory.relative_to(root).as_posix()
    prefix = "" if base == "." else base + "/"
    out: list[str] = []
    for folder, subfolders, files in os.walk(directory):
        subfolders[:] = [
            d
            for d in subfolders
            if not d.startswith((".", "_")) and not os.path.islink(os.path.join(folder, d))
        ]
        rel = os.path.relpath(folder, directory).replace(os.sep, "/")
        inner = "" if rel == "." else rel + "/"
        for name in files:
            if (
                name.endswith(_BUNDLE_SUFFIX)
                and not name.startswith((".", "_"))
                and not os.path.islink(os.path.join(folder, name))
            ):
                out.append(prefix + inner + name)
    return sorted(out)


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
    try:
        return name, load_bundle(target)
    except BundleError as exc:
        raise PackPathError(f"pack bundle {name!r} is damaged: {exc}") from None


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


__all__ = ["PACK_ROOT", "PackPathError", "list_bundles", "pack_root", "resolve_pack_path"]
