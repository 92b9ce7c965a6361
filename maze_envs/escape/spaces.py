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
* ``radio_symbol`` (only with ``radio_symbols=K``): ``Discrete(K + 1)``, a symbol sent with
  the radio message; 0 sends none.

Action text may be up to :data:`~maze_envs.escape.config.ACTION_TEXT_MAX_BYTES` bytes; the
rules' tighter limits (new text per turn, notebook size, radio size) are rule-level rejections
reported in the next observation. Splice positions are space-checked against ``0..65536``
only: a position past the notebook's text is a rule-level rejection with a reason, a negative
or larger one a ``ValueError``. Anything outside the action space raises ``ValueError`` naming
the agent, before any state changes (:func:`~maze_envs.escape.actions.accept_action`, which
also turns an accepted action into plain data).

Observation space: see :mod:`maze_envs.escape.observe` for the fields; the optional features'
spaces are declared in :mod:`maze_envs.escape.features`. ``observation_space(config,
agent, version)`` builds layout version 0 (per-teammate fields keyed by the other agents, so the
spaces differ between agents) or 1 (keyed by every agent, the same space for all).
"""

from __future__ import annotations

from typing import Any, Final

from gymnasium import spaces

from maze_envs.escape.actions import accept_action, parse_action
from maze_envs.escape.config import (
    ACTION_TEXT_MAX_BYTES,
    REASON_MAX_BYTES,
    Config,
    EnvVersion,
    slot_names,
    teammates,
)
from maze_envs.escape.features import coordinate_bounds, enabled_features, max_distance_tenths
from maze_envs.escape.vocab import (
    DIRECTIONS,
    EDGE_KINDS,
    LANDMARK_NAMES,
    MOVE_RESULTS,
    MOVES,
    NOTEBOOK_RESULTS,
    RADIO_RESULTS,
)

__all__ = [
    "SAMPLE_CHARSET",
    "Utf8Text",
    "accept_action",
    "action_space",
    "coordinate_bounds",
    "max_distance_tenths",
    "observation_space",
    "parse_action",
    "teammates",
]

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


def observation_space(config: Config, agent: str, version: EnvVersion = 0) -> spaces.Dict:
    """The observation space of ``agent`` in layout ``version`` (optional keys only when their
    feature is on). In version 1 it is the same space for every agent."""
    others = slot_names(config, agent, version)
    text_nb = Utf8Text(config.notebook_max_bytes)
    fields: dict[str, spaces.Space[Any]] = {
        "edges": spaces.MultiDiscrete([len(EDGE_KINDS)] * len(DIRECTIONS)),
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
                "notebook": spaces.Discrete(len(NOTEBOOK_RESULTS)),
                "notebook_reason": Utf8Text(REASON_MAX_BYTES),
                "radio": spaces.Discrete(len(RADIO_RESULTS)),
                "radio_reason": Utf8Text(REASON_MAX_BYTES),
                "radio_cooldown": spaces.Discrete(config.radio_cooldown + 1),
            }
        ),
    }
    for feature in enabled_features(config):  # maze_envs.escape.features declares their spaces
        fields.update(feature.spaces(config, len(others)))
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
    fields: dict[str, spaces.Space[Any]] = {
        "move": spaces.Discrete(len(MOVES)),
        "notebook": notebook,
        "radio": text,
    }
    if config.radio_symbols:  # 0 sends none
        fields["radio_symbol"] = spaces.Discrete(config.radio_symbols + 1)
    return spaces.Dict(fields)
