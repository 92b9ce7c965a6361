"""Gymnasium spaces of Maze Escape and the checks that keep actions inside them.

Text fields (notebooks, radio, reasons) use :class:`Utf8Text`: any valid UTF-8 string up to a
byte limit, which is what the rules limit. Gymnasium's ``Text`` limits characters from a fixed
charset instead, so it would either reject text the rules accept or accept text they reject.

Action space (per agent, a ``Dict``):

* ``move``: ``Discrete(5)``, 0..4 = N, E, S, W, STAY.
* ``notebook``: ``splice`` mode ``{"edit": Discrete(2), "start", "end": Discrete(65537),
  "text": Utf8Text}``: with ``edit == 0`` nothing happens and the other fields are ignored.
  ``rolling_log`` mode ``{"append": Utf8Text}``: an empty string appends nothing.
* ``radio``: ``Utf8Text``; an empty string sends nothing.

Action text may be up to :data:`~maze_envs.escape.types.ACTION_TEXT_MAX_BYTES` bytes; the rules'
tighter limits (new text per turn, notebook size, radio size) are rule-level rejections reported
in the next observation. Anything outside the action space raises ``ValueError`` naming the agent,
before any state changes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

import numpy as np
from gymnasium import spaces

from maze_envs.escape.engine import NotebookEdit
from maze_envs.escape.types import (
    ACTION_TEXT_MAX_BYTES,
    LANDMARK_NAMES,
    MOVE_RESULTS,
    MOVES,
    REASON_MAX_BYTES,
    Config,
    agent_names,
)

#: Characters used when *sampling* text (containment accepts any UTF-8): ASCII plus multi-byte.
SAMPLE_CHARSET: Final = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;!?-+()[]{}\n"
    "éüßñ→←↑↓★日本語🙂"
)


class Utf8Text(spaces.Text):
    """Any string whose UTF-8 encoding is at most ``max_bytes`` bytes.

    ``sample`` draws strings of at most ``sample_chars`` characters from :data:`SAMPLE_CHARSET`
    (a subset of the space, kept short so random play stays fast).
    """

    def __init__(self, max_bytes: int, sample_chars: int = 48, seed: int | None = None) -> None:
        super().__init__(max_length=max_bytes, min_length=0, charset=SAMPLE_CHARSET, seed=seed)
        self.max_bytes = max_bytes
        self.sample_chars = min(sample_chars, max_bytes // 4)

    def contains(self, x: Any) -> bool:
        if not isinstance(x, str):
            return False
        try:
            return len(x.encode()) <= self.max_bytes
        except UnicodeEncodeError:  # lone surrogates are not UTF-8
            return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        if mask is not None or probability is not None:
            raise ValueError("Utf8Text.sample does not take masks")
        length = int(self.np_random.integers(0, self.sample_chars + 1))
        picks = self.np_random.integers(0, len(SAMPLE_CHARSET), size=length)
        return "".join(SAMPLE_CHARSET[int(k)] for k in picks)

    def __repr__(self) -> str:
        return f"Utf8Text(max_bytes={self.max_bytes})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Utf8Text) and other.max_bytes == self.max_bytes


def teammates(config: Config, agent: str) -> tuple[str, ...]:
    """The other agents, in name order (the order of every per-teammate field)."""
    return _teammates(config.num_agents, agent)


@cache
def _teammates(num_agents: int, agent: str) -> tuple[str, ...]:
    return tuple(name for name in agent_names(num_agents) if name != agent)


def coordinate_bounds(config: Config) -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest ``[x, y]`` in the configured frame."""
    span = np.array([config.width - 1, config.height - 1], dtype=np.int64)
    low = np.zeros(2, dtype=np.int64) if config.coordinates == "absolute" else -span
    return low, span


def max_distance_tenths(config: Config) -> int:
    return math.ceil(10 * math.hypot(config.width - 1, config.height - 1))


def observation_space(config: Config, agent: str) -> spaces.Dict:
    """The observation space of ``agent`` (optional keys only when their feature is on)."""
    others = teammates(config, agent)
    text_nb = Utf8Text(config.notebook_max_bytes)
    fields: dict[str, spaces.Space[Any]] = {
        "edges": spaces.MultiDiscrete([3, 3, 3, 3]),
        "on_exit": spaces.Discrete(2),
        "landmark": spaces.Discrete(len(LANDMARK_NAMES) + 1),
        "turn": spaces.Discrete(config.max_turns + 1),
        "turns_left": spaces.Discrete(config.max_turns + 1),
        "notebook": text_nb,
        "radio": spaces.Dict({name: Utf8Text(config.radio_max_bytes) for name in others}),
        "teammate_notebooks": spaces.Dict(
            {name: spaces.Dict({"shown": spaces.Discrete(2), "text": text_nb}) for name in others}
        ),
        "last_action": spaces.Dict(
            {
                "move": spaces.Discrete(len(MOVE_RESULTS)),
                "notebook": spaces.Discrete(3),
                "notebook_reason": Utf8Text(REASON_MAX_BYTES),
                "radio": spaces.Discrete(3),
                "radio_reason": Utf8Text(REASON_MAX_BYTES),
                "radio_cooldown": spaces.Discrete(config.radio_cooldown + 1),
            }
        ),
    }
    if config.distance_sensor:
        top = max_distance_tenths(config)
        fields["distances"] = spaces.Box(0, top, shape=(config.num_agents,), dtype=np.int64)
    if config.coordinates is not None:
        low, high = coordinate_bounds(config)
        fields["position"] = spaces.Box(low, high, dtype=np.int64)
    if config.trail_length:
        low, high = coordinate_bounds(config)
        k = config.trail_length
        fields["trail"] = spaces.Box(np.tile(low, (k, 1)), np.tile(high, (k, 1)), dtype=np.int64)
        fields["trail_length"] = spaces.Discrete(k + 1)
    if config.meeting_alert:
        fields["colocated_with"] = spaces.MultiBinary(len(others))
    if config.used_exits:
        fields["used_exits"] = spaces.MultiBinary(4)
    return spaces.Dict(fields)


