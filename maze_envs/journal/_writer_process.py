"""The journal's writer process: commits the turn rows it reads on stdin, one at a time.

:class:`maze_envs.journal.store.Journal` runs this file as
``python -I _writer_process.py PATH SYNCHRONOUS CHECKPOINT_BYTES INSERT_SQL``. A separate
process, not a thread, so that committing a turn never competes with the game for the GIL: the
game computes the next turn while this process commits the last one on another core. It imports
only the standard library, so it starts in a few tens of milliseconds.

Input: frames of :data:`HEADER` (game id, turn, then the byte lengths of observations, actions,
events, state hash and record hash) followed by those five fields. Output: one reply per frame,
``b"+"`` once its row is committed (its own transaction), or ``b"-"``, a 4-byte little-endian
length and a UTF-8 message saying why it is not. At end of input (the journal closed, or its
process died) it exits after committing the frame in hand.
"""

from __future__ import annotations

import contextlib
import signal
import sqlite3
import struct
import sys
from typing import BinaryIO

HEADER = struct.Struct("<qqIIIII")
ERROR_LENGTH = struct.Struct("<I")


def _read(stream: BinaryIO, size: int) -> bytes | None:
    """Exactly ``size`` bytes, or None at end of input."""
    data = stream.read(size)
    return data if len(data) == size else None


def _reply_error(out: BinaryIO, message: str) -> None:
    text = message.encode()
    out.write(b"-" + ERROR_LENGTH.pack(len(text)) + text)
    out.flush()


def serve(
    inp: BinaryIO, out: BinaryIO, path: str, synchronous: str, checkpoint_bytes: int, insert: str
) -> None:
    """Commit every frame read from ``inp`` and reply on ``out`` until end of input."""
    db = sqlite3.connect(path, isolation_level=None, timeout=30.0)
    try:
        db.execute(f"PRAGMA synchronous={synchronous}")
        db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints: below, between two rows
        written = 0  # bytes of rows since the last checkpoint
        while True:
            header = _read(inp, HEADER.size)
            if header is None:
                return
            game_id, turn, *lengths = HEADER.unpack(header)
            payload = _read(inp, sum(lengths))
            if payload is None:
                return
            fields = []
            start = 0
            for length in lengths:
                fields.append(payload[start : start + length])
                start += length
            observations, actions, events, state_hash, record_hash = fields
            try:
                db.execute(
                    insert,
                    (
                        game_id,
                        turn,
                        observations,
                        actions,
                        events,
                        state_hash.decode(),
                        record_hash.decode(),
                    ),
                )
            except sqlite3.Error as exc:
                _reply_error(out, f"game {game_id}, turn {turn} was not recorded: {exc}")
                continue
            out.write(b"+")
            out.flush()
            # Copy the WAL into the file now and then, so that it starts over instead of
            # growing. After the reply: the game goes on meanwhile. A failed checkpoint loses
            # nothing (the rows are committed in the WAL); the next one retries.
            written += len(observations) + len(actions) + len(events)
            if written >= checkpoint_bytes:
                written = 0
                with contextlib.suppress(sqlite3.Error):
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    finally:
        db.close()


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the game; it closes us
    path, synchronous, checkpoint_bytes, insert = argv
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    try:
        serve(inp, out, path, synchronous, int(checkpoint_bytes), insert)
    except sqlite3.Error as exc:  # the file cannot be opened or set up: answer the next frame
        if _read(inp, HEADER.size) is not None:
            _reply_error(out, str(exc))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
