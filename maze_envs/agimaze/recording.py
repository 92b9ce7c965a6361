"""What journaled AGI Maze episodes hold: config, per-step events, state digests, outcomes.

``AgiMaze-v0`` and ``AgiMazeSet-v0`` given ``journal=`` record every episode through a
:class:`~maze_envs.journal.recorder.Recorder` (one journal game per ``reset``), in the format
every journal shares (see :mod:`maze_envs.journal`), with one agent, ``"player"``:

* ``observations``: ``{"player": <the observation dict as delivered>}``;
* ``actions``: ``{"player": <the action as received>}`` (an index of ``Discrete(n)``);
* ``events``: ``{"player": {"action": <name>, "text": <narration>, "formal": <the full formal
  dict, details included>, "inventory": <held items>, "steps": n, "solved": bool,
  "error": <the bad_action body or null>}}`` (turn 0: ``"action": null`` and the bundle
  ``"name"``). The labyrinth set records ``action``, ``message``, ``text``, ``events`` (the
  formal events), ``inventory``, ``index``, ``waiting``, and for a played action the
  labyrinth's ``name``, ``steps`` and ``solved``;
* the state digest: SHA-256 of a canonical JSON of everything that affects later steps (the
  bundle played, steps used, budget, whether the episode is over or solved, and the engine
  state: position, inventory, grenade packs taken, walls blown, won);
* the game ``config``: what rebuilds the environment (pack path or labyrinth JSON, budget
  factor, ``max_steps``, pack root, and the shipped pack version the paths name: see
  :func:`config_pack_version`), and its ``seed`` (``reset(seed=None)`` draws one first, so
  every episode has a seed that reproduces it).

:mod:`maze_envs.agimaze.replay` rebuilds and replays such games for ``maze-envs verify``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from maze_envs._registration import latest
from maze_envs.agimaze.compiled import PlayerState
from maze_envs.agimaze.observation import decode_inventory
from maze_envs.agimaze.packs import DEFAULT_PACK_VERSION
from maze_envs.agimaze.types import Bundle, Labyrinth
from maze_envs.journal.format import encode_json_bytes
from maze_envs.journal.recorder import Recorder

#: The pack version of journal games recorded before configs named their pack version.
LEGACY_PACK_VERSION: Final = "agimaze-packs-2"
#: Journal env ids of the two environments (from the table of environments).
ENV_ID: Final = latest("agimaze").id
SET_ENV_ID: Final = latest("agimaze", labyrinth_set=True).id
#: The one agent of an AGI Maze game in the journal.
PLAYER: Final = "player"


def episode_seed(rng: np.random.Generator | None) -> int:
    """The seed of an episode reset without one: drawn from the env's generator (or entropy)."""
    if rng is not None:
        return int(rng.integers(2**63))
    return int(np.random.SeedSequence().generate_state(2, np.uint64)[0] >> np.uint64(1))


def labyrinth_json(labyrinth: Labyrinth | Bundle) -> dict[str, Any]:
    """A labyrinth object as config data: ``{"bundle" | "labyrinth": <its JSON>}``."""
    kind = "bundle" if isinstance(labyrinth, Bundle) else "labyrinth"
    return {kind: labyrinth.model_dump(mode="json")}


def labyrinth_from_json(value: Mapping[str, Any]) -> Labyrinth | Bundle:
    """The labyrinth object of :func:`labyrinth_json`."""
    if "bundle" in value:
        return Bundle.model_validate(value["bundle"])
    return Labyrinth.model_validate(value["labyrinth"])


def played_pack_version(
    paths: bool, pack_root: str | Path | None, pack_version: str | None
) -> str | None:
    """The shipped pack version a game's pack paths name (None: labyrinth objects, own root)."""
    if not paths or pack_root is not None:
        return None
    return pack_version or DEFAULT_PACK_VERSION


def config_pack_version(config: Mapping[str, Any]) -> str | None:
    """The pack version a journal config played; configs written before pack versions were
    recorded (no ``pack_version`` key) played :data:`LEGACY_PACK_VERSION` by path."""
    if "pack_version" in config:
        version = config["pack_version"]
        return None if version is None else str(version)
    by_path = config.get("labyrinth") is None and config.get("labyrinths") is None
    return LEGACY_PACK_VERSION if by_path and config.get("pack_root") is None else None


def env_config(
    *,
    path: str | None,
    labyrinth: Labyrinth | Bundle | None,
    budget_factor: float,
    max_steps: int | None,
    pack_root: str | Path | None,
    pack_version: str | None = None,
) -> dict[str, Any]:
    """The journal config of an ``AgiMaze-v0`` environment (its constructor's arguments).

    ``pack_version`` is recorded resolved (the default version by name), so a game replays on
    the packs it was played on after the default moves on.
    """
    return {
        "path": path,
        "labyrinth": None if labyrinth is None else labyrinth_json(labyrinth),
        "budget_factor": budget_factor,
        "max_steps": max_steps,
        "pack_root": None if pack_root is None else str(pack_root),
        "pack_version": played_pack_version(path is not None, pack_root, pack_version),
    }


def set_config(
    *,
    paths: Sequence[str] | None,
    target: str,
    labyrinths: Sequence[Labyrinth | Bundle] | None,
    budget_factor: float,
    pack_root: str | Path | None,
    pack_version: str | None = None,
) -> dict[str, Any]:
    """The journal config of an ``AgiMazeSet-v0`` environment (its constructor's arguments)."""
    return {
        "paths": None if paths is None else list(paths),
        "target": target,
        "labyrinths": None if labyrinths is None else [labyrinth_json(x) for x in labyrinths],
        "budget_factor": budget_factor,
        "pack_root": None if pack_root is None else str(pack_root),
        "pack_version": played_pack_version(labyrinths is None, pack_root, pack_version),
    }


