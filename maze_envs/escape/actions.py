"""Incoming actions: the check against the action space, and their normal form as plain data.

:func:`accept_action` is what the environment runs on every agent's action before anything
changes. An action inside the action space comes back as an :class:`AcceptedAction`: the move,
the notebook edit and the radio text the rules take, and ``plain``, the same action rebuilt
from plain Python data (``dict``, ``int``, ``str``), which is what the journal records. Any
``Mapping`` (a ``dict``, ``MappingProxyType``, a custom ``Mapping``) is accepted where the space
has a ``Dict``, also for the ``notebook`` part; integers may be Python ``int`` (``bool``
included, as in Gymnasium's ``Discrete``), numpy integer scalars or 0-d integer arrays; text
must be a ``str`` (subclasses are copied to plain ``str``). Anything else raises ``ValueError``
naming the agent, the field and what is allowed.

Where the space ends and the rules begin (language-model policies send such values):

* ``notebook.start`` / ``notebook.end`` outside ``0..65536`` (negative, or beyond the space's
  ``Discrete(65537)``), a non-integer, or ``edit`` other than 0/1: ``ValueError``.
* ``start``/``end`` inside ``0..65536`` but past the notebook's text (or ``start > end``): a
  *rule-level* rejection. The notebook stays as it was and the next observation says why in
  ``last_action.notebook_reason`` (e.g. ``end 40 is beyond the notebook's 12 characters``).
* Text longer than 65536 UTF-8 bytes: ``ValueError``; longer than the game's per-turn,
  notebook or radio limits: rule-level rejection or refusal with a reason.

Example:
    >>> from types import MappingProxyType
    >>> import numpy as np
    >>> raw = {"move": np.int64(1), "notebook": MappingProxyType({"append": "hi"}), "radio": ""}
    >>> accepted = accept_action("A", raw, splice_mode=False)
    >>> accepted.move, accepted.edit, accepted.plain
    (1, 'hi', {'move': 1, 'notebook': {'append': 'hi'}, 'radio': ''})
    >>> accept_action("A", {"move": 0, 7: 1}, splice_mode=False)
    Traceback (most recent call last):
    ...
    ValueError: agent A: an action is a dict with exactly the keys [...], got the keys ['move', 7]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple

import numpy as np

from maze_envs.escape.config import ACTION_TEXT_MAX_BYTES
from maze_envs.escape.vocab import Move

#: A splice edit as the rules take it: ``(start, end, text)``.
SpliceArgs = tuple[int, int, str]
#: A notebook edit as the rules take it: splice arguments, a rolling-log line, or no edit.
NotebookEdit = SpliceArgs | str | None

ACTION_KEYS: Final = frozenset({"move", "notebook", "radio"})
SPLICE_KEYS: Final = frozenset({"edit", "start", "end", "text"})
APPEND_KEYS: Final = frozenset({"append"})
_LAST_MOVE: Final = int(max(Move))
_ALLOWED_MOVES: Final = (
    f"move must be an integer 0..{_LAST_MOVE} ("
    + ", ".join(f"{int(m)}={m.label}" for m in Move)
    + ")"
)


class AcceptedAction(NamedTuple):
    """One agent's action after the space check: what the rules take, and its plain form."""

    move: int
    edit: NotebookEdit
    radio: str
    plain: dict[str, Any]


def describe_keys(keys: Iterable[Any]) -> list[Any]:
    """The keys of a mapping in a stable order, for error messages (any key types mix)."""
    return sorted(keys, key=lambda key: (type(key) is not str, repr(key)))


def _int_in(value: Any, low: int, high: int) -> int | None:
    """``value`` as a plain int if it is an integer (Python, numpy scalar, 0-d array) in range."""
    if type(value) is int:  # the common case, checked first because this runs every turn
        return value if low <= value <= high else None
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        value = value.item()
    if not isinstance(value, int | np.integer):  # bools are ints, as in Discrete.contains
        return None
    number = int(value)
    return number if low <= number <= high else None


def _text(value: Any, agent: str, field: str) -> str:
    """``value`` as a plain str when it is a str of at most ACTION_TEXT_MAX_BYTES UTF-8 bytes."""
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
    return str.__str__(value)  # a plain str even for a subclass (whose __str__ may differ)


def _not_an_action(agent: str, action: Any) -> ValueError:
    got = (
        f"the keys {describe_keys(action)}"
        if isinstance(action, Mapping)
        else type(action).__name__
    )
    return ValueError(
        f"agent {agent}: an action is a dict with exactly the keys {sorted(ACTION_KEYS)}, got {got}"
    )


def _not_a_notebook(
    agent: str, notebook: Any, keys: frozenset[str], splice_mode: bool
) -> ValueError:
    got = (
        f"the keys {describe_keys(notebook)}"
        if isinstance(notebook, Mapping)
        else type(notebook).__name__
    )
    return ValueError(
        f"agent {agent}: notebook must be a dict with exactly the keys {sorted(keys)} "
        f"in {'splice' if splice_mode else 'rolling_log'} mode, got {got}"
    )


def accept_action(agent: str, action: Any, splice_mode: bool) -> AcceptedAction:
    """Check ``action`` against the action space and return it in its accepted forms.

    Raises ``ValueError`` naming the agent and what is allowed when it is not in the space.
    """
    return AcceptedAction._make(accept(agent, action, splice_mode))


