"""Reading and writing versioned AGI Maze JSON bundles.

``dump_bundle`` gives canonical bytes (sorted keys, two-space indent, trailing newline), so a
regenerated pack can be compared byte for byte with the shipped one.

Example:
    >>> from maze_envs.agimaze.types import Bundle, ExitGap, Labyrinth
    >>> lab = Labyrinth(rows=1, cols=1, open_edges=[[0]],
    ...                 exit=ExitGap(cell=(0, 0), side="up"), start=(0, 0))
    >>> text = dump_bundle(Bundle(labyrinth=lab))
    >>> parse_bundle(text).labyrinth == lab
    True
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from maze_envs.agimaze.types import Bundle


class BundleError(ValueError):
    """A bundle file or text that cannot be read as a valid labyrinth bundle."""


def dump_bundle(bundle: Bundle) -> str:
    """Canonical JSON text of ``bundle``."""
    data = bundle.model_dump(mode="json")
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=True) + "\n"


def parse_bundle(text: str, source: str = "<text>") -> Bundle:
    """Parse bundle JSON text; ``source`` names it in error messages."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BundleError(f"{source}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BundleError(f"{source}: a bundle is a JSON object, got {type(data).__name__}")
    try:
        return Bundle.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<bundle>'}: {err['msg']}"
            for err in exc.errors()
        )
        raise BundleError(f"{source}: invalid bundle: {problems}") from None


def load_bundle(path: str | Path) -> Bundle:
    """Read and validate the bundle at ``path``."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BundleError(f"{file}: no such bundle file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BundleError(f"{file}: cannot read bundle ({exc})") from None
    return parse_bundle(text, source=str(file))


def save_bundle(bundle: Bundle, path: str | Path) -> None:
    """Write ``bundle`` canonically to ``path`` (parent folders are created)."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(dump_bundle(bundle), encoding="utf-8")
