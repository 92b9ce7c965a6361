"""The fast encoder behind :class:`~wrappers.escape_numeric.EscapeNumericObservation`.

A :class:`NumericPlan` is built once per wrapper. Each turn it reads every agent's raw
observation into one integer matrix ``X`` (a row per agent, a column per scalar or array
entry), then fills one fresh ``float32`` buffer laid out as the flattened vector with a single
scatter: each column of ``X`` has a lookup table giving, for each value the raw space allows, the
buffer column to write and the value to write there (a one-hot position and 1, or the scaled
number, computed once with exactly the arithmetic of the reference encoding). The trail
(scaled straight into the buffer) and the hashed words (cached per text) are the only other
writes. Flat observations are the
buffer's rows; Dict observations are views of the buffer (or of its ``int8`` copy for the
binary fields), so every array is new each turn and none overlaps another.

Example:
    >>> from maze_envs import maze_escape_v1
    >>> from wrappers.escape_numeric import EscapeNumericObservation
    >>> env = EscapeNumericObservation(maze_escape_v1.parallel_env(width=6, height=6), flatten=True)
    >>> observations, infos = env.reset(seed=1)
    >>> plan = env._plan
    >>> plan.encode([env.raw_observations["A"]])[0].tolist() == observations["A"].tolist()
    True
"""

from __future__ import annotations

import re
import zlib
from typing import Any, Final, cast

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from maze_envs.escape.vocab import EDGE_KINDS, MOVE_RESULTS, NOTEBOOK_RESULTS

__all__ = ["NumericPlan", "hash_text"]

_WORDS: Final = re.compile(r"\w+")
_CACHE_LIMIT: Final = 4096


def hash_text(text: str, buckets: int) -> list[int]:
    """The buckets the words of ``text`` fall in (sorted, no repeats; stable across processes).

    Example:
        >>> hash_text("Exit: north, NORTH!", 16) == hash_text("north exit", 16)
        True
        >>> hash_text("", 16)
        []
    """
    if not text:
        return []
    return sorted({zlib.crc32(w.encode()) % buckets for w in _WORDS.findall(text.lower())})


