"""What one agent sees: the observation dict, built straight from the state.

Always present:

* ``edges``: kinds of the N, E, S, W edges of the agent's cell, 0 ``open``, 1 ``interior_wall``,
  2 ``outer_brick``. The exit doorway reads ``open``.
* ``on_exit`` (0/1), ``landmark`` (0 none, else 1 + index into ``LANDMARK_NAMES``), ``turn``,
  ``turns_left``, the agent's own ``notebook``.
* ``radio``: teammate -> the message it sent last turn (``""`` when it sent none).
* ``teammate_notebooks``: teammate -> ``{"shown": 1, "text": notebook}`` for teammates on the
  agent's cell, ``{"shown": 0, "text": ""}`` for the others.
* ``last_action``: results of the previous action (indices into ``MOVE_RESULTS``,
  ``NOTEBOOK_RESULTS``, ``RADIO_RESULTS``), the reasons for a rejection, refusal or line drop, and
  ``radio_cooldown``, the turns left before the radio may send again.

Optional, one switch each (``Config``):

* ``distances`` (``distance_sensor``): straight-line distance between cell centres ignoring walls,
  in whole tenths of a cell: ``[exit, teammates in name order]``.
* ``position`` (``coordinates``): ``[x, y]`` in the frame ``own``, ``shared`` or ``absolute``.
* ``trail`` and ``trail_length`` (``trail_length > 0``): the cells where the agent ended each of the
  last K turns, oldest first, in the same frame. The *last* row is last turn's cell; it never holds
  the current turn (after a bump it equals the current cell, because the agent stayed there). Only
  the last ``trail_length`` rows are real; earlier rows are zero padding.
* ``colocated_with`` (``meeting_alert``): 1 for each teammate (name order) on the agent's cell.
* ``used_exits`` (``used_exits``): 1 for each edge of the current cell (N, E, S, W) that this agent
  has crossed in either direction, leaving or entering the cell.

Array fields are fresh or read-only: small fields that take few values (``edges``, ``position``,
``colocated_with``, ``used_exits``) are immutable cached arrays, so copy one before changing it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from maze_envs.escape.engine import Board
from maze_envs.escape.generator import straight_line_tenths
from maze_envs.escape.types import Config, State


def _frozen(values: Any, dtype: Any) -> NDArray[Any]:
    """A read-only array: safe to hand to every agent, since nobody can change it."""
    array = np.array(values, dtype=dtype)
    array.flags.writeable = False
    return array


#: used-edge bit mask (0..15) -> read-only flags N, E, S, W.
_EDGE_FLAGS = tuple(_frozen([(m >> k) & 1 for k in range(4)], np.int8) for m in range(16))


class Observer:
    """Builds the observations of one game; frames and lookup tables are fixed at construction.

    Small array fields that take few values (edges, position, meeting alert, used exits) are
    read-only arrays cached by value; the trail of all agents is one fresh array per turn. So
    nothing handed out can change the state, and no field can change under an agent's feet.
    """

    def __init__(self, board: Board, config: Config) -> None:
        self.board = board
        self.config = config
        n = config.num_agents
        self.names = config.agents
        self.others = [tuple(j for j in range(n) if j != i) for i in range(n)]
        self.rows = np.arange(n)[:, None]
        xy = np.array(board.xy, dtype=np.int64)
        if config.coordinates == "own":
            origins = xy[list(board.starts)]
        elif config.coordinates == "shared":
            origins = np.repeat(xy[board.starts[0]][None, :], n, axis=0)
        else:
            origins = np.zeros((n, 2), dtype=np.int64)
        # frames[i, cell] = agent i's coordinates of cell; one extra zero row pads the trail.
        frames = xy[None, :, :] - origins[:, None, :]
        self.frames = np.concatenate([frames, np.zeros((n, 1, 2), dtype=np.int64)], axis=1)
        self.frames.flags.writeable = False
        span = max(board.width, board.height)
        self.tenths = [[straight_line_tenths(dx, dy) for dy in range(span)] for dx in range(span)]
        self._edges: dict[int, NDArray[np.int64]] = {}
        self._positions: list[dict[int, NDArray[np.int64]]] = [{} for _ in range(n)]
        self._colocated: dict[tuple[bool, ...], NDArray[np.int8]] = {}

    def _edges_of(self, cell: int) -> NDArray[np.int64]:
        edges = self._edges.get(cell)
        if edges is None:
            edges = self._edges[cell] = _frozen(self.board.edge_kinds[cell], np.int64)
        return edges

    def _position_of(self, agent: int, cell: int) -> NDArray[np.int64]:
        cache = self._positions[agent]
        position = cache.get(cell)
        if position is None:
            position = cache[cell] = _frozen(self.frames[agent, cell], np.int64)
        return position

    def _colocated_of(self, key: tuple[bool, ...]) -> NDArray[np.int8]:
        flags = self._colocated.get(key)
        if flags is None:
            flags = self._colocated[key] = _frozen(key, np.int8)
        return flags

    def observe_all(self, state: State) -> list[dict[str, Any]]:
        """Observation dicts of every agent, in agent order."""
        board, config = self.board, self.config
        names, positions, notebooks = self.names, state.positions, state.notebooks
        exit_cell, landmark, exit_tenths, xy = (
            board.exit_cell,
            board.landmark,
            board.exit_tenths,
            board.xy,
        )
        turn, turns_left = state.turn, config.max_turns - state.turn
        outbox = state.radio_outbox
        sensor, frame, meeting, used_exits = (
            config.distance_sensor,
            config.coordinates is not None,
            config.meeting_alert,
            config.used_exits,
        )
        trail_on = config.trail_length > 0
        if trail_on:
            trails = self.frames[self.rows, state.trail]
            trail_length = min(turn, config.trail_length)
        tenths, edges_of, colocated_of = self.tenths, self._edges_of, self._colocated_of
        result = []
        for i, here in enumerate(positions):
            radio = {}
            seen = {}
            together = []
            if sensor:
                x, y = xy[here]
                row = [exit_tenths[here]]
            for j in self.others[i]:
                name = names[j]
                radio[name] = outbox[j]
                there = positions[j]
                if there == here:
                    seen[name] = {"shown": 1, "text": notebooks[j]}
                    together.append(True)
                else:
                    seen[name] = {"shown": 0, "text": ""}
                    together.append(False)
                if sensor:
                    ox, oy = xy[there]
                    row.append(tenths[abs(ox - x)][abs(oy - y)])
            ready = state.radio_ready_turn[i] - turn - 1
            obs: dict[str, Any] = {
                "edges": edges_of(here),
                "on_exit": int(here == exit_cell),
                "landmark": landmark[here],
                "turn": turn,
                "turns_left": turns_left,
                "notebook": notebooks[i],
                "radio": radio,
                "teammate_notebooks": seen,
                "last_action": {
                    "move": state.move_result[i],
                    "notebook": state.notebook_result[i],
                    "notebook_reason": state.notebook_reason[i],
                    "radio": state.radio_result[i],
                    "radio_reason": state.radio_reason[i],
                    "radio_cooldown": ready if ready > 0 else 0,
                },
            }
            if sensor:
                obs["distances"] = np.array(row, dtype=np.int64)
            if frame:
                obs["position"] = self._position_of(i, here)
            if trail_on:
                obs["trail"] = trails[i]
                obs["trail_length"] = trail_length
            if meeting:
                obs["colocated_with"] = colocated_of(tuple(together))
            if used_exits:
                obs["used_exits"] = _EDGE_FLAGS[state.used_exits[i][here]]
            result.append(obs)
        return result

    def frame_of(self, agent: int) -> NDArray[np.int64]:
        """Agent ``agent``'s coordinates of every cell (flat index), for analysis and tests."""
        return self.frames[agent, :-1].copy()
