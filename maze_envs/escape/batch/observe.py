"""The numeric observations of N games, written straight from the state into a float32 buffer.

Each row is the vector :mod:`maze_envs.escape.numeric` defines for the configuration (the
flattened form, the one ``EscapeNumericObservation(flatten=True)`` gives the scalar env's agents;
``text="drop"``: the batched engine has no free text). Every value comes from a lookup table
built once from the fields' own declarations (their ``value`` with the flattened form's
arithmetic), so the batched and the scalar numbers are the same floats, not merely close ones;
the differential test (``tests/escape/batch/test_differential.py``) checks it turn by turn.

Writes go into a buffer the caller allocated once (``(G * n, width)`` float32, zeroed once):
one-hot groups and flags are written whole, so nothing needs clearing between turns, and the
entries that never change in a batched game (no radio text heard, no notebook edit) keep the
value they were given when the buffer was made (:meth:`Observer.prepare`).

Example:
    >>> import numpy as np
    >>> from maze_envs.escape.batch.engine import Rules, start_games
    >>> from maze_envs.escape.batch.generator import BoardSource
    >>> from maze_envs.escape.config import Config
    >>> from maze_envs.escape.numeric import NumericLayout
    >>> config = Config(width=5, height=5, num_agents=2)
    >>> rules, layout = Rules(config), NumericLayout(config)
    >>> state = rules.empty_state(games=4)
    >>> boards = BoardSource(config).draw(4, np.random.default_rng(0))
    >>> start_games(state, rules, np.arange(4), boards)
    >>> observer = Observer(rules, layout)
    >>> buffer = observer.prepare(np.zeros((8, layout.width), np.float32))
    >>> observer.write(state, buffer)
    >>> layout.flat_space().contains(buffer[0])
    True
    >>> buffer[:, layout.span("edges")].sum(axis=1).tolist()  # four edges, one kind each
    [4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.batch.engine import Rules
from maze_envs.escape.batch.types import FRAME_BITS, OPEN_BITS, BatchState
from maze_envs.escape.features.distances import pair_tenths
from maze_envs.escape.numeric import NumericLayout
from maze_envs.escape.vocab import (
    EDGE_KINDS,
    LANDMARK_NAMES,
    MOVE_RESULTS,
    NOTEBOOK_RESULTS,
    RADIO_RESULTS,
    EdgeKind,
    NotebookResult,
)
from maze_envs.grid import tenths_table

__all__ = ["Observer"]


class _Games(NamedTuple):
    """The arrays of the games being observed (the state's own, or copies of some games')."""

    positions: NDArray[np.intp]  # (k, n)
    turn: NDArray[np.int64]  # (k,)
    exit_cell: NDArray[np.intp]  # (k,)
    board: NDArray[np.uint8]  # (k * C,)
    landmark: NDArray[np.uint8]  # (k * C,)
    cell_base: NDArray[np.intp]  # (k * n,) game * C of each row
    move_result: NDArray[np.intp]  # (k, n)
    radio_result: NDArray[np.intp]  # (k, n)
    ready_turn: NDArray[np.int64]  # (k, n)
    symbols: NDArray[np.int64]  # (k, n)
    origin: NDArray[np.intp]  # (k * n,)
    used: NDArray[np.uint8]  # (k * n, C) or empty
    trail: NDArray[np.int16]  # (k * n, K): oldest first


def _values(layout: NumericLayout, key: str, j: int, domain: NDArray[np.int64]) -> Any:
    """Entry ``j`` of field ``key`` for each raw integer of ``domain``, as the field declares
    it (the flattened form's arithmetic)."""
    field = layout.by_key[key]
    assert field.value is not None  # a value field, not codes
    return np.asarray(field.value(domain, j, False), np.float32)


class Observer:
    """Writes the numeric observations of a configuration's games (tables built once)."""

    def __init__(self, rules: Rules, layout: NumericLayout) -> None:
        config = rules.config
        if layout.text != "drop" or layout.edges != "onehot":
            raise ValueError("the batched engine writes the flattened layout with text='drop'")
        self.rules, self.layout, self.width = rules, layout, layout.width
        n, cells = rules.agents, rules.cells
        start = layout.start
        self._span = {key: layout.span(key) for key in layout.start}
        # one-hot tables: edges by board byte; last action by (move result, radio result)
        edges = np.zeros((256, len(OPEN_BITS) * len(EDGE_KINDS)), np.float32)
        byte = np.arange(256)
        for d, bit in enumerate(OPEN_BITS):
            kind = np.where(
                byte & bit,
                EdgeKind.OPEN,
                np.where(byte & FRAME_BITS[d], EdgeKind.OUTER_BRICK, EdgeKind.INTERIOR_WALL),
            )
            edges[byte, d * len(EDGE_KINDS) + kind] = 1.0
        self._edges = edges
        self._on_exit = np.eye(2, dtype=np.float32)
        self._landmark = np.eye(len(LANDMARK_NAMES) + 1, dtype=np.float32)
        moves, radios = len(MOVE_RESULTS), len(RADIO_RESULTS)
        last = np.zeros((moves * radios, moves + len(NOTEBOOK_RESULTS) + radios), np.float32)
        for m in range(moves):
            for r in range(radios):
                last[m * radios + r, m] = 1.0
                last[m * radios + r, moves + NotebookResult.NONE] = 1.0
                last[m * radios + r, moves + len(NOTEBOOK_RESULTS) + r] = 1.0
        self._last = last
        self._radios = radios
        turns = np.arange(config.max_turns + 1)
        self._turn = _values(layout, "time", 0, turns)
        self._turns_left = _values(layout, "time", 1, turns)
        self._cooldown = _values(layout, "radio_cooldown", 0, np.arange(config.radio_cooldown + 1))
        self._time = start["time"]
        self._cooldown_at = start["radio_cooldown"]
        self._features = set(layout.start)
        if "distances" in self._features:
            tenths = np.frombuffer(pair_tenths(config.width, config.height), np.uint16)
            top = int(np.array(tenths_table(max(config.width, config.height))).max())
            self._pair = _values(layout, "distances", 0, np.arange(top + 1)).take(tenths)
        codes = np.arange((2 * rules.span_x + 1) * rules.code_stride)
        xs = codes // rules.code_stride - rules.span_x
        ys = codes % rules.code_stride - rules.span_y
        if "position" in self._features:
            self._position = np.stack(
                [_values(layout, "position", 0, xs), _values(layout, "position", 1, ys)], axis=1
            )
        k = rules.trail_length
        if k:
            self._trail = np.stack(
                [_values(layout, "trail", 0, xs), _values(layout, "trail", 1, ys)], axis=1
            )
            lengths = np.arange(k + 1)
            self._trail_mask = np.stack(
                [_values(layout, "trail_mask", j, lengths) for j in range(k)], axis=1
            )
        if "used_exits" in self._features:
            masks = np.arange(16)
            self._used = np.stack([(masks >> d) & 1 for d in range(4)], axis=1).astype(np.float32)
        if rules.symbols:
            self._symbol = np.eye(rules.symbols + 1, dtype=np.float32)
        self._others = ~np.eye(n, dtype=np.bool_)  # [i, j]: slot j is a teammate of agent i
        self._cells = cells

    def prepare(self, buffer: NDArray[np.float32]) -> NDArray[np.float32]:
        """Zero a new buffer (what a batched game never changes stays as written here)."""
        buffer[...] = 0.0
        return buffer

    def write(
        self,
        state: BatchState,
        out: NDArray[np.float32],
        games: NDArray[np.intp] | None = None,
    ) -> None:
        """Write the observations of every game (``games=None``: ``out`` is the whole
        ``(G * n, width)`` buffer) or of ``games`` (``out``: their rows, in that order)."""
        view = self._games(state, games)
        rules, span = self.rules, self._span
        k, n = view.positions.shape
        rows = out.reshape(k, n, self.width)
        positions = view.positions.reshape(-1)
        cells = view.cell_base + positions
        out[:, span["edges"]] = self._edges.take(view.board.take(cells), axis=0)
        on_exit = view.positions == view.exit_cell[:, None]
        rows[:, :, span["on_exit"]] = self._on_exit.take(on_exit, axis=0)
        out[:, span["landmark"]] = self._landmark.take(view.landmark.take(cells), axis=0)
        last = view.move_result * self._radios + view.radio_result
        rows[:, :, span["last_action"]] = self._last.take(last, axis=0)
        turn = view.turn
        rows[:, :, self._time] = self._turn.take(turn)[:, None]
        rows[:, :, self._time + 1] = self._turns_left.take(rules.config.max_turns - turn)[:, None]
        cooldown = view.ready_turn - turn[:, None] - 1
        np.maximum(cooldown, 0, out=cooldown)
        rows[:, :, self._cooldown_at] = self._cooldown.take(cooldown)
        together = view.positions[:, :, None] == view.positions[:, None, :]
        together &= self._others
        rows[:, :, span["notebook_shown"]] = together
        features = self._features
        if "distances" in features:
            pair = self._pair
            at = span["distances"].start
            rows[:, :, at] = pair.take(view.exit_cell[:, None] * self._cells + view.positions)
            teammates = view.positions[:, :, None] * self._cells + view.positions[:, None, :]
            rows[:, :, at + 1 : at + 1 + n] = pair.take(teammates)
        if "position" in features:
            code = rules.absolute_code.take(positions)
            code -= view.origin
            out[:, span["position"]] = self._position.take(code, axis=0)
        if rules.trail_length:
            out[:, span["trail"]] = self._trail.take(view.trail, axis=0).reshape(k * n, -1)
            length = np.minimum(turn, rules.trail_length)
            rows[:, :, span["trail_mask"]] = self._trail_mask.take(length, axis=0)[:, None, :]
        if "colocated_with" in features:
            rows[:, :, span["colocated_with"]] = together
        if "used_exits" in features:
            used = view.used.reshape(-1).take(np.arange(k * n) * self._cells + positions)
            out[:, span["used_exits"]] = self._used.take(used, axis=0)
        if rules.symbols:
            heard = np.where(self._others, view.symbols[:, None, :], 0)
            rows[:, :, span["radio_symbols"]] = self._symbol.take(heard, axis=0).reshape(k, n, -1)

    def _games(self, state: BatchState, games: NDArray[np.intp] | None) -> _Games:
        rules = self.rules
        n, cells, k_trail = rules.agents, rules.cells, rules.trail_length
        head = state.trail_head
        if games is None:
            count = state.games
            return _Games(
                state.positions,
                state.turn,
                state.exit_cell,
                state.board.reshape(-1),
                state.landmark.reshape(-1),
                rules.row_base(count, per_row=False),
                state.move_result,
                state.radio_result,
                state.ready_turn,
                state.symbols,
                state.origin,
                state.used,
                state.trail[:, head : head + k_trail],
            )
        rows = (games[:, None] * n + np.arange(n)).ravel()
        return _Games(
            state.positions[games],
            state.turn[games],
            state.exit_cell[games],
            state.board[games].reshape(-1),
            state.landmark[games].reshape(-1),
            np.repeat(np.arange(len(games), dtype=np.intp) * cells, n),
            state.move_result[games],
            state.radio_result[games],
            state.ready_turn[games],
            state.symbols[games],
            state.origin[rows],
            state.used[rows] if rules.used_exits else state.used,
            state.trail[rows, head : head + k_trail],
        )
