"""The radio rule: who may send what, and when.

A message reaches every other agent in the next observation. After a message is sent, the sender
must wait ``cooldown`` turns: a message sent by the action of turn ``t`` blocks turns ``t + 1`` to
``t + cooldown``, and the observation after turn ``t`` shows ``radio_cooldown == cooldown``.
Refusals are rule-level (the agent reads the reason next turn), never exceptions.

Example:
    >>> check_message("hi", enabled=True, max_bytes=280, cooldown_left=0)
    ''
    >>> check_message("hi", enabled=True, max_bytes=280, cooldown_left=2)
    'radio cooling down: 2 more turn(s) before you can send'
"""

from __future__ import annotations

from maze_envs.escape.refusals import RADIO


def check_message(text: str, *, enabled: bool, max_bytes: int, cooldown_left: int) -> str:
    """The reason ``text`` may not be sent now, or ``""`` when it may."""
    if not enabled:
        return RADIO["switched_off"]
    if cooldown_left > 0:
        return RADIO["cooling_down"].format(cooldown_left=cooldown_left)
    size = len(text.encode())
    if size > max_bytes:
        return RADIO["too_long"].format(size=size, max_bytes=max_bytes)
    return ""


def cooldown_left(ready_turn: int, turn: int) -> int:
    """Turns the agent must still wait after turn ``turn`` before its next message."""
    return max(0, ready_turn - turn - 1)
