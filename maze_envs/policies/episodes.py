"""Building a policy's episode information from an environment after ``reset``.

* :func:`escape_episode` -- a Maze Escape agent's :class:`~maze_envs.policies.interface.
  EscapeEpisode`: the config (agents are told all the rules), the agent names and, for
  privileged policies only, :func:`escape_ground_truth` (the whole board).
* :func:`agimaze_episode` -- the AGI Maze player's :class:`~maze_envs.policies.interface.
  AgiMazeEpisode`: the rule description, the task info (name, board size, start, budget,
  ``max_steps`` and, where the public API's task info gives them, the counts of keys, rivers,
  pit cycles and whether there is an exit key), the action names and the public map; for
  privileged policies the labyrinth itself.

Both read only public attributes of the environments (``config``, ``layout``, ``ground_truth()``;
``action_names``, ``backend``, ``budget_factor``), so any wrapper exposing ``unwrapped`` works.

Example:
    >>> from maze_envs import maze_escape_v0
    >>> env = maze_escape_v0.parallel_env(width=6, height=6)
    >>> _ = env.reset(seed=3)
    >>> episode = escape_episode(env, "B", privileged=True)
    >>> episode.agent, episode.agents, episode.ground_truth.width
    ('B', ('A', 'B', 'C'), 6)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from maze_envs._registration import entries, latest
from maze_envs.agimaze.mapfmt import PLAYER as PLAYER_GLYPH
from maze_envs.agimaze.mapfmt import read_board, render_map
from maze_envs.agimaze.model_text import API_DESCRIPTION
from maze_envs.agimaze.scoring import step_budget
from maze_envs.agimaze.set_env import SET_DESCRIPTION, START_ACTION
from maze_envs.agimaze.types import Labyrinth
from maze_envs.policies.interface import AgiMazeEpisode, EscapeEpisode, EscapeGroundTruth

#: Maze Escape env ids by the env's metadata name, the name of its entry module (the journal's
#: ids, from the table of environments).
ESCAPE_ENV_IDS: Final[dict[str, str]] = {
    env.module.rpartition(".")[2]: env.id for env in entries("escape")
}
AGIMAZE_ENV_ID: Final = latest("agimaze").id
AGIMAZE_SET_ENV_ID: Final = latest("agimaze", labyrinth_set=True).id
#: The AGI Maze player's agent name.
PLAYER: Final = "player"


def _unwrapped(env: Any) -> Any:
    return getattr(env, "unwrapped", env)


# --- Maze Escape ------------------------------------------------------------------------------


def escape_env_id(env: Any) -> str:
    """The env id of a Maze Escape env (from its ``env_id`` or its metadata name)."""
    base = _unwrapped(env)
    explicit = getattr(base, "env_id", None)
    if isinstance(explicit, str):
        return explicit
    name = getattr(base, "metadata", {}).get("name", "")
    try:
        return ESCAPE_ENV_IDS[name]
    except KeyError:
        raise ValueError(
            f"not a Maze Escape environment (metadata name {name!r}); expected one of "
            f"{sorted(ESCAPE_ENV_IDS)}"
        ) from None


def escape_ground_truth(env: Any) -> EscapeGroundTruth:
    """The full board of the env's current game (for privileged policies only).

    ``walls[row * width + col]`` has bit ``k`` set for a wall in direction ``k`` of N, E, S, W;
    the exit's doorway counts as a wall (it does not lead anywhere a move could go).
    """
    base = _unwrapped(env)
    layout = base.layout  # raises RuntimeError before the first reset
    facts = base.ground_truth()
    width, height = layout.width, layout.height
    open_bits = layout.maze.ravel().tolist()
    agents = tuple(base.possible_agents)
    shortest = facts["shortest_path_to_exit"]
    return EscapeGroundTruth(
        width=width,
        height=height,
        walls=tuple(~int(bits) & 0b1111 for bits in open_bits),
        exit_cell=layout.exit_cell[0] * width + layout.exit_cell[1],
        starts=tuple(r * width + c for r, c in layout.starts),
        landmarks={r * width + c: name for (r, c), name in layout.landmarks},
        shortest_path_to_exit={agent: int(shortest[agent]) for agent in agents},
        fastest_possible_finish=int(facts["fastest_possible_finish"]),
    )


def escape_episode(env: Any, agent: str, *, privileged: bool = False) -> EscapeEpisode:
    """What ``agent`` may know before its first turn of the env's current game."""
    base = _unwrapped(env)
    agents = tuple(base.possible_agents)
    if agent not in agents:
        raise ValueError(f"unknown agent {agent!r}; this game's agents are {list(agents)}")
    return EscapeEpisode(
        env_id=escape_env_id(base),
        agent=agent,
        agents=agents,
        config=base.config,
        ground_truth=escape_ground_truth(base) if privileged else None,
    )


