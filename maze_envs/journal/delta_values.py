"""Reading a column of a schema version 5 journal as shared Python values (the format is
:mod:`maze_envs.journal.delta`'s): what a reader of thousands of games wants.

:class:`~.delta_reader.DeltaReader` rebuilds each turn exactly, JSON text included. This reader
keeps only the Python values of the keys it is asked for, applies each turn's changes to them in
place, and hands out each agent's values as a dict that is the very object of the turn before
when none of them changed: values are shared from turn to turn and must be read, never changed.
Nothing is made for what did not change, and no JSON text at all.

Example:
    >>> from maze_envs.journal.delta import DeltaWriter
    >>> writer, reader = DeltaWriter(), SharedValuesReader(keep={"turn", "notebook"})
    >>> turns = [{"A": {"turn": t, "pos": [t, 0], "notebook": "a note; " * 9}} for t in range(3)]
    >>> read = [reader.read(writer.encode(value)) for value in turns]
    >>> read[2]
    {'A': {'turn': 2, 'notebook': 'a note; a note; ... a note; '}}
    >>> read[1]["A"]["notebook"] is read[2]["A"]["notebook"]  # shared: it did not change
    True
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

import orjson

from maze_envs.journal.delta import LITERAL, MAX_DEPTH, MERGE, NEW, REF, SLIDE, TEXT_EDIT
from maze_envs.journal.delta_reader import SkippedKeyError, apply_text_edit

_MARKERS: Final = frozenset({TEXT_EDIT, SLIDE, MERGE, REF, LITERAL})
_ABSENT: Final = object()


class _Agent:
    """One agent's container: its keys, the values of the keys kept, the steps of the kept
    integers that move on by themselves, and the dict handed out (None once something changed)."""

    __slots__ = ("keys", "steps", "vals", "view")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.vals: dict[str, Any] = {}
        self.steps: dict[str, int] = {}
        self.view: dict[str, Any] | None = None


# A reference waiting for the whole turn: (the dict holding it, the key, the path it names)
_References = list[tuple[dict[str, Any], str, Any]]


class SharedValuesReader:
    """Reads one column of one game, turn after turn, into shared values (module docstring).

    ``keep``: the keys of each agent's value it reads (None: every key). A stored reference
    from a kept text to a skipped one raises :class:`~.delta_reader.SkippedKeyError`: the game
    must then be read again from its first turn without ``keep``.
    """

    def __init__(self, keep: Collection[str] | None = None) -> None:
        self._keep = None if keep is None else frozenset(keep)
        self._kept = () if keep is None else tuple(dict.fromkeys(keep))  # (in the caller's order)
        self._agents: dict[str, Any] = {}  # agent -> _Agent, or its value (not an object)
        self._order: tuple[str, ...] = ()
        self._steps: dict[str, int] = {}  # agents whose value is an integer that moves on
        self._actions: Any = None

    def reset(self) -> None:
        """Forget the previous turn (the next item is read without one: a stream starts)."""
        self._agents, self._order, self._steps = {}, (), {}

    def read(self, stored: bytes | str, actions: Any = None) -> dict[str, Any]:
        """This turn's ``{agent: values}`` (``actions``: this turn's decoded actions); the dicts
        of agents whose kept values did not change are those of the turn before.
        ``ValueError`` when the stored item cannot be read (the reader is then reset)."""
        self._actions = actions
        try:
            item = orjson.loads(stored)
            refs: _References = []
            if type(item) is not dict:
                raise ValueError("the stored column is not a JSON object")
            if not self._order or (len(item) == 1 and NEW in item):
                self._new_column(item[NEW] if NEW in item and len(item) == 1 else item, refs)
            else:
                self._merge_column(item, refs)
            for holder, key, target in refs:
                holder[key] = self._target(target)
            out = {}
            for agent in self._order:
                state = self._agents[agent]
                if type(state) is _Agent:
                    view = state.view
                    if view is None:
                        view = state.view = dict(state.vals)
                    out[agent] = view
                else:
                    out[agent] = state
            return out
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            self.reset()
            raise ValueError(
                f"cannot apply the stored changes ({type(exc).__name__}: {exc})"
            ) from None
        except ValueError:
            self.reset()
            raise

    # -- the column and the agents -------------------------------------------------------------

    def _new_column(self, item: dict[str, Any], refs: _References) -> None:
        olds = self._agents
        self._agents, self._steps = {}, {}
        self._order = tuple(item)
        for agent, sub in item.items():
            self._agent(agent, sub, olds.get(agent), refs, merge=False)

    def _merge_column(self, item: dict[str, Any], refs: _References) -> None:
        agents = self._agents
        for agent in self._order:  # what is not listed moves on by its steps
            if agent in item:
                continue
            state = agents[agent]
            if type(state) is _Agent:
                if state.steps:
                    _advance(state)
            elif agent in self._steps:
                agents[agent] = state + self._steps[agent]
        steps = self._steps
        for agent, sub in item.items():
            old = agents.get(agent, _ABSENT)
            if old is _ABSENT:
                raise ValueError(f"a merge lists {agent!r}, which the column does not hold")
            if type(old) is _Agent and type(sub) is dict and len(sub) != 1:
                self._merge_agent(old, sub, refs)  # (the common case, without _agent's checks)
                if steps:
                    steps.pop(agent, None)
            else:
                self._agent(agent, sub, old, refs, merge=True)

    def _agent(self, agent: str, item: Any, old: Any, refs: _References, merge: bool) -> None:
        if type(item) is dict and not (len(item) == 1 and next(iter(item)) in _MARKERS):
            if len(item) == 1 and NEW in item:
                self._agents[agent] = self._new_agent(item[NEW], old, refs)
            elif type(old) is _Agent:
                self._merge_agent(old, item, refs)
            else:
                self._agents[agent] = self._new_agent(item, old, refs)
            self._steps.pop(agent, None)
            return
        value = self._value(item, old, 1, refs, self._agents, agent)
        self._agents[agent] = value
        step = value - old if merge and _is_int(value) and _is_int(old) else 0
        if step:
            self._steps[agent] = step
        else:
            self._steps.pop(agent, None)

    def _new_agent(self, item: Any, old: Any, refs: _References) -> _Agent:
        if type(item) is not dict:
            raise ValueError(f"a new container is an object, not {type(item).__name__}")
        state = _Agent(tuple(item))
        olds = old.vals if type(old) is _Agent else {}
        keep, vals = self._keep, state.vals
        for key, sub in item.items():
            if keep is None or key in keep:
                vals[key] = self._value(sub, olds.get(key), 2, refs, vals, key)
        return state

    def _merge_agent(self, state: _Agent, item: dict[str, Any], refs: _References) -> None:
        keep, vals, steps = self._keep, state.vals, state.steps
        if steps:
            unlisted = steps.keys() - item.keys()
            if unlisted:
                for key in unlisted:
                    vals[key] += steps[key]
                state.view = None
        # (a reader that keeps a few keys looks up those, not every key the merge lists)
        for key in item if keep is None else self._kept:
            if key not in item:
                continue
            sub = item[key]
            if key not in vals and key not in state.keys:
                raise ValueError(f"a merge lists {key!r}, which the container does not hold")
            old = vals.get(key)
            kind = type(sub)
            value = vals[key] = (
                sub if kind is not dict else self._value(sub, old, 2, refs, vals, key)
            )
            if kind is int and type(old) is int and value != old:
                steps[key] = value - old
            elif steps:
                steps.pop(key, None)
            state.view = None

    # -- one value ----------------------------------------------------------------------------

    def _value(
        self,
        item: Any,
        old: Any,
        depth: int,
        refs: _References,
        holder: dict[str, Any],
        key: str,
    ) -> Any:
        if type(item) is not dict:
            return item
        if len(item) == 1:
            marker, body = next(iter(item.items()))
            if marker == TEXT_EDIT:
                return apply_text_edit(body, old, self._actions)
            if marker == SLIDE:
                if type(old) is not list or type(body) is not list or not body:
                    raise ValueError("an array moved on where no array was")
                count = body[0]
                if type(count) is not int or not 0 <= count <= len(old):
                    raise ValueError(f"an array of {len(old)} elements cannot drop {count!r}")
                return old[count:] + body[1:]
            if marker == MERGE:
                if type(old) is not dict or type(body) is not dict or not body.keys() <= old.keys():
                    raise ValueError(f"a merge of keys the object does not hold: {body!r}")
                return {**old, **body}
            if marker == REF:
                if type(body) is not list:
                    raise ValueError(f"a reference names a path, not {body!r}")
                refs.append((holder, key, body))
                return None  # (filled once the whole turn is read)
            if marker == LITERAL:
                return body
        if depth >= MAX_DEPTH:
            return item
        olds = old if type(old) is dict else {}
        out: dict[str, Any] = {}
        for name, sub in item.items():  # an object: its values by the same rules
            out[name] = self._value(sub, olds.get(name), depth + 1, refs, out, name)
        return out

    def _target(self, path: list[Any]) -> str:
        keep = self._keep
        if keep is not None and len(path) > 1 and path[1] not in keep:
            raise SkippedKeyError(f"a reference to {path}, which this reader skips")
        node: Any = self._agents.get(path[0]) if path else None
        if type(node) is _Agent:
            node = node.vals
        for name in path[1:]:
            node = node.get(name) if type(node) is dict else None
        if type(node) is not str:
            raise ValueError(f"the reference {path} does not name a text of this turn")
        return node


def _advance(state: _Agent) -> None:
    vals = state.vals
    for key, step in state.steps.items():
        vals[key] += step
    state.view = None


def _is_int(value: Any) -> bool:
    return type(value) is int


__all__ = ["SharedValuesReader"]