def state_digest(
    *,
    name: str,
    steps: int,
    limit: int,
    max_steps: int,
    over: bool,
    solved: bool,
    state: PlayerState | None,
) -> bytes:
    """SHA-256 of a canonical JSON of an episode's state (see the module docstring)."""
    engine = (
        None
        if state is None
        else [
            list(state.pos),
            state.key,
            state.treasure,
            state.exit_key,
            state.boat,
            state.flashlight,
            state.grenades,
            state.packs_taken,
            sorted(state.blown),
            state.won,
        ]
    )
    canonical = encode_json_bytes([name, steps, limit, max_steps, over, solved, engine])
    return hashlib.sha256(canonical).digest()


def start_event(name: str, text: str, formal: Mapping[str, Any]) -> dict[str, Any]:
    """The ``events`` entry of turn 0 (the reset)."""
    return {
        "action": None,
        "name": name,
        "text": text,
        "formal": formal,
        "inventory": formal.get("inventory", {}),
        "steps": 0,
        "solved": False,
        "error": None,
    }


def step_event(action: str, text: str, info: Mapping[str, Any]) -> dict[str, Any]:
    """The ``events`` entry of one step of ``AgiMaze-v0`` (from its ``info``)."""
    formal = info["formal"]
    return {
        "action": action,
        "text": text,
        "formal": formal,
        "inventory": formal.get("inventory", {}),
        "steps": info["steps"],
        "solved": info["solved"],
        "error": info["error"],
    }


def set_event(
    action: str | None, obs: Mapping[str, Any], info: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``events`` entry of one step (or the reset) of ``AgiMazeSet-v0``."""
    event: dict[str, Any] = {
        "action": action,
        "message": obs["message"],
        "text": obs["text"],
        "events": list(info.get("events", [])),
        "inventory": decode_inventory(obs["inventory"]),
        "index": info["index"],
        "waiting": info["waiting"],
    }
    for key in ("name", "steps", "solved"):
        if key in info:
            event[key] = info[key]
    return event


def outcome(
    *, name: str, steps: int, max_steps: int, budget: int, solved: bool, rhae: float
) -> dict[str, Any]:
    """The journal outcome of an ``AgiMaze-v0`` episode (the recorder adds ``turns``)."""
    return {
        "name": name,
        "solved": solved,
        "steps": steps,
        "max_steps": max_steps,
        "budget": budget,
        "rhae": rhae,
    }


def set_state_digest(
    *,
    index: int,
    waiting: bool,
    finished: bool,
    results: Sequence[Mapping[str, Any]],
    seeds: Sequence[int],
    last_inner: Mapping[str, Any],
    labyrinth: bytes | None,
) -> bytes:
    """SHA-256 of a labyrinth set's state: where it stands, what is done, the running labyrinth.

    ``last_inner`` (the last observation of the running labyrinth, repeated after an action
    that is not played) and ``labyrinth`` (the running labyrinth's :func:`state_digest`) are
    included because they shape later observations.
    """
    canonical = encode_json_bytes(
        [
            index,
            waiting,
            finished,
            list(results),
            list(seeds),
            last_inner,
            None if labyrinth is None else labyrinth.hex(),
        ]
    )
    return hashlib.sha256(canonical).digest()


def set_outcome(results: Sequence[Mapping[str, Any]], count: int) -> dict[str, Any]:
    """The journal outcome of an ``AgiMazeSet-v0`` episode (the recorder adds ``turns``)."""
    return {
        "solved": sum(bool(r["solved"]) for r in results),
        "labyrinths": count,
        "results": [dict(r) for r in results],
    }


class RecordedEpisodes:
    """The journal side both AGI Maze envs share: an episode left unfinished is recorded as
    aborted (at the next reset, or when the env closes), and closing closes the recorder before
    the env's own resources (``_close_game``)."""

    #: Writes every episode to the journal (None without ``journal=``).
    recorder: Recorder | None
    #: The env's random generator (Gymnasium's, None until the first reset).
    _np_random: np.random.Generator | None

    def _journal_outcome(self) -> dict[str, Any]:
        """The outcome the journal records for the current episode."""
        raise NotImplementedError

    def _close_game(self) -> None:
        """Release what the env holds besides the recorder (backends, inner envs)."""
        raise NotImplementedError

    def state_digest(self) -> bytes:
        """The digest of the game's state the journal chains (the env's own)."""
        raise NotImplementedError

    def _start_episode(self, seed: int | None) -> int:
        """The seed of the episode a reset starts (drawn when none is given: every episode has
        a seed that reproduces it, and the journal stores it), after recording the unfinished
        one as aborted."""
        if seed is None:
            seed = episode_seed(self._np_random)
        self._abort_unfinished_episode()
        return seed

    def _abort_unfinished_episode(self) -> None:
        if self.recorder is not None and self.recorder.game_id is not None:
            self.recorder.abort(self._journal_outcome())

    def _record_turn(self, action: Any, obs: dict[str, Any], event: Any, over: bool) -> None:
        """Journal one step of ``"player"`` (its action, observation, event) and, when the
        episode is ``over``, its outcome; nothing without a recorder."""
        if self.recorder is None:
            return
        self.recorder.turn(
            self.recorder.next_turn,
            {"player": obs},
            {"player": action},
            {"player": event},
            self.state_digest(),
        )
        if over:
            self.recorder.finish(self._journal_outcome())

    def close(self) -> None:
        try:
            if self.recorder is not None:
                try:
                    self._abort_unfinished_episode()
                finally:
                    self.recorder.close()
                    self.recorder = None
        finally:
            self._close_game()
