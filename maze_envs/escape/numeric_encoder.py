"""The scalar env's numeric observations: :class:`NumericEncoder` encodes Maze Escape observation
dicts (version 1 layout) as the numbers :mod:`maze_envs.escape.numeric` defines. It is the encoder
of :class:`wrappers.escape_numeric.EscapeNumericObservation`, and what a policy that plays from
numbers (trained on the batched engine, say) encodes the scalar env's observations with.

Behind it, a :class:`NumericPlan` is built once per encoder from the layout's
:class:`~maze_envs.escape.features.NumericField` list. Each turn it gathers every agent's
integer inputs into one matrix ``X`` (a row per agent, a column per input entry) from the arrays
the environment exposes (:meth:`~maze_envs.escape.env.MazeEscapeEnv.observation_arrays`: the
engine state's integers as one matrix, converted to numpy once, and the observations' own
arrays, in one concatenation: numpy's cost is per part, so the parts are few), then fills one
fresh ``float32`` buffer laid out as the flattened vector with a single scatter: each column of
``X`` has a lookup table giving, for each value the raw space allows, the buffer column to write
and the value to write there (a one-hot position and 1, or the scaled number, computed once with
exactly the arithmetic of the field's declaration). The
hashed words (cached per text) are the only other writes. Flat observations are the buffer's
rows; Dict observations are views of the buffer (or of its ``int8`` copy for the binary fields,
or of ``X`` for the integer codes), one ``(row, columns)`` index each, so every array is new each
turn and none overlaps another.

Example:
    >>> from maze_envs import maze_escape_v1
    >>> env = maze_escape_v1.parallel_env(width=6, height=6)
    >>> observations, infos = env.reset(seed=1)
    >>> encoder = NumericEncoder(env.config, flatten=True)
    >>> vector = encoder.encode([observations["A"]])[0]
    >>> vector.shape, vector.dtype, encoder.space.contains(vector)
    ((64,), dtype('float32'), True)
    >>> typed = Observation.from_space(observations["A"], env.config, "A")
    >>> encoder.encode_model(typed, "A").tolist() == vector.tolist()
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from maze_envs.escape.config import Config
from maze_envs.escape.features import NumericField
from maze_envs.escape.numeric import (
    EdgeMode,
    NumericLayout,
    TextMode,
    field_size,
    hash_text,
    is_binary,
)
from maze_envs.escape.observe import BASE_COLUMNS
from maze_envs.escape.spaces import observation_space
from maze_envs.escape.types import Observation

if TYPE_CHECKING:
    from maze_envs.escape.observe import ObservationArrays

__all__ = ["NumericEncoder", "NumericPlan"]

_CACHE_LIMIT: Final = 4096


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


def _raw_space(raw: spaces.Dict, source: str, slots: int) -> spaces.Space[Any]:
    """The raw space of an input ``source`` (an observation key, ``last_action.<key>``, or a
    per-slot flag of the base matrix)."""
    if source in ("radio_heard", "notebook_shown"):
        return spaces.MultiBinary(slots)
    if source.startswith("last_action."):
        return cast(spaces.Dict, raw.spaces["last_action"]).spaces[source.split(".", 1)[1]]
    return raw.spaces[source]


def _offset(at: int) -> Callable[[int], int]:
    return lambda v: at + v


def _fixed(column: int) -> Callable[[int], int]:
    return lambda v: column


def _ones(domain: NDArray[np.int64]) -> Any:
    return np.ones(domain.size)


def _value(value: Callable[..., Any], j: int, float32: bool) -> Callable[[NDArray[np.int64]], Any]:
    return lambda domain: value(domain, j, float32)


class NumericPlan:
    """Tables and slices for encoding every agent's observation of a turn in one pass."""

    def __init__(self, layout: NumericLayout, raw: spaces.Dict, *, flatten: bool) -> None:
        fields = layout.fields
        slots = layout.slots
        hash_buckets = layout.hash_buckets if layout.text == "hash" else None
        self.flatten, self.slots, self.buckets = flatten, slots, hash_buckets
        n = len(slots)
        base_names = [*BASE_COLUMNS, *(["radio_heard"] * n), *(["notebook_shown"] * n)]
        base_at = {name: base_names.index(name) for name in BASE_COLUMNS}
        base_at["radio_heard"], base_at["notebook_shown"] = len(BASE_COLUMNS), len(BASE_COLUMNS) + n
        # the flattened layout (binary fields first, then the float boxes) is the layout's
        self.start = layout.start
        self.width = layout.width
        self.binary_width = layout.binary_width
        # X: the columns taken from the base matrix, then those from the observations' arrays
        base_columns: list[int] = []
        array_keys: list[str] = []
        self._codes: dict[str, slice] = {}  # X columns of each field, for integer-coded views
        base_tables: list[tuple[int, int, Any, Any]] = []
        array_tables: list[tuple[int, int, Any, Any]] = []
        x_base = 0
        array_fields: list[tuple[NumericField, int]] = []
        for field in fields:
            if not field.source:  # hashed text: written apart
                continue
            sources = (field.source,) if isinstance(field.source, str) else field.source
            from_base = all(s in base_at for s in sources)
            columns = self._columns(field, sources, raw, n)
            if from_base:
                for source in sources:
                    lo, _ = _bounds(_raw_space(raw, source, n))
                    base_columns += [base_at[source] + j for j in range(lo.size)] * field.repeat
                self._codes[field.key] = slice(x_base, x_base + len(columns))
                x_base += len(columns)
                base_tables += columns
            else:
                array_keys += sources
                array_fields.append((field, len(columns)))
                array_tables += columns
        for field, count in array_fields:
            self._codes[field.key] = slice(x_base, x_base + count)
            x_base += count
        # the base columns X takes, in X's order
        self._base_columns = np.array(base_columns, np.intp)
        self._array_keys = array_keys
        offsets, idx, val, total = [], [], [], 0
        for lo_c, hi_c, dst, make in base_tables + array_tables:
            domain = np.arange(lo_c, hi_c + 1, dtype=np.int64)
            offsets.append(total - lo_c)
            idx.append(np.array([dst(int(v) - lo_c) for v in domain], np.intp))
            val.append(np.asarray(make(domain), np.float32))
            total += domain.size
        self._offsets = np.array(offsets, np.int64)
        self._idx = np.concatenate(idx) if idx else np.zeros(0, np.intp)
        self._val = np.concatenate(val) if val else np.zeros(0, np.float32)
        # the start of each agent's row in the flat buffer, as a column
        self._rows = [(np.arange(m, dtype=np.intp) * self.width)[:, None] for m in range(n + 1)]
        self._hash_cache: dict[str, tuple[int, ...]] = {}
        if hash_buckets is not None:
            b = hash_buckets
            self._hash_starts = (
                self.start["notebook_hash"],
                [self.start["radio_hash"] + j * b for j in range(n)],
                [self.start["teammate_hash"] + j * b for j in range(n)],
                self.start["reasons_hash"],
            )
        # Dict mode: (key, source, where, shape) per field, in the declared order.
        self._views: list[tuple[str, str, slice, tuple[int, ...] | None]] = []
        for field in fields:
            space, key = field.space, field.key
            if isinstance(space, spaces.Discrete):
                self._views.append((key, "raw", slice(0), None))
            elif isinstance(space, spaces.MultiDiscrete):
                self._views.append((key, "x", self._codes[key], None))
            else:
                a, size = self.start[key], field_size(field)
                if is_binary(space):
                    self._views.append((key, "binary", slice(a, a + size), None))
                else:
                    b0 = a - self.binary_width
                    shape = space.shape if space.shape and len(space.shape) > 1 else None
                    self._views.append((key, "float", slice(b0, b0 + size), shape))
        # the same per agent row: (key, source: -1 the env's value, else 0 X, 1 binary, 2 float,
        # the (row, columns) index, shape), so each field is one index of a 2-D array
        codes = {"raw": -1, "x": 0, "binary": 1, "float": 2}
        self._agent_views = [
            [(key, codes[src], (i, where), shape) for key, src, where, shape in self._views]
            for i in range(n)
        ]

    def _columns(
        self, field: NumericField, sources: tuple[str, ...], raw: spaces.Dict, n: int
    ) -> list[tuple[int, int, Any, Any]]:
        """(low, high, destination(v), values(domain)) of each X column of ``field``."""
        dict_mode = not self.flatten
        base = self.start[field.key]
        los, his = [], []
        for source in sources:
            lo, hi = _bounds(_raw_space(raw, source, n))
            los += lo.tolist() * field.repeat
            his += hi.tolist() * field.repeat
        columns: list[tuple[int, int, Callable[[int], int], Callable[..., Any]]] = []
        space = field.space
        sizes: list[int] | None = list(field.onehot) or None
        if isinstance(space, spaces.Discrete):
            sizes = [int(space.n)]
        elif isinstance(space, spaces.MultiDiscrete):
            sizes = np.asarray(space.nvec).ravel().tolist()
        value = field.value
        if sizes is None and value is None:
            raise ValueError(f"numeric field {field.key!r} declares neither codes nor a value")
        at = base
        for j, (lo, hi) in enumerate(zip(los, his, strict=True)):
            if sizes is not None:  # a code, one-hot over its values
                columns.append((lo, hi, _offset(at), _ones))
                at += sizes[j]
            else:
                assert value is not None  # checked above
                columns.append((lo, hi, _fixed(base + j), _value(value, j, dict_mode)))
        return columns

    # --- encoding -------------------------------------------------------------------------------
    def _buckets_of(self, text: str) -> tuple[int, ...]:
        hit = self._hash_cache.get(text)
        if hit is None:
            if len(self._hash_cache) >= _CACHE_LIMIT:
                self._hash_cache.clear()
            assert self.buckets is not None
            hit = self._hash_cache[text] = tuple(hash_text(text, self.buckets))
        return hit

    def _fill(
        self, base: Sequence[Sequence[int]], raws: Sequence[Mapping[str, Any]]
    ) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        """The (agents, width) float32 buffer of the flattened layout, and X."""
        m = len(raws)
        keys = self._array_keys
        # Two gathers: the base integers of every agent as one matrix (one conversion of the
        # rows, then the columns X takes), and every agent's arrays in one concatenation (each
        # part costs numpy a set-up, so the fewer the better); then side by side.
        base_x = np.array(base, dtype=np.int64).reshape(m, -1).take(self._base_columns, axis=1)
        if keys:
            parts = [r[field] for r in raws for field in keys]
            arrays = np.concatenate(parts, axis=None, dtype=np.int64).reshape(m, -1)
            x = np.concatenate((base_x, arrays), axis=1)
        else:
            x = base_x
        key = x + self._offsets
        flat = np.zeros(m * self.width, np.float32)
        # one 1-D scatter: each entry's buffer column, moved to its agent's row
        flat[(self._idx.take(key) + self._rows[m]).ravel()] = self._val.take(key).ravel()
        if self.buckets is not None:
            hot = self._hot(raws)
            if hot:
                flat[hot] = 1.0
        return flat.reshape(m, self.width), x

    def _hot(self, raws: Sequence[Mapping[str, Any]]) -> list[int]:
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

    def encode_arrays(
        self, arrays: ObservationArrays, rows: Sequence[int] | None = None
    ) -> list[Any]:
        """The numeric observations of a turn's observation arrays (of the agents ``rows``,
        default all)."""
        raws = arrays.observations
        base = arrays.base_rows
        if rows is not None:
            raws = [raws[i] for i in rows]
            base = [base[i] for i in rows]
        return self._output(*self._fill(base, raws), raws)

    def encode(self, raws: Sequence[Mapping[str, Any]]) -> list[Any]:
        """The numeric observations of any observation dicts of this game (read from the
        dicts; the wrapper uses :meth:`encode_arrays` for the environment's own)."""
        return self._output(*self._fill(self._base_of(raws), raws), raws)

    def _base_of(self, raws: Sequence[Mapping[str, Any]]) -> list[list[int]]:
        """The base matrix (:attr:`~maze_envs.escape.observe.ObservationArrays.base`) of
        observation dicts."""
        slots = self.slots
        flat: list[Any] = []
        for r in raws:
            last, radio, shown = r["last_action"], r["radio"], r["teammate_notebooks"]
            turn = r["turn"]
            flat += (r["on_exit"], r["landmark"], turn, r["turns_left"], r.get("trail_length", 0))
            flat += (last["move"], last["notebook"], last["radio"], last["radio_cooldown"])
            flat += [1 if radio[s] else 0 for s in slots]
            flat += [shown[s]["shown"] for s in slots]
        width = len(flat) // len(raws) if raws else 0
        return [flat[i * width : (i + 1) * width] for i in range(len(raws))]

    def _output(
        self, buffer: NDArray[np.float32], x: NDArray[np.int64], raws: Sequence[Mapping[str, Any]]
    ) -> list[Any]:
        """Flat rows or Dict observations (see the module docstring)."""
        if self.flatten:
            return list(buffer)
        binary = buffer[:, : self.binary_width].astype(np.int8)
        floats = buffer[:, self.binary_width :]
        sources = (x, binary, floats)
        result = []
        for r, views in zip(raws, self._agent_views):  # noqa: B905 (a row of views per agent)
            obs = {}
            for key, source, index, shape in views:  # one numpy index per field, no row views
                if source < 0:
                    obs[key] = r[key]
                elif shape is None:
                    obs[key] = sources[source][index]
                else:
                    obs[key] = sources[source][index].reshape(shape)
            result.append(obs)
        return result