# --- AGI Maze ---------------------------------------------------------------------------------


def _labyrinth_of(base: Any) -> Labyrinth | None:
    """The running labyrinth when the env plays it on the embedded engine."""
    lab = getattr(base, "labyrinth", None)  # AgiMazeSetEnv
    if lab is None:
        lab = getattr(getattr(base, "backend", None), "labyrinth", None)  # AgiMazeEnv, local
    return lab if isinstance(lab, Labyrinth) else None


def labyrinth_task(lab: Labyrinth) -> dict[str, Any]:
    """The task info of a labyrinth as the public API's start reply gives it (plus counts)."""
    return {
        "board": {"rows": lab.rows, "cols": lab.cols},
        "start": [lab.start[0], lab.start[1]],
        "keys": int(lab.key is not None),
        "exit_key": lab.exit_key is not None,
        "rivers": len(lab.rivers),
        "pit_cycles": len(lab.pits),
        "pits_per_cycle": [len(cycle.cells) for cycle in lab.pits],
    }


def _task_from_map(public_map: str | None) -> dict[str, Any]:
    """Board size and start read from the public map (an HTTP backend gives nothing else).

    A public map of a hidden labyrinth has a closed frame (no exit gap), so it is read by its
    geometry (:func:`maze_envs.agimaze.mapfmt.read_board`), not parsed.
    """
    try:
        board = read_board(public_map or "")
    except ValueError:
        return {}
    task: dict[str, Any] = {"board": {"rows": board.rows, "cols": board.cols}}
    for (row, col), glyph in board.glyphs.items():
        if glyph == PLAYER_GLYPH:
            task["start"] = [row, col]
    return task


def agimaze_episode(
    env: Any,
    info: Mapping[str, Any],
    *,
    agent: str = PLAYER,
    privileged: bool = False,
) -> AgiMazeEpisode:
    """The player's episode information, from the env and the ``info`` of its reset.

    For ``AgiMazeSet-v0`` call it after each ``start`` (with that step's ``info``): it then
    describes the labyrinth that just began, and the description is the set's followed by the
    labyrinth rules; while the set waits for ``start`` it describes the set (no task yet).
    ``budget`` is ``floor(budget_factor * max_steps)``, as the env truncates.
    """
    base = _unwrapped(env)
    is_set = hasattr(base, "labyrinth_paths")
    lab = _labyrinth_of(base)
    if privileged and lab is None:
        raise ValueError(
            "a privileged AGI Maze episode needs the labyrinth: play on the embedded engine "
            "(the default LocalBackend), and for the labyrinth set call this after 'start'"
        )
    max_steps = int(info.get("max_steps") or 0)
    factor = float(getattr(base, "budget_factor", 5.0))
    budget = step_budget(factor, max_steps) if max_steps else 0
    if lab is not None:
        open_map = lab.open_map
        public_map: str | None = render_map(lab, reveal=open_map)
        task = labyrinth_task(lab)
        actions = tuple(lab.actions)
    else:
        backend = getattr(base, "backend", None)
        public_map = backend.render() if backend is not None else None
        open_map = bool(getattr(backend, "open_map", False))
        task = _task_from_map(public_map)
        actions = tuple(a for a in base.action_names if a != START_ACTION)
    name = str(info.get("name", ""))
    task = {"name": name, **task, "max_steps": max_steps, "budget": budget}
    if is_set:
        description = f"{SET_DESCRIPTION}\n\n{API_DESCRIPTION}"
        extra: dict[str, Any] = {"index": info.get("index"), "count": info.get("count")}
        if base.labyrinth is None:  # waiting for start: nothing of a labyrinth is known yet
            task, actions, public_map, open_map = (
                {"name": "", "max_steps": 0, "budget": 0},
                (),
                None,
                False,
            )
    else:
        description, extra = API_DESCRIPTION, {}
    return AgiMazeEpisode(
        env_id=AGIMAZE_SET_ENV_ID if is_set else AGIMAZE_ENV_ID,
        agent=agent,
        name=name,
        description=description,
        task=task,
        action_names=(START_ACTION, *actions) if is_set else actions,
        public_map=public_map,
        open_map=open_map,
        max_steps=max_steps,
        budget=budget,
        ground_truth=lab if privileged else None,
        extra=extra,
    )
