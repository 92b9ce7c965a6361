"""The structured ``formal`` observation and the ``inventory`` dict of the AGI Maze API.

``formal`` = ``{"status", "observe", "events", "inventory", "details"}`` (SPEC section 4). The
per-situation values are our design where the recordings are silent; docs/agimaze-rules.md lists
them. The inventory lists only what the player holds: ``{}`` at the start, then ``True`` flags
(``key``, ``treasure``, ``exit_key``, ``boat``, ``flashlight``) and ``grenades`` (a count that stays
listed, possibly 0, once a grenade pack was picked up).
"""

from __future__ import annotations

from typing import Any, Final

from maze_envs.agimaze.compiled import PlayerState

SUCCESS: Final = "success"
BLOCKED: Final = "blocked"

#: Every ``observe`` value the engine emits.
OBSERVE_VALUES: Final = (
    "empty",
    "key",
    "treasure",
    "exit_key",
    "boat",
    "grenade_pack",
    "flashlight",
    "river",
    "river_mouth",
    "pit",
    "exit",
    "wall",
    "monolith",
)
#: Every event name the engine emits.
EVENT_NAMES: Final = (
    "moved",
    "bumped_wall",
    "bumped_monolith",
    "picked_key",
    "chest_locked",
    "opened_treasure",
    "picked_exit_key",
    "picked_boat",
    "picked_flashlight",
    "picked_grenades",
    "river_entered",
    "river_carried",
    "pit_teleport",
    "exit_blocked",
    "exit_locked",
    "exited",
    "look",
    "no_flashlight",
    "bomb_success",
    "bomb_failed",
    "no_grenades",
)
#: Inventory keys and their value types.
INVENTORY_FLAGS: Final = ("key", "treasure", "exit_key", "boat", "flashlight")


def inventory(state: PlayerState) -> dict[str, bool | int]:
    """What the player holds, as the API's ``inventory`` dict (a fresh dict)."""
    inv: dict[str, bool | int] = {}
    if state.key:
        inv["key"] = True
    if state.treasure:
        inv["treasure"] = True
    if state.exit_key:
        inv["exit_key"] = True
    if state.boat:
        inv["boat"] = True
    if state.flashlight:
        inv["flashlight"] = True
    if state.packs_taken:
        inv["grenades"] = state.grenades
    return inv


def formal(
    status: str,
    observe: str,
    events: list[str],
    state: PlayerState,
    details: dict[str, Any],
) -> dict[str, Any]:
    """Assemble one ``formal`` observation."""
    return {
        "status": status,
        "observe": observe,
        "events": events,
        "inventory": inventory(state),
        "details": details,
    }


def start_formal(state: PlayerState) -> dict[str, Any]:
    """The ``formal`` observation returned by a start (API doc example plus empty details)."""
    return formal(SUCCESS, "empty", [], state, {})
