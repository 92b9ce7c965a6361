"""Schema version 5: a turn row's ``body``, the turn's four parts compressed in the game's stream.

A turn's *payload* is its four parts joined by NUL bytes (compact JSON never holds one): the
actions (as received), the observations and the events (items of :mod:`.delta`: what changed
since the game's previous turn) and the decisions (``{agent: record}``). The payloads of a
game's turns are compressed as one raw deflate stream (zlib, level :data:`LEVEL`; a journal that
stores turns whole compresses each alone at :data:`WHOLE_LEVEL`), each turn
ending with a sync flush, so a turn's body holds the
bytes of its own payload only and can refer back to the last few kilobytes of the game's
earlier turns (a trail moved on by a cell, a note an observation shares with the action, a
message heard before). The ``00 00 ff ff`` every sync flush ends with is left out.

``body = flag + deflate bytes``: flag ``0`` continues the game's stream from the turn before,
``1`` starts a new stream (a game's first turn, the first turn after a write that failed, and
every turn of a journal that stores turns whole), whose observations and events are read
without the turn before. A body is read in order, after every earlier turn of its game since
the last one that started a stream.

Example:
    >>> packer, unpacker = BodyPacker(), BodyUnpacker()
    >>> bodies = [packer.pack([b'{"A":1}', b"{}", b"{}", b"{}"]) for _ in range(3)]
    >>> [body[0] for body in bodies], len(bodies[2]) < len(bodies[0])
    ([1, 0, 0], True)
    >>> [unpacker.unpack(body) for body in bodies][2]  # (it does not start a stream)
    (False, [b'{"A":1}', b'{}', b'{}', b'{}'])
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from typing import Final

#: zlib's level for the stream: 8 stores a navigator turn in ~76 bytes (6: ~83) for about twice
#: the time of level 6 (~1 KiB of payload a turn; ``benchmarks/README.md``).
LEVEL: Final = 8
#: zlib's level for a journal that stores every turn whole, each its own stream
#: (``Journal(changes=False)``): a new compressor each turn, so the fastest level (a 24 KB
#: navigator turn: ~200 us and ~4.6 KB at level 1 against ~1,500 us and ~3.0 KB at level 8).
WHOLE_LEVEL: Final = 1
#: The stream's window: 2**15 = 32 KiB of earlier turns (about 256 KiB of memory per game being
#: written; the compressor is dropped when the game ends).
WINDOW_BITS: Final = 15
MEMORY_LEVEL: Final = 8
#: What every sync flush ends with (left out of the stored body).
SYNC_TAIL: Final = b"\x00\x00\xff\xff"
CONTINUES, STARTS = 0, 1
PARTS: Final = ("actions", "observations", "events", "decisions")


def frame(parts: Sequence[bytes]) -> bytes:
    """The payload of a turn: its parts joined by NUL bytes."""
    return b"\0".join(parts)


def split(payload: bytes) -> list[bytes]:
    """The parts of a payload (``ValueError`` when it does not hold exactly four)."""
    parts = payload.split(b"\0")
    if len(parts) != len(PARTS):
        raise ValueError(f"the turn's payload holds {len(parts)} parts, not {len(PARTS)}")
    return parts


class BodyPacker:
    """Compresses one game's payloads, turn after turn (``whole``: each turn a new stream)."""

    def __init__(self, *, whole: bool = False) -> None:
        self._stream: zlib._Compress | None = None
        self._whole = whole

    def pack(self, parts: Sequence[bytes]) -> bytes:
        """The body of a turn whose parts are ``parts`` (see the module docstring)."""
        stream = self._stream
        flag = b"\x00"
        if stream is None:
            level = WHOLE_LEVEL if self._whole else LEVEL
            stream = zlib.compressobj(level, zlib.DEFLATED, -WINDOW_BITS, MEMORY_LEVEL)
            if not self._whole:
                self._stream = stream
            flag = b"\x01"
        data = stream.compress(frame(parts)) + stream.flush(zlib.Z_SYNC_FLUSH)
        return flag + data[:-4]

    @property
    def starts(self) -> bool:
        """Whether the next body starts a new stream."""
        return self._stream is None


class BodyUnpacker:
    """Reads one game's bodies back in order into their parts."""

    def __init__(self) -> None:
        self._stream: zlib._Decompress | None = None

    def unpack(self, body: bytes) -> tuple[bool, list[bytes]]:
        """(whether the body starts a new stream, its parts); ``ValueError`` when it cannot be
        read (after which only a body that starts a stream can be)."""
        if type(body) is not bytes or not body or body[0] > STARTS:
            self._stream = None
            raise ValueError("the turn's body is not a journal body (a flag byte, then deflate)")
        starts = body[0] == STARTS
        stream = self._stream
        if starts or stream is None:
            if not starts:
                raise ValueError("the turn continues a compressed stream that was not read")
            stream = self._stream = zlib.decompressobj(-15)
        try:
            payload = stream.decompress(body[1:] + SYNC_TAIL)
        except zlib.error as exc:
            self._stream = None
            raise ValueError(f"the turn's body cannot be decompressed ({exc})") from None
        if stream.unconsumed_tail or stream.eof:
            self._stream = None
            raise ValueError("the turn's body holds more than one turn")
        try:
            return starts, split(payload)
        except ValueError:
            self._stream = None
            raise


def unpack_bodies(bodies: Iterable[bytes]) -> list[tuple[bool, list[bytes]]]:
    """A game's bodies in order, read: (whether each starts a stream, its parts)."""
    unpacker = BodyUnpacker()
    return [unpacker.unpack(body) for body in bodies]


def pack_bodies(turns: Iterable[tuple[bool, Sequence[bytes]]]) -> list[bytes]:
    """The bodies of a game's turns given as (whether it starts a stream, its parts), packed
    again in order (what :func:`unpack_bodies` reads back; a turn that does not start a stream
    continues the one before it)."""
    bodies, packer = [], BodyPacker()
    for starts, parts in turns:
        if starts:
            packer = BodyPacker()
        bodies.append(packer.pack(parts))
    return bodies


__all__ = [
    "PARTS",
    "BodyPacker",
    "BodyUnpacker",
    "frame",
    "pack_bodies",
    "split",
    "unpack_bodies",
]