def action_space(config: Config) -> spaces.Dict:
    """The action space (the same shape for every agent)."""
    text = Utf8Text(ACTION_TEXT_MAX_BYTES)
    notebook: spaces.Dict
    if config.notebook_mode == "splice":
        notebook = spaces.Dict(
            {
                "edit": spaces.Discrete(2),
                "start": spaces.Discrete(ACTION_TEXT_MAX_BYTES + 1),
                "end": spaces.Discrete(ACTION_TEXT_MAX_BYTES + 1),
                "text": text,
            }
        )
    else:
        notebook = spaces.Dict({"append": text})
    return spaces.Dict({"move": spaces.Discrete(len(MOVES)), "notebook": notebook, "radio": text})


# --- fast validation of incoming actions (the step path) --------------------------------------

_ACTION_KEYS: Final = frozenset({"move", "notebook", "radio"})
_SPLICE_KEYS: Final = frozenset({"edit", "start", "end", "text"})
_APPEND_KEYS: Final = frozenset({"append"})
_ALLOWED_MOVES: Final = "move must be an integer 0..4 (0=N, 1=E, 2=S, 3=W, 4=STAY)"


def _int_in(value: Any, low: int, high: int) -> int | None:
    """``value`` as an int when it is an integer (Python, numpy scalar or 0-d array) in range."""
    if type(value) is int:  # the common case, checked first because this runs every turn
        return value if low <= value <= high else None
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        value = value.item()
    if not isinstance(value, int | np.integer):  # bools are ints, as in Discrete.contains
        return None
    number = int(value)
    return number if low <= number <= high else None


def _text(value: Any, agent: str, field: str) -> str:
    """``value`` when it is a str of at most ACTION_TEXT_MAX_BYTES bytes of valid UTF-8."""
    if type(value) is str and value.isascii() and len(value) <= ACTION_TEXT_MAX_BYTES:
        return value  # ASCII: one byte per character, nothing to encode
    if not isinstance(value, str):
        raise ValueError(f"agent {agent}: {field} must be a str, got {type(value).__name__}")
    try:
        size = len(value.encode())
    except UnicodeEncodeError:
        raise ValueError(f"agent {agent}: {field} is not valid UTF-8 text") from None
    if size > ACTION_TEXT_MAX_BYTES:
        raise ValueError(
            f"agent {agent}: {field} is {size} bytes; actions carry at most "
            f"{ACTION_TEXT_MAX_BYTES} bytes of text"
        )
    return str(value)


def _keys(value: Any) -> Any:
    return value.keys() if type(value) is dict or isinstance(value, Mapping) else None


def parse_action(agent: str, action: Any, splice_mode: bool) -> tuple[int, NotebookEdit, str]:
    """Check ``action`` against the action space; return (move, notebook edit, radio text).

    Raises ``ValueError`` naming the agent and what is allowed when it is not in the space.
    """
    if _keys(action) != _ACTION_KEYS:
        got = sorted(action) if isinstance(action, Mapping) else type(action).__name__
        raise ValueError(
            f"agent {agent}: an action is a dict with exactly the keys "
            f"{sorted(_ACTION_KEYS)}, got {got}"
        )
    move = _int_in(action["move"], 0, 4)
    if move is None:
        raise ValueError(f"agent {agent}: {_ALLOWED_MOVES}, got {action['move']!r}")
    notebook = action["notebook"]
    keys = _SPLICE_KEYS if splice_mode else _APPEND_KEYS
    if _keys(notebook) != keys:
        raise ValueError(
            f"agent {agent}: notebook must be a dict with exactly the keys {sorted(keys)} "
            f"in {'splice' if splice_mode else 'rolling_log'} mode"
        )
    edit: NotebookEdit = None
    if splice_mode:
        flag = _int_in(notebook["edit"], 0, 1)
        start = _int_in(notebook["start"], 0, ACTION_TEXT_MAX_BYTES)
        end = _int_in(notebook["end"], 0, ACTION_TEXT_MAX_BYTES)
        if flag is None or start is None or end is None:
            raise ValueError(
                f"agent {agent}: notebook edit must be 0 or 1 and start/end integers "
                f"0..{ACTION_TEXT_MAX_BYTES}, got {dict(notebook, text='...')}"
            )
        text = _text(notebook["text"], agent, "notebook text")
        if flag:
            edit = (start, end, text)
    else:
        line = _text(notebook["append"], agent, "notebook append")
        edit = line or None
    radio = _text(action["radio"], agent, "radio")
    return move, edit, radio
