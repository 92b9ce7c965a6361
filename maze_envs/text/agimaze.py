"""AGI Maze labyrinths and observations as the text a model reads.

* :func:`agimaze_description`: the single-labyrinth description of the EnvTraverse evaluation,
  built only from what AGI Maze publishes: the rules text, the task information (board size,
  start, rivers, pit cycles, exit key, step budget), the public map, the available actions and the
  coordinate convention. It is fixed for a labyrinth, so a prompt puts it first.
* :func:`render_agimaze`: one step's observation: the narration, the formal status and events,
  the inventory, the step count, the open map when there is one, and, in the labyrinth-set
  environment, its transition message and whether it waits for ``start``.

The sentences come from the versioned wording file (:mod:`maze_envs.text.wording`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from maze_envs.text.wording import Wording, load_wording


class AgiMazeEpisodeLike(Protocol):
    """What the description needs (:class:`maze_envs.policies.interface.AgiMazeEpisode` has it)."""

    @property
    def description(self) -> str: ...
    @property
    def task(self) -> Mapping[str, Any]: ...
    @property
    def action_names(self) -> Sequence[str]: ...
    @property
    def public_map(self) -> str | None: ...
    @property
    def max_steps(self) -> int: ...
    @property
    def budget(self) -> int: ...


class AgiMazeObservationLike(Protocol):
    """What a step's text needs (:class:`maze_envs.agimaze.observation.AgiMazeObservation`)."""

    @property
    def text(self) -> str: ...
    @property
    def formal(self) -> Mapping[str, Any]: ...
    @property
    def inventory(self) -> Mapping[str, Any]: ...
    @property
    def map(self) -> str | None: ...
    @property
    def step(self) -> int: ...
    @property
    def budget(self) -> int: ...
    @property
    def last_action(self) -> str | None: ...
    @property
    def error(self) -> Mapping[str, Any] | None: ...


#: Task keys the description states in its own sentences (never repeated as "key: value").
_TASK_KEYS_STATED = frozenset(
    {
        "board",
        "rows",
        "cols",
        "n",
        "m",
        "start",
        "start_row",
        "start_col",
        "rivers",
        "pit_cycles",
        "pits_per_cycle",
        "pits",
        "keys",
        "exit_key",
        "max_steps",
        "budget",
        "name",
        "path",
        "open_map",
        "actions",
    }
)


def _board(task: Mapping[str, Any]) -> tuple[Any, Any] | None:
    board = task.get("board")
    if isinstance(board, Mapping):
        return board.get("n", board.get("rows")), board.get("m", board.get("cols"))
    if isinstance(board, Sequence) and not isinstance(board, str) and len(board) == 2:
        return board[0], board[1]
    if "rows" in task and "cols" in task:
        return task["rows"], task["cols"]
    if "n" in task and "m" in task:
        return task["n"], task["m"]
    return None


def _start(task: Mapping[str, Any]) -> tuple[Any, Any] | None:
    start = task.get("start")
    if isinstance(start, Mapping):
        return start.get("row"), start.get("col")
    if isinstance(start, Sequence) and not isinstance(start, str) and len(start) == 2:
        return start[0], start[1]
    if "start_row" in task and "start_col" in task:
        return task["start_row"], task["start_col"]
    return None


def _pits(w: Wording, task: Mapping[str, Any]) -> str:
    sizes = task.get("pits_per_cycle")
    if isinstance(sizes, Sequence) and not isinstance(sizes, str) and sizes:
        return "; ".join(
            w.text("description", "pits_item").format(count=1, size=s) for s in sizes
        ).replace("1 of ", "")
    cycles = task.get("pit_cycles", task.get("pits", 0))
    return str(cycles) if cycles else w.text("description", "pits_none")


def action_list(names: Sequence[str]) -> str:
    """``{"id": "up"}, {"id": "down"}, ...``: actions as the JSON objects agents send."""
    return ", ".join(json.dumps({"id": name}) for name in names)


def agimaze_description(episode: AgiMazeEpisodeLike, *, wording: str | None = None) -> str:
    """The description of one labyrinth: rules, task info, public map, actions, coordinates."""
    w = load_wording("agimaze", wording)
    d = w.sections["description"]
    task = episode.task
    lines = [d["intro"], "", d["rules"], episode.description.strip(), "", d["task"]]
    lines.append(
        d["counts"].format(
            rivers=task.get("rivers", 0),
            pits=_pits(w, task),
            exit_key=d["yes"] if task.get("exit_key") else d["no"],
        )
    )
    board = _board(task)
    if board is not None:
        lines.append(d["board"].format(rows=board[0], cols=board[1]))
    start = _start(task)
    if start is not None:
        lines.append(d["start"].format(row=start[0], col=start[1]))
    lines.append(d["steps"].format(max_steps=episode.max_steps, budget=episode.budget))
    for key, value in task.items():
        if key not in _TASK_KEYS_STATED:
            lines.append(d["other"].format(key=key, value=value))
    lines.append("")
    if episode.public_map:
        lines += [d["map"], episode.public_map.rstrip("\n")]
    else:
        lines.append(d["map_hidden"])
    lines += [
        "",
        d["actions"].format(actions=action_list(episode.action_names)),
        d["coordinates"],
        d["closing"],
    ]
    return "\n".join(lines)


def _inventory(w: Wording, inventory: Mapping[str, Any]) -> str:
    items = []
    for name, value in inventory.items():
        if isinstance(value, bool) or (value in (0, 1) and name != "grenades"):
            if value:
                items.append(name.replace("_", " "))
        elif value:
            items.append(f"{name.replace('_', ' ')} x{value}")
    o = w.sections["observation"]
    return o["inventory"].format(items=", ".join(items)) if items else o["inventory_empty"]


def render_agimaze(
    observation: AgiMazeObservationLike,
    episode: AgiMazeEpisodeLike | None = None,
    *,
    wording: str | None = None,
) -> str:
    """One step's observation as text (the episode is only needed for the start actions)."""
    w = load_wording("agimaze", wording)
    o = w.sections["observation"]
    lines: list[str] = []
    message = getattr(observation, "message", None)
    waiting = bool(getattr(observation, "waiting", False))
    if message:
        lines.append(o["message"].format(message=message))
    if waiting:
        lines.append(o["waiting"].format(actions=action_list(["start"])))
        return "\n".join(lines)
    budget = observation.budget
    lines.append(
        o["step"].format(step=observation.step, budget=budget)
        if budget
        else o["step_no_budget"].format(step=observation.step)
    )
    if observation.last_action:
        lines.append(o["last_action"].format(action=observation.last_action))
    if observation.error:
        error = observation.error
        what = error.get("detail") or error.get("error") or json.dumps(dict(error))
        if "allowed" in error:
            what = f"{what}; allowed: {', '.join(error['allowed'])}"
        lines.append(o["error"].format(error=what))
    if observation.text:
        lines.append(o["result"].format(text=observation.text))
    formal = observation.formal
    if formal:
        lines.append(
            o["status"].format(status=formal.get("status", "?"), observe=formal.get("observe", "?"))
        )
        events = formal.get("events") or []
        if events:
            lines.append(o["events"].format(events=", ".join(events)))
        details = formal.get("details")
        if details:
            lines.append(o["details"].format(details=json.dumps(details, sort_keys=True)))
    lines.append(_inventory(w, observation.inventory))
    if observation.map:
        lines += [o["map"], observation.map.rstrip("\n")]
    return "\n".join(lines)
