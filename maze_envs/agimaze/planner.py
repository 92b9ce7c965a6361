"""Exact analysis of an AGI Maze labyrinth over the engine's player states.

Every quantity here comes from the engine's own :func:`~maze_envs.agimaze.engine.transition`, so
the planner can never disagree with the rules: a :class:`~maze_envs.agimaze.engine.PlayerState`
holds everything that affects the future (position, inventory, taken grenade packs, blown walls),
and a breadth-first search over those states is an exact shortest-plan search.

* :func:`solve` -- a shortest action list that wins, or ``None`` when no action list wins.
* :func:`optimal_length` -- its length.
* :func:`random_agent_success` -- the exact probability that a uniform random agent (each action
  of the labyrinth's list with equal probability) has won within each of several step budgets,
  computed on the Markov chain of reachable states.

Example:
    >>> from maze_envs.agimaze.types import ExitGap, Labyrinth
    >>> lab = Labyrinth(rows=1, cols=3, open_edges=[[2, 10, 8]],
    ...                 exit=ExitGap(cell=(0, 0), side="left"), start=(0, 0),
    ...                 key=(0, 2), chest=(0, 1))
    >>> solve(lab)
    ['right', 'right', 'left', 'left', 'left']
    >>> optimal_length(lab)
    5
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from maze_envs.agimaze.engine import (
    CompiledLabyrinth,
    PlayerState,
    compile_labyrinth,
    initial_state,
    transition,
)
from maze_envs.agimaze.types import Labyrinth

#: Search bound: far above any shipped labyrinth (a 10x10 board with every item has < 10^4).
DEFAULT_MAX_STATES: Final = 200_000
#: Successor index that stands for "the action won the game" in :class:`StateGraph`.
WIN: Final = -1


class PlanningError(ValueError):
    """The labyrinth's state space is larger than the search bound allows."""


def _compiled(lab: Labyrinth | CompiledLabyrinth) -> CompiledLabyrinth:
    return lab if isinstance(lab, CompiledLabyrinth) else compile_labyrinth(lab)


def _too_many(max_states: int) -> PlanningError:
    return PlanningError(
        f"more than {max_states} reachable player states; raise max_states if this labyrinth "
        "is meant to be this large"
    )


def solve(
    lab: Labyrinth | CompiledLabyrinth, *, max_states: int = DEFAULT_MAX_STATES
) -> list[str] | None:
    """A shortest winning action list for ``lab``, or ``None`` when the labyrinth cannot be won.

    Breadth-first over player states; actions are tried in the labyrinth's action order, so the
    plan returned is always the same one.
    """
    c = _compiled(lab)
    start = initial_state(c)
    parent: dict[PlayerState, tuple[PlayerState, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        for action in c.actions:
            result = transition(c, state, action)
            if result.won:
                plan = [action]
                node = state
                while (link := parent[node]) is not None:
                    node, taken = link
                    plan.append(taken)
                plan.reverse()
                return plan
            nxt = result.state
            if nxt not in parent:
                if len(parent) >= max_states:
                    raise _too_many(max_states)
                parent[nxt] = (state, action)
                queue.append(nxt)
    return None


def optimal_length(
    lab: Labyrinth | CompiledLabyrinth, *, max_states: int = DEFAULT_MAX_STATES
) -> int | None:
    """Number of steps of the shortest win (``None`` when the labyrinth cannot be won)."""
    plan = solve(lab, max_states=max_states)
    return None if plan is None else len(plan)


@dataclass(frozen=True)
class StateGraph:
    """Every player state reachable from the start, with the successor of each action.

    ``successors[i, a]`` is the index of the state that action ``actions[a]`` leads to from
    ``states[i]``, or :data:`WIN` when that action wins. ``states[0]`` is the start.
    """

    actions: tuple[str, ...]
    states: tuple[PlayerState, ...]
    successors: NDArray[np.int64]


def state_graph(
    lab: Labyrinth | CompiledLabyrinth, *, max_states: int = DEFAULT_MAX_STATES
) -> StateGraph:
    """Enumerate the reachable states of ``lab`` (breadth-first from the start)."""
    c = _compiled(lab)
    start = initial_state(c)
    index: dict[PlayerState, int] = {start: 0}
    states = [start]
    rows: list[list[int]] = []
    i = 0
    while i < len(states):
        row: list[int] = []
        for action in c.actions:
            result = transition(c, states[i], action)
            if result.won:
                row.append(WIN)
                continue
            nxt = result.state
            j = index.get(nxt)
            if j is None:
                if len(states) >= max_states:
                    raise _too_many(max_states)
                j = index[nxt] = len(states)
                states.append(nxt)
            row.append(j)
        rows.append(row)
        i += 1
    return StateGraph(c.actions, tuple(states), np.array(rows, dtype=np.int64))


def random_agent_success(
    lab: Labyrinth | CompiledLabyrinth | StateGraph, horizons: Sequence[int]
) -> list[float]:
    """Exact probability that a uniform random agent has won within each budget of ``horizons``.

    The agent picks every action of the labyrinth's list with equal probability at every step
    (the random baseline of the real benchmark); a win ends the episode.
    """
    if not horizons:
        return []
    if any(h < 0 for h in horizons):
        raise ValueError(f"horizons must be >= 0, got {list(horizons)}")
    graph = lab if isinstance(lab, StateGraph) else state_graph(lab)
    n, n_actions = graph.successors.shape
    share = 1.0 / n_actions
    won_from = (graph.successors == WIN).sum(axis=1) * share  # win probability of one step
    # Sparse push of the probability mass: mass[j] += share * mass[i] for each (i, a) -> j.
    src = np.repeat(np.arange(n), n_actions)
    dst = graph.successors.reshape(-1)
    keep = dst != WIN
    src, dst = src[keep], dst[keep]
    mass: NDArray[np.float64] = np.zeros(n)
    mass[0] = 1.0
    won = 0.0
    out: dict[int, float] = {0: 0.0}
    for step in range(1, max(horizons) + 1):
        won += float(mass @ won_from)
        mass = np.bincount(dst, weights=mass[src] * share, minlength=n).astype(np.float64)
        out[step] = won
    return [out[h] for h in horizons]


__all__ = [
    "DEFAULT_MAX_STATES",
    "WIN",
    "PlanningError",
    "StateGraph",
    "optimal_length",
    "random_agent_success",
    "solve",
    "state_graph",
]