def _bounds(space: spaces.Space[Any]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per-entry integer bounds (flattened) of a raw integer space."""
    if isinstance(space, spaces.Box):
        low = np.broadcast_to(space.low, space.shape).astype(np.int64).ravel()
        high = np.broadcast_to(space.high, space.shape).astype(np.int64).ravel()
        return low, high
    if isinstance(space, spaces.MultiBinary):
        size = int(np.prod(space.shape))
        return np.zeros(size, np.int64), np.ones(size, np.int64)
    if isinstance(space, spaces.MultiDiscrete):
        nvec = np.asarray(space.nvec, np.int64).ravel()
        return np.zeros(nvec.size, np.int64), nvec - 1
    if isinstance(space, spaces.Discrete):
        return np.array([space.start], np.int64), np.array([space.start + space.n - 1], np.int64)
    raise ValueError(f"unexpected raw space {space!r}")  # pragma: no cover


class NumericPlan:
    """Tables and slices for encoding a list of raw observations in one pass (see module)."""

    def __init__(self, wrapper: Any, below: spaces.Dict) -> None:
        config, lay = wrapper.config, wrapper._layout
        self.flatten, self.onehot_edges = wrapper.flatten, wrapper.edge_mode == "onehot"
        self.slots: tuple[str, ...] = tuple(config.agents)
        self.hashing, self.buckets = wrapper.text == "hash", wrapper.hash_buckets
        self.width, start = lay.size, lay.start
        self.binary_width = min(
            (
                start[key]
                for key in ("time", "radio_cooldown", "distances", "position", "trail")
                if key in start
            ),
            default=lay.size,
        )
        n, k = len(self.slots), config.trail_length
        self.k = k if "trail" in wrapper.fields else 0
        self.array_keys = [
            key
            for key in ("distances", "position", "colocated_with", "used_exits")
            if key in wrapper.fields
        ]
        # Columns of X: (low, high, destination(v) -> column, value(domain) -> values).
        columns: list[tuple[int, int, Any, Any]] = []
        f32 = np.float32
        max_turns = config.max_turns
        dict_mode = not self.flatten

        def onehot(base: int) -> Any:
            return lambda v: base + v, lambda d: np.ones(d.size, f32)

        def value(dst: int, scale: Any) -> Any:
            return lambda v: dst, scale

        def flag(dst: int) -> Any:
            return lambda v: dst, lambda d: d.astype(f32)

        def scaled(s: float) -> Any:  # dict: float32 arithmetic; flat: float64, then cast
            if dict_mode:
                return lambda d: d.astype(f32) * f32(s)
            return lambda d: (d * s).astype(f32)

        raw_last = cast(spaces.Dict, below.spaces["last_action"])
        codes = [
            ("on_exit", below.spaces["on_exit"], start["on_exit"]),
            ("landmark", below.spaces["landmark"], start["landmark"]),
            ("move", raw_last.spaces["move"], start["last_action"]),
            ("notebook", raw_last.spaces["notebook"], start["last_action"] + len(MOVE_RESULTS)),
            (
                "radio",
                raw_last.spaces["radio"],
                start["last_action"] + len(MOVE_RESULTS) + len(NOTEBOOK_RESULTS),
            ),
        ]
        for _, space, base in codes:
            lo, hi = _bounds(space)
            columns.append((int(lo[0]), int(hi[0]), *onehot(base)))
        elo, ehi = _bounds(below.spaces["edges"])
        for d in range(elo.size):
            columns.append(
                (int(elo[d]), int(ehi[d]), *onehot(start["edges"] + len(EDGE_KINDS) * d))
            )
        turns = below.spaces["turn"]
        tlo, thi = _bounds(turns)
        inv_turns = 1.0 / max_turns
        t = start["time"]
        if dict_mode:
            time0 = lambda d: d.astype(f32) * f32(inv_turns)  # noqa: E731
            time1 = lambda d: (max_turns - d).astype(f32) * f32(inv_turns)  # noqa: E731
        else:
            time0 = lambda d: (d * inv_turns).astype(f32)  # noqa: E731
            time1 = lambda d: ((max_turns - d) * inv_turns).astype(f32)  # noqa: E731
        columns.append((int(tlo[0]), int(thi[0]), *value(t, time0)))
        columns.append((int(tlo[0]), int(thi[0]), *value(t + 1, time1)))
        clo, chi = _bounds(raw_last.spaces["radio_cooldown"])
        inv_cd = 1.0 / config.radio_cooldown if config.radio_cooldown else 0.0
        if dict_mode:
            cd = lambda d: d.astype(f32) * f32(inv_cd)  # noqa: E731
        else:
            cd = lambda d: (d * inv_cd).astype(f32)  # noqa: E731
        columns.append((int(clo[0]), int(chi[0]), *value(start["radio_cooldown"], cd)))
        for j in range(self.k):  # the trail mask: K copies of trail_length, one per entry
            ones = lambda d, j=j: (d >= self.k - j).astype(f32)  # noqa: E731
            columns.append((0, self.k, *value(start["trail_mask"] + j, ones)))
        for key in ("radio_heard", "notebook_shown"):
            for j in range(n):
                columns.append((0, 1, *flag(start[key] + j)))
        inv_top = wrapper._inv_top
        scale = wrapper._scale
        for key in self.array_keys:
            lo, hi = _bounds(below.spaces[key])
            for j in range(lo.size):
                if key in ("colocated_with", "used_exits"):
                    columns.append((int(lo[j]), int(hi[j]), *flag(start[key] + j)))
                elif key == "distances":
                    columns.append(
                        (int(lo[j]), int(hi[j]), *value(start[key] + j, scaled(inv_top)))
                    )
                else:  # position
                    s = float(scale[j % 2])
                    columns.append((int(lo[j]), int(hi[j]), *value(start[key] + j, scaled(s))))
        offsets, idx, val, total = [], [], [], 0
        for lo_c, hi_c, dst, make in columns:
            domain = np.arange(lo_c, hi_c + 1, dtype=np.int64)
            offsets.append(total - lo_c)
            idx.append(np.array([dst(int(v) - lo_c) for v in domain], np.intp))
            val.append(np.asarray(make(domain), f32))
            total += domain.size
        self._offsets = np.array(offsets, np.int64)
        self._idx = np.concatenate(idx)
        self._val = np.concatenate(val)
        self._rows = [np.arange(m, dtype=np.intp)[:, None] for m in range(n + 1)]
        if self.k:
            self._trail_slice = slice(start["trail"], start["trail"] + 2 * self.k)
            self._trail_scale = np.tile(scale, self.k)  # x, y, x, y, ...
        self._hash_cache: dict[str, tuple[int, ...]] = {}
        if self.hashing:
            b = self.buckets
            self._hash_starts = (
                start["notebook_hash"],
                [start["radio_hash"] + j * b for j in range(n)],
                [start["teammate_hash"] + j * b for j in range(n)],
                start["reasons_hash"],
            )
        # Dict mode: (key, source, slice, shape) per field, in the declared order.
        self._views: list[tuple[str, str, slice, tuple[int, ...] | None]] = []
        for key, space in wrapper.fields.items():
            if key in ("on_exit", "landmark"):
                self._views.append((key, "raw", slice(0), None))
            elif key == "last_action":
                self._views.append((key, "x", slice(2, 5), None))
            elif key == "edges" and not self.onehot_edges:
                self._views.append((key, "x", slice(5, 5 + elo.size), None))
            else:
                a = start[key]
                size = int(np.prod(space.shape)) if key != "edges" else len(EDGE_KINDS) * elo.size
                if a < self.binary_width:
                    self._views.append((key, "binary", slice(a, a + size), None))
                else:
                    b0 = a - self.binary_width
                    shape = space.shape if len(space.shape) > 1 else None
                    self._views.append((key, "float", slice(b0, b0 + size), shape))

    def _buckets_of(self, text: str) -> tuple[int, ...]:
        hit = self._hash_cache.get(text)
        if hit is None:
            if len(self._hash_cache) >= _CACHE_LIMIT:
                self._hash_cache.clear()
            hit = self._hash_cache[text] = tuple(hash_text(text, self.buckets))
        return hit

    def _matrix(self, raws: list[Any]) -> NDArray[np.int64]:
        """X: every agent's raw scalars and array entries, one row per agent."""
        slots, k, keys = self.slots, self.k, self.array_keys
        rows = []
        for r in raws:
            last, radio, shown = r["last_action"], r["radio"], r["teammate_notebooks"]
            turn = r["turn"]
            row = [
                r["on_exit"],
                r["landmark"],
                last["move"],
                last["notebook"],
                last["radio"],
                *r["edges"].tolist(),
                turn,
                turn,
                last["radio_cooldown"],
            ]
            if k:
                row += [r["trail_length"]] * k
            row += [1 if radio[x] else 0 for x in slots]
            row += [shown[x]["shown"] for x in slots]
            for key in keys:
                row += r[key].tolist()
            rows.append(row)
        return np.array(rows, dtype=np.int64)

    def fill(self, raws: list[Any]) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        """The (agents, width) float32 buffer of the flattened layout, and X."""
        m = len(raws)
        x = self._matrix(raws)
        key = x + self._offsets
        buffer = np.zeros((m, self.width), np.float32)
        buffer[self._rows[m], self._idx[key]] = self._val[key]
        if self.k:
            trail = np.array([r["trail"] for r in raws]).reshape(m, -1)
            np.multiply(trail, self._trail_scale, out=buffer[:, self._trail_slice])
        if self.hashing:
            hot = self._hot(raws)
            if hot:
                buffer.reshape(-1)[hot] = 1.0
        return buffer, x

    def _hot(self, raws: list[Any]) -> list[int]:
        """Flat buffer indices of the hashed words' buckets."""
        hot: list[int] = []
        notebook, radio_starts, team_starts, reasons = self._hash_starts
        slots, buckets_of, width = self.slots, self._buckets_of, self.width
        for i, r in enumerate(raws):
            base = i * width
            texts = [(notebook, r["notebook"])]
            radio, shown, last = r["radio"], r["teammate_notebooks"], r["last_action"]
            for j, slot in enumerate(slots):
                texts.append((radio_starts[j], radio[slot]))
                texts.append((team_starts[j], shown[slot]["text"]))
            texts.append((reasons, last["notebook_reason"]))
            texts.append((reasons, last["radio_reason"]))
            for start, text in texts:
                if text:
                    at = base + start
                    hot.extend(at + h for h in buckets_of(text))
        return hot

    def encode(self, raws: list[Any]) -> list[Any]:
        """The observations of ``raws``: flat rows or Dict observations (see module)."""
        buffer, x = self.fill(raws)
        if self.flatten:
            return list(buffer)
        m = len(raws)
        binary = buffer[:, : self.binary_width].astype(np.int8)
        floats = buffer[:, self.binary_width :]
        keys, columns = [], []
        for key, source, where, shape in self._views:
            keys.append(key)
            if source == "raw":
                columns.append([r[key] for r in raws])
            elif source == "x":
                columns.append(list(x[:, where]))
            elif source == "binary":
                columns.append(list(binary[:, where]))
            elif shape is None:
                columns.append(list(floats[:, where]))
            else:
                columns.append(list(floats[:, where].reshape(m, *shape)))
        return [dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True)]