class NumericEncoder:
    """Maze Escape observations (version 1 dicts, or typed models) as numbers.

    ``flatten=True``: one ``float32`` vector per observation, a member of ``space`` (the
    ``Box`` of :meth:`NumericLayout.flat_space`); else a ``Dict`` of the fields. ``text``,
    ``hash_buckets`` and ``edges`` as in :class:`~maze_envs.escape.numeric.NumericLayout`.
    Every array it returns is new.
    """

    def __init__(
        self,
        config: Config,
        *,
        text: TextMode = "drop",
        hash_buckets: int = 32,
        flatten: bool = False,
        edges: EdgeMode = "onehot",
    ) -> None:
        self.config = config
        self.layout = NumericLayout(config, text=text, hash_buckets=hash_buckets, edges=edges)
        self.flatten = flatten
        #: the encoded observation's space
        self.space: spaces.Space[Any] = (
            self.layout.flat_space() if flatten else self.layout.dict_space()
        )
        raw = observation_space(config, config.agents[0], 1)
        self.plan = NumericPlan(self.layout, raw, flatten=flatten)

    def encode(self, observations: Sequence[Mapping[str, Any]]) -> list[Any]:
        """The numeric observations of observation dicts of this game (version 1 layout)."""
        return self.plan.encode(observations)

    def encode_arrays(
        self, arrays: ObservationArrays, rows: Sequence[int] | None = None
    ) -> list[Any]:
        """The numeric observations of the env's latest observation arrays
        (:meth:`~maze_envs.escape.env.MazeEscapeEnv.observation_arrays`; agents ``rows``)."""
        return self.plan.encode_arrays(arrays, rows)

    def encode_rows(self, arrays: ObservationArrays) -> NDArray[np.float32]:
        """Every agent's flattened numeric observation of the env's latest observation arrays,
        as one ``(agents, width)`` float32 matrix (a row per agent, in name order; new)."""
        if not self.flatten:
            raise ValueError(
                "encode_rows gives flattened vectors: build the encoder with flatten=True"
            )
        return self.plan._fill(arrays.base_rows, arrays.observations)[0]

    def encode_model(self, observation: Observation, agent: str) -> Any:
        """The numeric observation of ``agent``'s typed observation (what a policy gets)."""
        return self.plan.encode([observation.to_space(self.config, agent, 1)])[0]
