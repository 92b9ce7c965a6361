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
from maze_envs.escape.generator import tenths_table
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
        self.others = [tuple((j, config.agents[j]) for j in range(n) if j != i) for i in range(n)]
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
        # The same table flat, and each agent's offset into it: one ``take`` per turn gathers
        # every trail (much cheaper than fancy indexing with two index arrays).
        self._flat_frames = self.frames.reshape(-1, 2)
        self._frame_offsets = (np.arange(n, dtype=np.int64) * self.frames.shape[1])[:, None]
        self.tenths = tenths_table(max(board.width, board.height))
        self._edges: dict[int, NDArray[np.int64]] = {}
        self._positions: list[dict[int, NDArray[np.int64]]] = [{} for _ in range(n)]
        self._colocated: dict[tuple[bool, ...], NDArray[np.int8]] = {}

    def _position_of(self, agent: int, cell: int) -> NDArray[np.int64]:
        cache = self._positions[agent]
        position = cache.get(cell)
        if position is None:
            position = cache[cell] = _frozen(self.frames[agent, cell], np.int64)
        return position

    def observe_all(self, state: State) -> list[dict[str, Any]]:
        """Observation dicts of every agent, in agent order."""
        board, config = self.board, self.config
        positions, notebooks, outbox = state.positions, state.notebooks, state.radio_outbox
        exit_cell, landmark, exit_tenths, xy = (
            board.exit_cell,
            board.landmark,
            board.exit_tenths,
            board.xy,
        )
        turn, turns_left = state.turn, config.max_turns - state.turn
        sensor, frame, meeting, used_exits = (
            config.distance_sensor,
            config.coordinates is not None,
            config.meeting_alert,
            config.used_exits,
        )
        trail_on = config.trail_length > 0
        if trail_on:
            trails = self._flat_frames.take(state.trail + self._frame_offsets, axis=0)
            trail_length = min(turn, config.trail_length)
        if sensor:  # one fresh (agents, agents) array; each agent gets its own row
            tenths = self.tenths
            rows = []
            for i, here in enumerate(positions):
                x, y = xy[here]
                row = [exit_tenths[here]]
                for j, _ in self.others[i]:
                    ox, oy = xy[positions[j]]
                    row.append(tenths[abs(ox - x)][abs(oy - y)])
                rows.append(row)
            distances = np.array(rows, dtype=np.int64)
        edges_cache, colocated_cache, position_caches = (
            self._edges,
            self._colocated,
            self._positions,
        )
        reasons_notebook, reasons_radio, ready_turns = (
            state.notebook_reason,
            state.radio_reason,
            state.radio_ready_turn,
        )
        move_result, notebook_result, radio_result = (
            state.move_result,
            state.notebook_result,
            state.radio_result,
        )
        result = []
        for i, here in enumerate(positions):
            radio = {}
            seen = {}
            together = []
            for j, name in self.others[i]:
                radio[name] = outbox[j]
                if positions[j] == here:
                    seen[name] = {"shown": 1, "text": notebooks[j]}
                    together.append(True)
                else:
                    seen[name] = {"shown": 0, "text": ""}
                    together.append(False)
            ready = ready_turns[i] - turn - 1
            edges = edges_cache.get(here)
            if edges is None:
                edges = edges_cache[here] = _frozen(board.edge_kinds[here], np.int64)
            obs: dict[str, Any] = {
                "edges": edges,
                "on_exit": int(here == exit_cell),
                "landmark": landmark[here],
                "turn": turn,
                "turns_left": turns_left,
                "notebook": notebooks[i],
                "radio": radio,
                "teammate_notebooks": seen,
                "last_action": {
                    "move": move_result[i],
                    "notebook": notebook_result[i],
                    "notebook_reason": reasons_notebook[i],
                    "radio": radio_result[i],
                    "radio_reason": reasons_radio[i],
                    "radio_cooldown": ready if ready > 0 else 0,
                },
            }
            if sensor:
                obs["distances"] = distances[i]
            if frame:
                position = position_caches[i].get(here)
                if position is None:
                    position = self._position_of(i, here)
                obs["position"] = position
            if trail_on:
                obs["trail"] = trails[i]
                obs["trail_length"] = trail_length
            if meeting:
                key = tuple(together)
                flags = colocated_cache.get(key)
                if flags is None:
                    flags = colocated_cache[key] = _frozen(key, np.int8)
                obs["colocated_with"] = flags
            if used_exits:
                obs["used_exits"] = _EDGE_FLAGS[state.used_exits[i][here]]
            result.append(obs)
        return result

    def frame_of(self, agent: int) -> NDArray[np.int64]:
        """Agent ``agent``'s coordinates of every cell (flat index), for analysis and tests."""
        return self.frames[agent, :-1].copy()
