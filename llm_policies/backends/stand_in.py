"""Scripted stand-in models: deterministic Maze Escape players behind the real harness.

``stand-in:wall-follower`` (right hand) and ``stand-in:wall-follower-left`` are model specs like
``anthropic:<model>``: the policy, its prompts, the reply schema, the quirk-tolerant parsing, the
decision records, the caps and the response cache are the real ones; only the model is a script
that reads the prompt it is sent and writes a reply in the schema it is given. They cost nothing
and need no network, so a whole study runs offline (``maze-envs study run NAME --model
stand-in:wall-follower``) to check the pipeline before real money is spent.

What a stand-in does each turn, from the prompt alone (the wording version named in the system
prompt tells it how to read the observation):

* **moves** by the hand rule (right: the first open side among right, ahead, left, back of its
  heading; left: mirrored); its heading is the last ``heading X`` in its notebook;
* **keeps notes**: one line per turn, ``t<turn>: at [x, y]; N <side>, E ..., S ..., W ...;
  heading <move>``, appended (a rolling log) or spliced onto the end of the notebook. Its
  position is the observation's when shown, else its own count from its start (moved one cell
  per move the next turn reported as made). When a splice notebook would overflow it rewrites
  it to its last lines (a notebook compaction);
* **radios** (when the schema has a radio field) once it first stands on the exit: where it is,
  naming its frame, and the landmark it stands on, if any;
* writes the ``check`` line when the schema asks for one; keys in the schema's order; JSON as a
  tool call in ``tool`` mode, as text otherwise.

Token counts are estimated from characters (4 a token, as :class:`ScriptedBackend` does); the
cache-read tokens are the prefix this request shares with the same agent's previous request (what
a provider's automatic prefix cache would read), so cache-read shares respond to the notebook
format as a real prefix cache does.

    >>> sorted(STAND_INS)
    ['wall-follower', 'wall-follower-left']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

from llm_policies.backends.base import ModelRequest
from llm_policies.backends.scripted import CHARS_PER_TOKEN, ScriptedReply
from maze_envs.escape.vocab import OPPOSITE_DIRECTION
from maze_envs.reading.text import common_affixes
from maze_envs.text.wording import Wording, load_wording

#: The moves by heading, right-hand rule: right of the heading, ahead, left, back.
_RIGHT_HAND: Final = {
    "N": ("E", "N", "W", "S"),
    "E": ("S", "E", "N", "W"),
    "S": ("W", "S", "E", "N"),
    "W": ("N", "W", "S", "E"),
}
_LEFT_HAND: Final = {h: (o[2], o[1], o[0], o[3]) for h, o in _RIGHT_HAND.items()}
_STEP: Final = {"N": (0, 1), "E": (1, 0), "S": (0, -1), "W": (-1, 0)}
_BACK: Final[dict[str, str]] = dict(OPPOSITE_DIRECTION.items())
_WORDING: Final = re.compile(r"observation wording (escape-(v\d+))")
#: Lines kept when a full splice notebook is compacted.
KEEP_LINES: Final = 8


@dataclass(frozen=True)
class StandIn:
    """One stand-in model: its name and the order it tries the sides in, by heading."""

    name: str
    hand: str
    order: dict[str, tuple[str, str, str, str]]


#: The stand-in models, by the name after ``stand-in:`` (``scripted:NAME``
#: without a script of one's own means the same).
STAND_INS: Final[dict[str, StandIn]] = {
    "wall-follower": StandIn("wall-follower", "right", _RIGHT_HAND),
    "wall-follower-left": StandIn("wall-follower-left", "left", _LEFT_HAND),
}


def _pattern(template: str) -> re.Pattern[str]:
    """A wording template (``"Cell: N {N}, E {E}."``) as a regex with one group per field."""
    escaped = re.escape(template)
    return re.compile("^" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>.+?)", escaped) + "$", re.M)


@dataclass(frozen=True)
class _Reader:
    """The patterns of one wording version."""

    cell: re.Pattern[str]
    turn: re.Pattern[str]
    position: re.Pattern[str]
    landmark: re.Pattern[str]
    on_exit: str
    moved: str
    notebook_size: re.Pattern[str]
    notebook_open: str
    notebook_close: str
    notebook_empty: str


@cache
def _reader(version: str) -> _Reader:
    wording: Wording = load_wording("escape", version)
    label = wording.label
    return _Reader(
        cell=_pattern(label("cell")),
        turn=_pattern(label("turn")),
        position=_pattern(label("position")),
        landmark=_pattern(label("landmark")),
        on_exit=label("on_exit_yes"),
        moved=wording.table("labels", "last_move")["moved"],
        notebook_size=_pattern(label("notebook_size")),
        notebook_open=label("notebook_open"),
        notebook_close=label("notebook_close"),
        notebook_empty=label("notebook_empty"),
    )


@dataclass
class _Seen:
    """What the stand-in reads off one prompt."""

    edges: dict[str, str]
    turn: int
    notebook: str
    notebook_max: int
    on_exit: bool
    moved: bool
    position: tuple[int, int] | None
    landmark: str | None


def _read(request: ModelRequest) -> _Seen:
    found = _WORDING.search(request.system)
    if found is None:
        raise ValueError(
            "the stand-in plays Maze Escape: the system prompt names no observation wording"
        )
    reader = _reader(found.group(2))
    text = request.messages[-1].content
    cell = reader.cell.search(text)
    if cell is None:
        raise ValueError(f"the stand-in found no cell in the prompt: {text[:200]!r}")
    start = text.find(reader.notebook_open + "\n")
    end = text.find("\n" + reader.notebook_close, start)
    notebook = ""
    if start >= 0 and end >= 0:
        notebook = text[start + len(reader.notebook_open) + 1 : end]
    if notebook == reader.notebook_empty:
        notebook = ""
    turn = reader.turn.search(text)
    position = reader.position.search(text)
    landmark = reader.landmark.search(text)
    size = reader.notebook_size.search(text)
    return _Seen(
        edges={d: cell.group(d) for d in "NESW"},
        turn=int(turn.group("turn")) if turn else 0,
        notebook=notebook,
        notebook_max=int(size.group("max_bytes")) if size else 8192,
        on_exit=reader.on_exit in text.splitlines(),
        moved=reader.moved in text.splitlines(),
        position=(
            (int(position.group("x")), int(position.group("y"))) if position is not None else None
        ),
        landmark=landmark.group("name") if landmark is not None else None,
    )


_NOTE: Final = re.compile(r"at \[(-?\d+), (-?\d+)\];[^\n]*heading ([NESW])")


def _where(seen: _Seen) -> tuple[tuple[int, int], str]:
    """Its position (shown, else counted from its notes) and its heading (N at the start)."""
    notes = _NOTE.findall(seen.notebook)
    if not notes:
        return seen.position or (0, 0), "N"
    x, y, heading = int(notes[-1][0]), int(notes[-1][1]), notes[-1][2]
    if seen.position is not None:
        return seen.position, heading
    if seen.moved:  # its last move was made: one cell that way
        dx, dy = _STEP[heading]
        x, y = x + dx, y + dy
    return (x, y), heading


@dataclass
class StandInModel:
    """A stand-in as a :class:`~llm_policies.backends.scripted.ScriptedBackend` script (one per
    backend, that is per agent and game: it remembers the previous request for the cache-read
    count)."""

    stand_in: StandIn
    previous: str = ""

    def __call__(self, request: ModelRequest) -> ScriptedReply:
        seen = _read(request)
        (x, y), heading = _where(seen)
        move = next((d for d in self.stand_in.order[heading] if seen.edges[d] == "open"), "STAY")
        sides = ", ".join(f"{d} {seen.edges[d]}" for d in "NESW")
        note = f"t{seen.turn}: at [{x}, {y}]; {sides}; heading {move}"
        props = request.schema.get("properties", {})
        values: dict[str, Any] = {"move": move}
        if "check" in props:
            values["check"] = (
                f"{sides}; came from {_BACK[heading]}; going {move} by the "
                f"{self.stand_in.hand}-hand rule"
            )
        first_time_out = seen.on_exit and "exit found" not in seen.notebook
        if first_time_out:
            note += "; exit found"
        values["notebook"] = self._edit(props.get("notebook", {}), seen, note)
        if "radio" in props:
            values["radio"] = self._radio(seen, (x, y)) if first_time_out else None
        reply = json.dumps({k: values.get(k) for k in props}, separators=(", ", ": "))
        prompt = request.system + "".join(m.content for m in request.messages)
        shared, _ = common_affixes(self.previous, prompt)
        self.previous = prompt
        as_tool = request.output_mode == "tool"
        return ScriptedReply(
            text=None if as_tool else reply,
            tool_arguments=reply if as_tool else None,
            cache_read_tokens=shared // CHARS_PER_TOKEN,
            model=f"stand-in:{self.stand_in.name}",
        )

    @staticmethod
    def _edit(schema: dict[str, Any], seen: _Seen, note: str) -> Any:
        splice = (schema.get("anyOf") or [{}])[0].get("type") == "object"
        if not splice:
            return note
        notebook = seen.notebook
        if len(notebook.encode()) + len(note) + 1 > seen.notebook_max:  # full: keep the end
            kept = "\n".join(notebook.splitlines()[-KEEP_LINES:])
            return {"start": 0, "end": len(notebook), "text": f"{kept}\n{note}\n"}
        return {"start": len(notebook), "end": len(notebook), "text": note + "\n"}

    @staticmethod
    def _radio(seen: _Seen, at: tuple[int, int]) -> str:
        where = f"I am on the exit at [{at[0]}, {at[1]}] in my own frame"
        if seen.landmark is not None:
            where += f", on the {seen.landmark}"
        return where + "."


def stand_in_script(spec: str) -> Callable[[ModelRequest], ScriptedReply]:
    """The script of the stand-in ``stand-in:<name>`` (or ``scripted:<name>``; ValueError
    naming the stand-ins for an unknown name)."""
    name = spec.partition(":")[2]
    stand_in = STAND_INS.get(name)
    if stand_in is None:
        known = ", ".join(f"stand-in:{n}" for n in STAND_INS)
        raise ValueError(
            f"no stand-in model {spec!r}; the stand-ins are {known} (a scripted backend with a "
            "script of your own takes it as client=)"
        )
    return StandInModel(stand_in)
