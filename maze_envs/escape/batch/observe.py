"""The numeric observations of N games, written straight from the state into a float32 buffer.

Each row is the vector :mod:`maze_envs.escape.numeric` defines for the configuration (the
flattened form, the one ``EscapeNumericObservation(flatten=True)`` gives the scalar env's agents;
``text="drop"``: the batched engine has no free text). Every value comes from a lookup table
built once from the fields' own declarations (their ``value`` with the flattened form's
arithmetic), so the batched and the scalar numbers are the same floats, not merely close ones;
the differential test (``tests/escape/batch/test_differential.py``) checks it turn by turn.

Writes go into a buffer the caller allocated once, laid out *feature-major*: ``(width, G * n)``
float32, one row per entry of the vector, so every write is one contiguous row of all the
agents (the vector env hands out its transpose, an ``(G * n, width)`` view). Codes and flags are
written whole or into zeroed rows, so nothing else needs clearing between turns; the entries
that never change in a batched game (no radio text heard, no notebook edit) keep the value
:meth:`Observer.prepare` gave them when the buffer was made.

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
    >>> buffer = observer.prepare(np.empty((layout.width, 8), np.float32))
    >>> observer.write(state, buffer)
    >>> layout.flat_space().contains(buffer[:, 0])
    True
    >>> buffer[layout.span("edges")].sum(axis=0).tolist()  # four edges, one kind each
    [4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

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
    RadioResult,
)
from maze_envs.grid import tenths_table

__all__ = ["Observer"]


_EDGE_KINDS: Final = len(EDGE_KINDS)


class _Games(NamedTuple):
    """The arrays of the games being observed (the state's own, or copies of some games')."""

    positions: NDArray[np.intp]  # (k * n,) each row's cell
    slot_positions: NDArray[np.intp]  # (n, k * n) [j, row]: the cell of agent j of row's game
    turn: NDArray[np.int64]  # (k,)
    exit_row: NDArray[np.intp]  # (k * n,)
    board: NDArray[np.uint8]  # (k * n,) the byte of each row's cell
    landmark: NDArray[np.uint8]  # (k * n,) the landmark of each row's cell
    move_result: NDArray[np.intp]  # (k * n,)
    radio_result: NDArray[np.intp]  # (k * n,)
    ready_turn: NDArray[np.int64]  # (k * n,)
    symbols: NDArray[np.int64]  # (k, n)
    origin: NDArray[np.intp]  # (k * n,)
    used: NDArray[np.uint8]  # (k * n,) the used-edge bits of each row's cell (empty when off)
    trail: NDArray[np.int16]  # (K, k * n) frame codes, oldest first (a view)


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
        self._at = start = layout.start
        self._features = set(start)
        # the edge kind (EdgeKind code) of each direction, by board byte
        byte = np.arange(256)
        self._kinds = np.stack(
            [
                np.where(
                    byte & bit,
                    EdgeKind.OPEN,
                    np.where(byte & FRAME_BITS[d], EdgeKind.OUTER_BRICK, EdgeKind.INTERIOR_WALL),
                ).astype(np.uint8)
                for d, bit in enumerate(OPEN_BITS)
            ]
        )
        self._kind_codes = np.arange(_EDGE_KINDS, dtype=np.uint8)[:, None]
        self._move_codes = np.arange(len(MOVE_RESULTS))[:, None]
        self._radio_codes = np.arange(len(RADIO_RESULTS))[:, None]
        # by turn played; one entry past the last turn, for a game that ended and is stepped
        # once more before it restarts (autoreset NEXT_STEP), whose observation nobody sees
        turns = np.arange(config.max_turns + 1)
        self._turn = np.append(_values(layout, "time", 0, turns), np.float32(0))
        self._turns_left = np.append(_values(layout, "time", 1, turns)[::-1], np.float32(0))
        self._cooldown = _values(layout, "radio_cooldown", 0, np.arange(config.radio_cooldown + 1))
        if "distances" in self._features:
            tenths = np.frombuffer(pair_tenths(config.width, config.height), np.uint16)
            top = int(np.array(tenths_table(max(config.width, config.height))).max())
            self._pair = _values(layout, "distances", 0, np.arange(top + 1)).take(tenths)
        codes = np.arange((2 * rules.span_x + 1) * rules.code_stride)
        xs = codes // rules.code_stride - rules.span_x
        ys = codes % rules.code_stride - rules.span_y
        if "position" in self._features:
            self._position = (
                _values(layout, "position", 0, xs),
                _values(layout, "position", 1, ys),
            )
        k = rules.trail_length
        if k:
            self._trail = (_values(layout, "trail", 0, xs), _values(layout, "trail", 1, ys))
            # trail_mask[j] = value(trail_length, j): 1 from row K - trail_length on
            # trail_mask[j] = value(trail_length, j) is 1 from a trail length on: that length
            lengths = np.arange(k + 1)
            masks = np.stack([_values(layout, "trail_mask", j, lengths) for j in range(k)])
            self._trail_from = np.argmax(masks == 1.0, axis=1)[:, None]  # (K, 1)
            assert np.array_equal(masks, (lengths >= self._trail_from).astype(np.float32))
        if "used_exits" in self._features:
            self._used_bits = np.array(OPEN_BITS, np.uint8)[:, None]
        self._cells = cells
        self._n = n

    def prepare(self, buffer: NDArray[np.float32]) -> NDArray[np.float32]:
        """Make a new ``(width, rows)`` buffer ready: zeros, and the entries no batched game
        changes (the notebook's last result is always ``none``; without radio symbols, so is
        the radio's)."""
        buffer[...] = 0.0
        last = self._at["last_action"]
        buffer[last + len(MOVE_RESULTS) + NotebookResult.NONE] = 1.0
        if not self.rules.symbols:
            radio = last + len(MOVE_RESULTS) + len(NOTEBOOK_RESULTS)
            buffer[radio + RadioResult.NONE] = 1.0
        return buffer

    def write(
        self,
        state: BatchState,
        out: NDArray[np.float32],
        games: NDArray[np.intp] | None = None,
        *,
        one_turn_on: bool = False,
    ) -> None:
        """Write the observations of every game (``games=None``: ``out`` is the whole
        ``(width, G * n)`` buffer) or of ``games`` (``out``: a prepared ``(width, k * n)``
        buffer for their rows, in that order). ``one_turn_on``: ``out`` holds every game's
        observations of the turn before (the step of a vector env), so a trail moves up one
        entry and only its newest is looked up."""
        view = self._games(state, games)
        rules, at, n = self.rules, self._at, self._n
        rows = len(view.positions)
        edges = at["edges"]
        for d in range(len(OPEN_BITS)):  # N, E, S, W: each a one-hot of three kinds
            kind = self._kinds[d].take(view.board)
            row = edges + d * _EDGE_KINDS
            np.equal(kind, self._kind_codes, out=out[row : row + _EDGE_KINDS])
        on_exit = at["on_exit"]
        np.equal(view.positions, view.exit_row, out=out[on_exit + 1])
        np.not_equal(view.positions, view.exit_row, out=out[on_exit])
        landmark = at["landmark"]
        out[landmark : landmark + len(LANDMARK_NAMES) + 1] = 0.0
        _one_hot(out, landmark, view.landmark)
        last = at["last_action"]
        np.equal(view.move_result, self._move_codes, out=out[last : last + len(MOVE_RESULTS)])
        if rules.symbols:
            radio = last + len(MOVE_RESULTS) + len(NOTEBOOK_RESULTS)
            np.equal(view.radio_result, self._radio_codes, out=out[radio : radio + 3])
        time = at["time"]
        out[time] = np.repeat(self._turn.take(view.turn), n)
        out[time + 1] = np.repeat(self._turns_left.take(view.turn), n)
        if rules.symbols:
            cooldown = view.ready_turn - np.repeat(view.turn, n) - 1
            np.maximum(cooldown, 0, out=cooldown)
            self._cooldown.take(cooldown, out=out[at["radio_cooldown"]])
        # slot j of a row: agent j of its game; a teammate there shares the row's cell
        others = rules.others(rows)
        together = view.slot_positions == view.positions
        together &= others
        shown = at["notebook_shown"]
        out[shown : shown + n] = together
        features = self._features
        if "distances" in features:
            pair, cells, distances = self._pair, self._cells, at["distances"]
            pair.take(view.exit_row * cells + view.positions, out=out[distances])
            teammates = view.slot_positions * cells + view.positions
            pair.take(teammates, out=out[distances + 1 : distances + 1 + n])
        if "position" in features:
            code = rules.absolute_code.take(view.positions)
            code -= view.origin
            position = at["position"]
            self._position[0].take(code, out=out[position])
            self._position[1].take(code, out=out[position + 1])
        k = rules.trail_length
        if k:
            trail = at["trail"]
            if one_turn_on and games is None:
                out[trail : trail + 2 * k - 2] = out[trail + 2 : trail + 2 * k]
                newest = view.trail[k - 1]
                self._trail[0].take(newest, out=out[trail + 2 * k - 2])
                self._trail[1].take(newest, out=out[trail + 2 * k - 1])
            else:
                out[trail : trail + 2 * k : 2] = self._trail[0].take(view.trail)
                out[trail + 1 : trail + 2 * k : 2] = self._trail[1].take(view.trail)
            length = np.repeat(np.minimum(view.turn, k), n)
            mask = at["trail_mask"]
            np.greater_equal(length, self._trail_from, out=out[mask : mask + k])
        if "colocated_with" in features:
            colocated = at["colocated_with"]
            out[colocated : colocated + n] = together
        if "used_exits" in features:
            used = at["used_exits"]
            crossed = np.bitwise_and(view.used, self._used_bits)  # (4, rows): N, E, S, W
            np.not_equal(crossed, 0, out=out[used : used + 4])
        if rules.symbols:
            heard = at["radio_symbols"]
            width = rules.symbols + 1
            out[heard : heard + n * width] = 0.0
            sent = np.repeat(view.symbols.T, n, axis=1) * others  # [j, row]; own slot 0
            sent += (np.arange(n) * width)[:, None]
            _one_hot(out, heard, sent)

    def _games(self, state: BatchState, games: NDArray[np.intp] | None) -> _Games:
        rules = self.rules
        n, cells, k = self._n, self._cells, rules.trail_length
        head = state.trail_head
        if games is None:
            count = state.games
            rows: Any = slice(None)
            positions = state.positions.reshape(-1)
            grid_positions = state.positions
            cell_base = rules.row_base(count, per_row=False)
        else:
            count = len(games)
            rows = rules.rows_of(games)
            grid_positions = state.positions[games]
            positions = grid_positions.reshape(-1)
            cell_base = games.repeat(n) * cells
        cell = cell_base + positions
        used = state.used.reshape(-1)
        if rules.used_exits:
            used_base = rules.row_base(count, per_row=True) if games is None else rows * cells
            used = used.take(used_base + positions)
        return _Games(
            positions,
            np.repeat(grid_positions.T, n, axis=1),
            state.turn if games is None else state.turn[games],
            state.exit_row[rows],
            state.board.reshape(-1).take(cell),
            state.landmark.reshape(-1).take(cell),
            state.move_result.reshape(-1)[rows],
            state.radio_result.reshape(-1)[rows],
            state.ready_turn.reshape(-1)[rows],
            state.symbols if games is None else state.symbols[games],
            state.origin.reshape(-1)[rows],
            used,
            state.trail.reshape(len(state.origin.reshape(-1)), -1)[rows, head : head + k].T,
        )


def _one_hot(out: NDArray[np.float32], start: int, codes: NDArray[Any]) -> None:
    """Set ``out[start + code, column]`` to 1 for the codes of each column (rows of ``codes``:
    groups whose codes are already offset to their own rows)."""
    columns = out.shape[1]
    flat = codes.reshape(-1, columns).astype(np.intp)
    flat += start
    flat *= columns
    flat += np.arange(columns)
    out.reshape(-1)[flat.reshape(-1)] = 1.0