def accept(
    agent: str, action: Any, splice_mode: bool
) -> tuple[int, NotebookEdit, str, dict[str, Any]]:
    """:func:`accept_action` as a plain tuple (the environment's step path: no NamedTuple).

    An action that already is plain data (``dict`` parts, ``int`` and ``str`` values) is its
    own plain form; anything else is rebuilt from plain data.
    """
    # Fast path first: exact dicts, ints and ASCII strs, checked inline (this runs for every
    # agent every turn); any other form goes through the general checks and is rebuilt.
    exact = type(action) is dict
    try:  # a dict of 3 entries that has the 3 keys has exactly them (cheaper than keys() ==)
        if not (exact and len(action) == 3) and not (
            isinstance(action, Mapping) and action.keys() == ACTION_KEYS
        ):
            raise KeyError
        move, notebook, radio = action["move"], action["notebook"], action["radio"]
    except KeyError:
        raise _not_an_action(agent, action) from None
    if type(move) is not int or not 0 <= move <= _LAST_MOVE:
        move = _int_in(move, 0, _LAST_MOVE)
        if move is None:
            raise ValueError(f"agent {agent}: {_ALLOWED_MOVES}, got {action['move']!r}")
        exact = False
    keys = SPLICE_KEYS if splice_mode else APPEND_KEYS
    if type(notebook) is not dict:
        if not (isinstance(notebook, Mapping) and notebook.keys() == keys):
            raise _not_a_notebook(agent, notebook, keys, splice_mode)
        exact = False
    elif len(notebook) != len(keys):
        raise _not_a_notebook(agent, notebook, keys, splice_mode)
    edit: NotebookEdit = None
    if splice_mode:
        try:  # with the right number of entries, finding every key means exactly these keys
            flag, start, end = notebook["edit"], notebook["start"], notebook["end"]
            text = notebook["text"]
        except KeyError:
            raise _not_a_notebook(agent, notebook, keys, splice_mode) from None
        if not (
            type(flag) is int
            and type(start) is int
            and type(end) is int
            and 0 <= flag <= 1
            and 0 <= start <= ACTION_TEXT_MAX_BYTES
            and 0 <= end <= ACTION_TEXT_MAX_BYTES
        ):
            flag = _int_in(flag, 0, 1)
            start = _int_in(start, 0, ACTION_TEXT_MAX_BYTES)
            end = _int_in(end, 0, ACTION_TEXT_MAX_BYTES)
            if flag is None or start is None or end is None:
                shown = {k: notebook[k] for k in ("edit", "start", "end")}
                raise ValueError(
                    f"agent {agent}: notebook edit must be 0 or 1 and start/end integers "
                    f"0..{ACTION_TEXT_MAX_BYTES} (positions past the notebook's text are "
                    f"allowed and rejected by the rules with a reason), got {shown}"
                )
            exact = False
        if not (type(text) is str and text.isascii() and len(text) <= ACTION_TEXT_MAX_BYTES):
            exact = exact and type(text) is str
            text = _text(text, agent, "notebook text")
        if flag:
            edit = (start, end, text)
    else:
        try:
            line = notebook["append"]
        except KeyError:
            raise _not_a_notebook(agent, notebook, keys, splice_mode) from None
        if not (type(line) is str and line.isascii() and len(line) <= ACTION_TEXT_MAX_BYTES):
            exact = exact and type(line) is str
            line = _text(line, agent, "notebook append")
        edit = line or None
    if not (type(radio) is str and radio.isascii() and len(radio) <= ACTION_TEXT_MAX_BYTES):
        exact = exact and type(radio) is str
        radio = _text(radio, agent, "radio")
    if exact:
        return move, edit, radio, action
    plain_notebook: dict[str, Any] = (
        {"edit": flag, "start": start, "end": end, "text": text}
        if splice_mode
        else {"append": line}
    )
    return move, edit, radio, {"move": move, "notebook": plain_notebook, "radio": radio}


def take_symbol(agent: str, action: Any, symbols: int) -> tuple[int, Any]:
    """The radio symbol of an action of a game with ``radio_symbols=symbols`` (its key
    ``radio_symbol``, an integer 0..symbols, 0 sending none), and the action without it.

    ``ValueError`` naming the agent when the key is missing or its value out of range.

    Example:
        >>> action = {"move": 0, "notebook": {"append": ""}, "radio": "", "radio_symbol": 2}
        >>> take_symbol("A", action, symbols=4)
        (2, {'move': 0, 'notebook': {'append': ''}, 'radio': ''})
    """
    if not isinstance(action, Mapping) or "radio_symbol" not in action:
        raise ValueError(
            f"agent {agent}: in a game with radio_symbols={symbols} an action is a dict with "
            f"exactly the keys {sorted(ACTION_KEYS | {'radio_symbol'})}, got "
            + (
                f"the keys {describe_keys(action)}"
                if isinstance(action, Mapping)
                else type(action).__name__
            )
        )
    symbol = _int_in(action["radio_symbol"], 0, symbols)
    if symbol is None:
        raise ValueError(
            f"agent {agent}: radio_symbol must be an integer 0..{symbols} (0 sends none), got "
            f"{action['radio_symbol']!r}"
        )
    return symbol, {key: value for key, value in action.items() if key != "radio_symbol"}


def parse_action(agent: str, action: Any, splice_mode: bool) -> tuple[int, NotebookEdit, str]:
    """Check ``action`` against the action space; return (move, notebook edit, radio text)."""
    accepted = accept_action(agent, action, splice_mode)
    return accepted.move, accepted.edit, accepted.radio
