"""The typed AGI Maze observation a policy reads: :class:`AgiMazeObservation`.

The Gymnasium observation of ``AgiMaze-v0`` packs the formal observation into indices and
flags; a policy (classical or a language model) wants what the public API sends instead: the
narration, the full ``formal`` dict (with ``details``), the inventory as a dict of held items,
the map when one is shown, and where it stands in its budget. :meth:`AgiMazeObservation.from_env`
builds that from one ``reset``/``step`` result, for ``AgiMaze-v0`` and for the labyrinth set
``AgiMazeSet-v0`` (which adds its transition ``message`` and ``waiting``).

Example:
    >>> import gymnasium as gym
    >>> import maze_envs
    >>> env = gym.make("maze_envs/AgiMaze-v0", path="TRAINING/S0-keys/STAGE-01/0005.json")
    >>> obs, info = env.reset(seed=0)
    >>> first = AgiMazeObservation.from_env(obs, info, env=env)
    >>> first.text, first.step, first.max_steps, first.budget, first.inventory
    ('Game has started.', 0, 70, 350, {})
    >>> obs, _, _, _, info = env.unwrapped.step_name("up")
    >>> AgiMazeObservation.from_env(obs, info, last_action="up", env=env).formal["status"]
    'blocked'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from maze_envs.agimaze.scoring import step_budget
from maze_envs.agimaze.spaces import EVENT_KINDS, INVENTORY_FLAGS, OBSERVE_KINDS, STATUS_KINDS


def decode_inventory(encoded: Mapping[str, Any]) -> dict[str, bool | int]:
    """The API's inventory dict (held items only) of an encoded ``inventory`` observation."""
    held: dict[str, bool | int] = {name: True for name in INVENTORY_FLAGS if encoded.get(name)}
    grenades = int(encoded.get("grenades", 0))
    if grenades:
        held["grenades"] = grenades
    return held


def decode_formal(encoded: Mapping[str, Any], inventory: Mapping[str, Any]) -> dict[str, Any]:
    """A formal dict from its encoded form (used when ``info`` lacks the full one).

    The encoding keeps the event *set*, not its order (events come back in vocabulary order),
    and has no ``details``.
    """
    bits = np.asarray(encoded["events"]).tolist()
    return {
        "status": STATUS_KINDS[int(encoded["status"])],
        "observe": OBSERVE_KINDS[int(encoded["observe"])],
        "events": [name for name, bit in zip(EVENT_KINDS, bits, strict=True) if bit],
        "inventory": dict(inventory),
        "details": {},
    }


class AgiMazeObservation(BaseModel):
    """What the AGI Maze player observes after a reset or a step (immutable).

    Attributes:
        text: the narration of the last action (``"Game has started."`` at the start; empty
            while a labyrinth set waits for ``start``).
        formal: the API's formal dict: ``status``, ``observe``, ``events``, ``inventory``,
            ``details``.
        inventory: held items only: flags ``key``, ``treasure``, ``exit_key``, ``boat``,
            ``flashlight`` as ``True``, ``grenades`` as a count.
        map: the map text when the labyrinth shows one (open maps), else ``None``.
        step: steps used so far in this labyrinth.
        max_steps: the labyrinth's reference budget (RHAE is measured against it).
        budget: steps allowed before truncation (``floor(budget_factor * max_steps)``; 0 when
            not known).
        last_action: the action that led here (``None`` at the start).
        error: the server-style ``bad_action`` body when the last action was not played.
        message: the labyrinth set's transition or invalid-action message (``None`` outside a
            set; ``""`` when there is none this step).
        waiting: the labyrinth set waits for the ``start`` action.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    formal: dict[str, Any]
    inventory: dict[str, bool | int]
    map: str | None = None
    step: int = Field(0, ge=0)
    max_steps: int = Field(0, ge=0)
    budget: int = Field(0, ge=0)
    last_action: str | None = None
    error: dict[str, Any] | None = None
    message: str | None = None
    waiting: bool = False

    @classmethod
    def from_env(
        cls,
        obs: Mapping[str, Any],
        info: Mapping[str, Any],
        *,
        last_action: str | None = None,
        budget: int | None = None,
        env: Any = None,
    ) -> AgiMazeObservation:
        """The typed observation of one ``reset``/``step`` result of an AGI Maze env.

        ``budget`` defaults to ``info["budget"]`` when the episode is over, else to
        ``floor(env.budget_factor * max_steps)`` when ``env`` is given, else 0.
        """
        inventory = decode_inventory(obs["inventory"])
        full = info.get("formal")
        formal = (
            dict(full) if isinstance(full, Mapping) else decode_formal(obs["formal"], inventory)
        )
        if isinstance(formal.get("inventory"), Mapping):
            inventory = dict(formal["inventory"])
        max_steps = int(info.get("max_steps") or 0)
        if budget is None:
            budget = info.get("budget")
        if budget is None and env is not None and max_steps:
            factor = float(getattr(getattr(env, "unwrapped", env), "budget_factor", 0.0))
            budget = step_budget(factor, max_steps) if factor else 0
        waiting = bool(obs.get("waiting", 0))
        map_text = obs.get("map")
        return cls(
            text=str(obs["text"]),
            formal=formal,
            inventory=inventory,
            map=map_text if map_text else None,
            step=0 if waiting else int(info.get("steps") or 0),
            max_steps=0 if waiting else max_steps,
            budget=0 if waiting else int(budget or 0),
            last_action=last_action,
            error=info.get("error"),
            message=obs.get("message") if "message" in obs else None,
            waiting=waiting,
        )
