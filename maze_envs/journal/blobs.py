"""Large repeated text stored once: :class:`Blob` and the ``{"$blob": key}`` references.

A policy's per-decision record may carry text that repeats turn after turn (a model prompt's
stable prefix, a system prompt). Wrapped in :class:`Blob` anywhere inside the record (in dicts,
lists, tuples or pydantic models), the text is stored once in the journal's ``blobs`` table
under the SHA-256 hex of its UTF-8 bytes, and the record holds ``{"$blob": "<key>"}`` in its
place. The reference is part of the turn's record-hash chain and the key is the content's hash,
so an edit of either is found by ``maze-envs verify``.

Decision records are informational (a replay does not recompute them), so they are stored
leniently: mapping keys become strings and a value JSON cannot hold is stored as
``{"unencodable": repr(value)}``. A record must not contain a ``{"$blob": ...}`` object of its
own (it would read back as a reference): that raises ``ValueError``.

Example:
    >>> prompt = Blob("You are in a maze. " * 40)
    >>> stored, texts = extract_blobs({"prompt": [prompt, "turn 3: go north?"]})
    >>> stored["prompt"][0] == {"$blob": prompt.key}, list(texts) == [prompt.key]
    (True, True)
    >>> resolve_blobs(stored, texts.__getitem__)["prompt"][1]
    'turn 3: go north?'
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from maze_envs.journal.format import json_default

#: The one key of a reference object.
BLOB_REF: Final = "$blob"


def blob_key(text: str) -> str:
    """The key of ``text`` in the ``blobs`` table: SHA-256 hex of its UTF-8 bytes."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Blob:
    """Text to store once in the journal, referenced from a decision record by its key."""

    text: str
    key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ValueError(f"Blob holds text (str), got {type(self.text).__name__}")
        object.__setattr__(self, "key", blob_key(self.text))


def is_reference(value: Any) -> bool:
    """Whether ``value`` (decoded JSON) is a ``{"$blob": key}`` reference."""
    return type(value) is dict and len(value) == 1 and isinstance(value.get(BLOB_REF), str)


def extract_blobs(value: Any) -> tuple[Any, dict[str, str]]:
    """``value`` with every :class:`Blob` replaced by its reference, and the texts by key.

    Mappings become dicts with string keys, tuples become lists, pydantic models their
    ``model_dump()``; other values are left for the encoder.
    """
    texts: dict[str, str] = {}

    def walk(item: Any, depth: int) -> Any:
        if depth > 200:
            raise ValueError("a decision record is nested more than 200 levels deep")
        if isinstance(item, Blob):
            texts[item.key] = item.text
            return {BLOB_REF: item.key}
        if isinstance(item, Mapping):
            if len(item) == 1 and BLOB_REF in item:
                raise ValueError(
                    f'a decision record cannot hold a {{"{BLOB_REF}": ...}} object of its own; '
                    "wrap the text in maze_envs.journal.Blob to store it once"
                )
            return {str(k): walk(v, depth + 1) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v, depth + 1) for v in item]
        model_dump = getattr(item, "model_dump", None)
        if callable(model_dump) and not isinstance(item, type):
            return walk(model_dump(), depth + 1)
        return item

    return walk(value, 0), texts


def _lenient(value: Any) -> Any:
    try:
        return json_default(value)
    except TypeError:
        return {"unencodable": repr(value)}


def encode_decisions(decisions: Mapping[str, Any] | None) -> tuple[bytes, dict[str, str]]:
    """The stored JSON of a turn's decision records and the blob texts they reference."""
    if not decisions:
        return b"{}", {}
    stored, texts = extract_blobs(decisions)
    # the encoder of format.py, with a lenient fallback for values JSON cannot hold
    return orjson.dumps(stored, default=_lenient, option=orjson.OPT_SERIALIZE_NUMPY), texts


def references(value: Any) -> Iterator[str]:
    """Every blob key referenced inside ``value`` (decoded JSON), in order of appearance."""
    if is_reference(value):
        yield value[BLOB_REF]
    elif isinstance(value, dict):
        for item in value.values():
            yield from references(item)
    elif isinstance(value, list):
        for item in value:
            yield from references(item)


def resolve_blobs(value: Any, lookup: Callable[[str], str]) -> Any:
    """``value`` (decoded JSON) with every reference replaced by ``lookup(key)``."""
    if is_reference(value):
        return lookup(value[BLOB_REF])
    if isinstance(value, dict):
        return {k: resolve_blobs(v, lookup) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_blobs(v, lookup) for v in value]
    return value


__all__ = [
    "BLOB_REF",
    "Blob",
    "blob_key",
    "encode_decisions",
    "extract_blobs",
    "is_reference",
    "references",
    "resolve_blobs",
]
