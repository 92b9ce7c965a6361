"""AGI Maze games read back: the recorded steps replayed on the engine (``AgiMaze-v0`` and
``AgiMazeSet-v0``).

What was said and held comes from the journal rows as recorded (narration, set messages, the
formal observation, inventory, steps, errors); where the player stood comes from replaying the
recorded actions on the embedded engine (the journal does not store positions: the player never
sees them on a hidden labyrinth). The viewer draws the steps; the analysis measures them.

Each step also says whether the player's state could still win (``dead``: no action sequence
wins from it, by :func:`~maze_envs.agimaze.planner.dead_states`), and :func:`lost_steps` lists
where a player entered a dead state: from that step on the labyrinth was unwinnable, which tells
an unwinnable episode from a slow one (the viewer marks it, ``maze-envs analyze`` reports "lost
at step N").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from maze_envs.agimaze.compiled import PlayerState
from maze_envs.agimaze.engine import compile_labyrinth
from maze_envs.agimaze.env import AgiMazeEnv, LocalBackend
from maze_envs.agimaze.observation import AgiMazeObservation
from maze_envs.agimaze.planner import DeadStates, PlanningError, dead_states
from maze_envs.agimaze.recording import PLAYER, SET_ENV_ID
from maze_envs.agimaze.replay import env_from_config, set_env_from_config
from maze_envs.agimaze.set_env import AgiMazeSetEnv
from maze_envs.agimaze.types import Labyrinth
from maze_envs.journal import GameInfo, JournalError, TurnRecord
from maze_envs.metrics import Step, agimaze_step


def rebuild_env(info: GameInfo) -> AgiMazeEnv | AgiMazeSetEnv:
    """The environment of a journaled AGI Maze game, built from its stored config (local engine)."""
    try:
        if info.env_id == SET_ENV_ID:
            return set_env_from_config(info.config)
        return env_from_config(info.config)
    except (ValueError, TypeError, KeyError, OSError) as exc:
        raise JournalError(f"game {info.id}: cannot rebuild its labyrinth: {exc}") from None


class _Walls:
    """Wall id -> the two cells it separates, per labyrinth (compiled once per labyrinth)."""

    def __init__(self) -> None:
        self._tables: dict[int, tuple[Labyrinth, dict[int, list[int]]]] = {}

    def blown(self, labyrinth: Labyrinth, state: PlayerState) -> list[list[int]]:
        """The walls a grenade opened, as [row, col, row, col] cell pairs."""
        if not state.blown:
            return []
        entry = self._tables.get(id(labyrinth))
        if entry is None or entry[0] is not labyrinth:
            table: dict[int, list[int]] = {}
            for (cell, _), (eid, neighbour) in compile_labyrinth(labyrinth).walls.items():
                a, b = sorted((cell, neighbour))
                table[eid] = [*a, *b]
            entry = self._tables[id(labyrinth)] = (labyrinth, table)
        return sorted(entry[1][eid] for eid in state.blown if eid in entry[1])

    def fields(self, labyrinth: Labyrinth | None, state: PlayerState | None) -> dict[str, Any]:
        """Where the player stands, what it took from the board, and the walls it blew up."""
        if labyrinth is None or state is None:
            return {"pos": None, "held": None, "blown": []}
        held = [state.key, state.treasure, state.exit_key, state.boat, state.flashlight]
        return {
            "pos": list(state.pos),
            "held": [*map(int, held), state.packs_taken],
            "blown": self.blown(labyrinth, state),
        }


class _Liveness:
    """Whether a player state can still win, per labyrinth (analysed once per labyrinth)."""

    def __init__(self) -> None:
        self._tables: dict[int, tuple[Labyrinth, DeadStates | None]] = {}

    def dead(self, labyrinth: Labyrinth | None, state: PlayerState | None) -> bool | None:
        """True when no action sequence wins from ``state``; None when unknown or not playing."""
        if labyrinth is None or state is None:
            return None
        if state.won:
            return False
        entry = self._tables.get(id(labyrinth))
        if entry is None or entry[0] is not labyrinth:
            try:
                analysis: DeadStates | None = dead_states(labyrinth)
            except PlanningError:  # too large to enumerate: say nothing rather than guess
                analysis = None
            entry = self._tables[id(labyrinth)] = (labyrinth, analysis)
        analysis = entry[1]
        if analysis is None:
            return None
        try:
            return not analysis.is_live(state)
        except KeyError:  # not reachable from the start: cannot come from a replayed game
            return None


def lost_steps(steps: list[dict[str, Any]], labyrinths: list[Any]) -> list[dict[str, Any]]:
    """Where the player entered a dead state: per labyrinth, the first such step.

    ``steps`` and ``labyrinths`` are what :func:`replay_steps` returns. Each entry: ``lab``
    (index), ``name``, ``turn`` (the journal turn) and ``step`` (that labyrinth's step count
    after the move, i.e. the 1-based number of the move that lost it).
    """
    out: list[dict[str, Any]] = []
    done: set[int] = set()
    for turn, step in enumerate(steps):
        lab = step["lab"]
        if step.get("dead") and lab >= 0 and lab not in done:
            done.add(lab)
            name = labyrinths[lab]["name"] if labyrinths[lab] is not None else ""
            out.append({"lab": lab, "name": name, "turn": turn, "step": step["steps"]})
    return out


def _recorded(record: TurnRecord, replayed: AgiMazeObservation) -> dict[str, Any]:
    """The step as the journal recorded it (the replay fills what a row does not hold)."""
    obs = record.observations.get(PLAYER)
    obs = obs if isinstance(obs, Mapping) else {}
    events = record.events.get(PLAYER)
    events = events if isinstance(events, Mapping) else {}

    def pick(row: Mapping[str, Any], key: str, fallback: Any) -> Any:
        value = row.get(key)
        return fallback if value is None else value

    text = pick(obs, "text", replayed.text)
    return {
        "text": text if isinstance(text, str) else replayed.text,
        "message": pick(obs, "message", replayed.message),
        "formal": pick(events, "formal", replayed.formal),
        "inventory": pick(events, "inventory", replayed.inventory),
        "steps": pick(events, "steps", replayed.step),
        "solved": events.get("solved"),
        "error": pick(events, "error", replayed.error),
    }


def _action_name(record: TurnRecord, names: list[str]) -> str:
    events = record.events.get(PLAYER)
    if isinstance(events, Mapping) and isinstance(events.get("action"), str):
        return str(events["action"])
    action = record.actions.get(PLAYER)
    if isinstance(action, str):
        return action
    if isinstance(action, int) and not isinstance(action, bool) and 0 <= action < len(names):
        return names[action]
    raise JournalError(f"turn {record.turn}: the action {action!r} names no action of the game")


def replay_steps(info: GameInfo, turns: list[TurnRecord]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Per step: what was recorded and where the player stood; and the labyrinths played."""
    env = rebuild_env(info)
    names = env.action_names
    is_set = isinstance(env, AgiMazeSetEnv)
    labyrinths: list[Any] = [None] * (
        len(env.labyrinth_paths) if isinstance(env, AgiMazeSetEnv) else 1
    )
    before, was_waiting = 0, True
    walls = _Walls()
    liveness = _Liveness()
    steps: list[dict[str, Any]] = []
    obs, step_info = env.reset(seed=info.seed)
    for record in turns:
        if record.turn == 0:
            name = None
            reward = 0.0
        else:
            name = _action_name(record, names)
            before, was_waiting = int(obs.get("labyrinth", 0)), bool(obs.get("waiting", 0))
            obs, reward, _, _, step_info = env.step_name(name)
        if is_set:
            assert isinstance(env, AgiMazeSetEnv)
            index = int(obs["labyrinth"])
            if record.turn > 0 and not was_waiting:
                index = before  # the step was played in the labyrinth that was running
            labyrinth, state = env.labyrinth_state(index)
            if bool(obs["waiting"]) and (record.turn == 0 or was_waiting):
                state = None  # waiting for ``start``: nobody on a board yet
            title = env.labyrinth_paths[index]
        else:
            assert isinstance(env, AgiMazeEnv)
            index = 0
            backend = env.backend
            if not isinstance(backend, LocalBackend):
                raise JournalError(f"game {info.id}: the viewer replays on the embedded engine")
            labyrinth, state = backend.labyrinth, backend.state
            title = step_info.get("name")
        if labyrinth is not None and labyrinths[index] is None:
            labyrinths[index] = {
                "name": title or "labyrinth object",
                **labyrinth.model_dump(mode="json"),
            }
        replayed = AgiMazeObservation.from_env(obs, step_info, last_action=name, env=env)
        steps.append(
            {
                "lab": index if state is not None or not is_set else -1,
                "waiting": replayed.waiting,
                "action": name,
                "reward": reward,
                "max_steps": replayed.max_steps,
                "budget": replayed.budget,
                **_recorded(record, replayed),
                **walls.fields(labyrinth, state),
                "dead": liveness.dead(labyrinth, state),
            }
        )
    env.close()
    return steps, labyrinths


def not_played(before: Mapping[str, Any], step: Mapping[str, Any], is_set: bool) -> bool:
    """Whether a replayed step's action was not played: the labyrinth did not offer it (an
    ``error`` was recorded), or a labyrinth set ignored it (a move while it waits, ``start``
    while a labyrinth runs)."""
    if step.get("error"):
        return True
    return is_set and (step["action"] == "start") != bool(before["waiting"])


def decision_steps(
    steps: list[dict[str, Any]], turns: list[TurnRecord], info: GameInfo
) -> list[Step]:
    """The player's decisions (steps 1 to the last of :func:`replay_steps`) as the metrics count
    them (:func:`maze_envs.metrics.agimaze_step`)."""
    is_set = info.env_id == SET_ENV_ID
    return [
        agimaze_step(
            steps[k]["action"],
            (steps[k].get("formal") or {}).get("events") or [],
            not not_played(steps[k - 1], steps[k], is_set),
            turns[k].decisions.get(PLAYER),
        )
        for k in range(1, len(steps))
    ]


__all__ = [
    "SET_ENV_ID",
    "decision_steps",
    "lost_steps",
    "not_played",
    "rebuild_env",
    "replay_steps",
]
