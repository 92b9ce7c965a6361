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


def check_message(text: str, *, enabled: bool, max_bytes: int, cooldown_left: int) -> str:
    """The reason ``text`` may not be sent now, or ``""`` when it may."""
    if not enabled:
        return "the radio is switched off in this game"
    if cooldown_left > 0:
        return f"radio cooling down: {cooldown_left} more turn(s) before you can send"
    size = len(text.encode())
    if size > max_bytes:
        return f"message is {size} bytes; at most {max_bytes} bytes per message"
    return ""


def cooldown_left(ready_turn: int, turn: int) -> int:
    """Turns the agent must still wait after turn ``turn`` before its next message."""
    return max(0, ready_turn - turn - 1)
