"""Every metric defined once: a small function per metric, its docstring its definition.

The benchmark results (:mod:`maze_envs.bench`: the results table, CSV and JSON), ``maze-envs
analyze`` (:mod:`maze_envs.bench.analysis`), the decision replay report
(``llm_policies.apps.replay``) and the viewer (:mod:`maze_envs.view`) all call these functions, so a
number means the same wherever it is shown. (This module sits below the viewer and the runner so
that both can call it; :mod:`maze_envs.bench.metrics` re-exports it with the runner's tallies.)

**Decisions and what counts as play.** Each turn an agent acts, its policy makes one *decision*,
with a status (``Decision.status``, stored in the journal's decision record as ``"status"``):

``"ok"``        the policy's own choice (a decision without a record, or a record without a
                status, is the policy's own choice);
``"fallback"``  the policy could not decide and played a default action (an unusable model
                reply became STAY);
``"outage"``    the model could not be reached, and a default action was played.

Only ``"ok"`` decisions are the policy's play: every *behaviour* metric (moves tried, wall
moves, STAYs, radio messages) counts those alone, so a fallback STAY is never a STAY.

**The kind of a decision** (what the environment did with it): ``"stay"`` a STAY; ``"wall"`` a
move into a wall (Maze Escape: an interior wall or the outer brick; AGI Maze: a wall or the
monolith, ``bumped_wall`` / ``bumped_monolith``); ``"move"`` any other move the environment tried
(it moved, or, in Maze Escape, tried the exit's doorway); ``"other"`` anything else (an AGI Maze
action that is not a move, an action that was not played, an unreadable one).

**How a game ended** (:func:`game_status`): ``ok``; ``error`` (a policy raised or chose an action
the environment refused: a failure of the policy, counted as played); ``outage`` (at least one
decision was an outage: the game is not the model's play); ``stopped`` (a policy asked to stop,
e.g. a token or cost cap). Rates and means of outcomes are taken over the games played
(:func:`is_played`: ``ok`` and ``error``), with the others counted apart.

Example:
    >>> steps = [Step("move"), Step("wall"), Step("stay"), Step("stay", "fallback"),
    ...          Step("stay", "outage"), Step("move", radio_sent=True)]
    >>> moves_tried(steps), wall_moves(steps), stays(steps), radio_messages(steps)
    (3, 1, 1, 1)
    >>> wall_move_rate(wall_moves(steps), moves_tried(steps))
    0.3333333333333333
    >>> statuses = [s.status for s in steps]
    >>> decisions(statuses), fallbacks(statuses), outages(statuses)
    (6, 1, 1)
    >>> game_status(error=False, outages=1, stopped=False), is_played("outage")
    ('outage', False)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, NamedTuple, TypeVar

from maze_envs.agimaze.types import DIRECTIONS, WALL_EVENTS
from maze_envs.metrics.declaration import metric_function

__all__ = [
    "AGIMAZE_BUMPS",
    "AGIMAZE_MOVES",
    "COMPACTION_MIN_CHARS",
    "EXCLUDED",
    "PLAYED",
    "STATUSES",
    "GameStatus",
    "Kind",
    "Status",
    "Statuses",
    "Step",
    "Steps",
    "agents_out",
    "agimaze_kind",
    "agimaze_step",
    "cap_breaches",
    "decision_metrics",
    "decision_status",
    "decisions",
    "escape_kind",
    "escape_kind_of_move",
    "escape_step",
    "exit_choice",
    "fallbacks",
    "fastest_finish",
    "finish_ratio",
    "finish_ratio_censored",
    "finish_turn",
    "first_out",
    "game_status",
    "history_trims",
    "is_compaction",
    "is_exhausted",
    "is_play",
    "is_played",
    "moves_tried",
    "notebook_bytes",
    "outages",
    "position_right",
    "radio_messages",
    "radio_sent",
    "share",
    "stays",
    "stays_while_searching",
    "stop_kind",
    "success_rate_counting_excluded",
    "truncations",
    "wall_move_rate",
    "wall_moves",
]

_T = TypeVar("_T")
Status = Literal["ok", "fallback", "outage"]
Kind = Literal["move", "wall", "stay", "other"]
GameStatus = Literal["ok", "error", "outage", "stopped"]

#: Decision statuses (``maze_envs.policies.interface.Decision.status``).
STATUSES: Final[tuple[Status, ...]] = ("ok", "fallback", "outage")
#: Game statuses whose games count in rates and means of outcomes.
PLAYED: Final[frozenset[str]] = frozenset({"ok", "error"})
#: Game statuses reported apart: not the policy's play.
EXCLUDED: Final[tuple[str, ...]] = ("outage", "stopped")

#: Maze Escape move results (``maze_envs.escape.types.MOVE_RESULTS``) by kind.
_ESCAPE_KINDS: Final[Mapping[str, Kind]] = {
    "moved": "move",
    "doorway": "move",
    "bumped_interior_wall": "wall",
    "bumped_outer_brick": "wall",
    "stayed": "stay",
}
#: AGI Maze moves and the formal events of a move into a wall.
AGIMAZE_MOVES: Final = frozenset(DIRECTIONS)
AGIMAZE_BUMPS: Final = WALL_EVENTS


class Step(NamedTuple):
    """One agent's decision at one turn, as the metrics count it."""

    kind: Kind
    status: Status = "ok"
    radio_sent: bool = False


# --- one decision ---------------------------------------------------------------------------


def decision_status(record: Any) -> Status:
    """The status of a decision from its journal record: the record's ``"status"`` when it is
    one of ``ok``, ``fallback``, ``outage``; otherwise ``ok`` (no record, or a record without a
    status, is the policy's own choice).

    >>> decision_status({"status": "fallback"}), decision_status(None), decision_status({})
    ('fallback', 'ok', 'ok')
    """
    status = record.get("status") if isinstance(record, Mapping) else None
    return status if status in STATUSES else "ok"


def escape_kind(result: Any) -> Kind:
    """The kind of a Maze Escape decision from the move result the engine reported
    (``events[agent]["move"]``): ``stayed`` is a stay; ``bumped_interior_wall`` and
    ``bumped_outer_brick`` a wall move; ``moved`` and ``doorway`` a move; anything else other.

    >>> escape_kind("bumped_outer_brick"), escape_kind("doorway"), escape_kind(None)
    ('wall', 'move', 'other')
    """
    return _ESCAPE_KINDS.get(result, "other") if isinstance(result, str) else "other"


def escape_kind_of_move(move: Any, edges: Sequence[str] | None) -> Kind:
    """The kind a Maze Escape move would have on a cell with these ``edges`` (N, E, S, W edge
    kinds as the agent saw them), for moves that were never played (a replayed decision):
    ``STAY`` a stay; a move through a side that is not ``open`` a wall move; through an open side
    a move; other when the move or the edges are unknown. The engine reports exactly this for a
    played move (the exit's doorway reads ``open``), so played and replayed moves count alike.

    >>> escape_kind_of_move("N", ("interior_wall", "open", "open", "outer_brick"))
    'wall'
    >>> escape_kind_of_move("E", ("interior_wall", "open", "open", "outer_brick"))
    'move'
    """
    if move == "STAY":
        return "stay"
    if edges is None or move not in ("N", "E", "S", "W"):
        return "other"
    return "move" if edges["NESW".index(move)] == "open" else "wall"


def agimaze_kind(action: Any, events: Iterable[str], played: bool = True) -> Kind:
    """The kind of an AGI Maze decision: a move (``up``, ``down``, ``left``, ``right``) that was
    played is a wall move when its formal events hold ``bumped_wall`` or ``bumped_monolith``,
    else a move; an action that was not played (the labyrinth does not offer it, or a set
    ignored it) and every other action are other.

    >>> agimaze_kind("up", ["bumped_wall"]), agimaze_kind("up", ["moved"])
    ('wall', 'move')
    >>> agimaze_kind("start", []), agimaze_kind("up", ["bumped_wall"], played=False)
    ('other', 'other')
    """
    if not played or action not in AGIMAZE_MOVES:
        return "other"
    return "wall" if any(event in AGIMAZE_BUMPS for event in events) else "move"


def radio_sent(event: Any) -> bool:
    """Whether a Maze Escape decision's radio message was delivered (``events[agent]["radio"]
    == "sent"``; a refused or empty message is not)."""
    return isinstance(event, Mapping) and event.get("radio") == "sent"


def escape_step(result: Any, record: Any, event: Any) -> Step:
    """A journaled Maze Escape decision as the metrics count it: its kind from the move result
    (:func:`escape_kind`), its status from its decision record (:func:`decision_status`), and
    whether its radio message was delivered (:func:`radio_sent`, from the turn's events)."""
    return Step(escape_kind(result), decision_status(record), radio_sent(event))


def agimaze_step(action: Any, events: Iterable[str], played: bool, record: Any) -> Step:
    """A journaled AGI Maze decision as the metrics count it (:func:`agimaze_kind`,
    :func:`decision_status`)."""
    return Step(agimaze_kind(action, events, played), decision_status(record))


# --- counts over decisions -------------------------------------------------------------------


def _counted(items: Iterable[_T] | Mapping[_T, int]) -> Iterable[tuple[_T, int]]:
    """(item, how many times) pairs of a sequence, or of a count of each item."""
    if isinstance(items, Mapping):
        return items.items()
    return ((item, 1) for item in items)


#: Decision statuses: a sequence of them, or a count of each.
Statuses = Iterable[str] | Mapping[str, int]


@metric_function
def decisions(statuses: Statuses) -> int:
    """Decisions: every decision made (one per agent and turn it acted), whatever its status."""
    return sum(n for _, n in _counted(statuses))


@metric_function
def fallbacks(statuses: Statuses) -> int:
    """Fallbacks: decisions with status ``fallback`` (the policy could not decide)."""
    return sum(n for status, n in _counted(statuses) if status == "fallback")


@metric_function
def outages(statuses: Statuses) -> int:
    """Outages: decisions with status ``outage`` (the model could not be reached)."""
    return sum(n for status, n in _counted(statuses) if status == "outage")


def is_play(step: Step) -> bool:
    """Whether a decision is the policy's play: its status is ``ok``."""
    return step.status == "ok"


#: Decisions: a sequence of :class:`Step`, or a count of each distinct Step (a long game's
#: tally keeps counts: the same few Steps repeat turn after turn).
Steps = Iterable[Step] | Mapping[Step, int]


@metric_function
def moves_tried(steps: Steps) -> int:
    """Moves tried: decisions of the policy's play whose kind is ``move`` or ``wall`` (STAYs,
    fallbacks, outages and actions that are not moves excluded)."""
    return sum(n for step, n in _counted(steps) if is_play(step) and step.kind in ("move", "wall"))


@metric_function
def wall_moves(steps: Steps) -> int:
    """Wall moves: decisions of the policy's play that moved into a wall (kind ``wall``)."""
    return sum(n for step, n in _counted(steps) if is_play(step) and step.kind == "wall")


@metric_function
def wall_move_rate(wall_moves: int, moves_tried: int) -> float | None:
    """Wall-move rate = wall moves / moves tried (None when no move was tried). STAYs,
    fallbacks and outages are in neither count.

    >>> wall_move_rate(2, 5), wall_move_rate(0, 0)
    (0.4, None)
    """
    return wall_moves / moves_tried if moves_tried else None


@metric_function
def stays(steps: Steps) -> int:
    """STAYs: decisions of the policy's play that were STAY (a fallback STAY is not counted)."""
    return sum(n for step, n in _counted(steps) if is_play(step) and step.kind == "stay")


@metric_function
def radio_messages(steps: Steps) -> int:
    """Radio messages: decisions of the policy's play whose message was delivered."""
    return sum(n for step, n in _counted(steps) if is_play(step) and step.radio_sent)


def decision_metrics(
    steps: Sequence[Step] | Mapping[Step, int], *, escape: bool = True
) -> dict[str, Any]:
    """Every per-decision metric of ``steps`` (one agent's, or a whole team's), by column name:
    ``decisions``, ``fallbacks``, ``outages``, ``moves_tried``, ``wall_moves``,
    ``wall_move_rate``, and for Maze Escape (``escape``) ``stays`` and ``radio_messages``."""
    statuses: dict[str, int] = {}
    for step, n in _counted(steps):
        statuses[step.status] = statuses.get(step.status, 0) + n
    walls, tried = wall_moves(steps), moves_tried(steps)
    out: dict[str, Any] = {
        "decisions": decisions(statuses),
        "fallbacks": fallbacks(statuses),
        "outages": outages(statuses),
        "moves_tried": tried,
        "wall_moves": walls,
        "wall_move_rate": wall_move_rate(walls, tried),
    }
    if escape:
        out["stays"] = stays(steps)
        out["radio_messages"] = radio_messages(steps)
    return out


# --- the Maze Escape study's later questions --------------------------------------------------


def stays_while_searching(steps: Iterable[Step], searching: Iterable[bool]) -> int:
    """Turns waiting for messages (STAYs while searching): decisions of the policy's play that
    were STAY while the agent was still searching, that is had not yet stood on the exit
    (``searching[i]`` for ``steps[i]``). An agent that has been out may wait for a teammate;
    one that has not is waiting for news instead of looking.

    >>> stays_while_searching([Step("stay"), Step("stay", "fallback"), Step("stay")],
    ...                       [True, True, False])
    1
    """
    return sum(
        1
        for step, still in zip(steps, searching, strict=True)
        if still and is_play(step) and step.kind == "stay"
    )


def position_right(
    written: tuple[int, int], before: tuple[int, int], after: tuple[int, int]
) -> bool:
    """Whether a self-tracked position is right: the pair an agent wrote for itself equals its
    true position, in its frame, on the cell where it stood when it wrote the note (``before``)
    or on the cell the same turn's move took it to (``after``: a note may record the move it is
    making). The frame is the game's coordinate frame, or the agent's own (origin at its start,
    x east, y north) when the game shows no coordinates.

    >>> position_right((1, 0), (0, 0), (1, 0)), position_right((2, 0), (0, 0), (1, 0))
    (True, False)
    """
    return written in (before, after)


def share(part: int, whole: int) -> float | None:
    """A share ``part / whole`` of counted events (None when there were none): the share of
    self-tracked positions that are right, of exit choices that took an untried exit, of radio
    messages with coordinates that name their frame.

    >>> share(7, 25), share(0, 0)
    (0.28, None)
    """
    return part / whole if whole else None


#: Characters a notebook rewrite must remove to count as a compaction (about three notes of a
#: line each).
COMPACTION_MIN_CHARS: Final = 200


def is_compaction(before: str, after: str, changed: tuple[int, int]) -> bool:
    """A notebook compaction: an edit of the agent's own that removed at least
    :data:`COMPACTION_MIN_CHARS` characters of its notebook and left it shorter, i.e. rewrote
    part of its notes into less text. ``changed`` is (common prefix, common suffix) of the two
    texts (:func:`maze_envs.reading.text.common_affixes`); the removed characters are
    ``len(before) - prefix - suffix``. Only splice notebooks can be compacted by their agent: a
    rolling log takes appends alone (the lines it drops when full are the engine's doing).

    >>> is_compaction("x" * 300, "summary", (0, 0)), is_compaction("abc", "a", (1, 0))
    (True, False)
    """
    prefix, suffix = changed
    return len(before) - prefix - suffix >= COMPACTION_MIN_CHARS and len(after) < len(before)


def exit_choice(move: str, open_sides: Iterable[str], used_sides: Iterable[str]) -> bool | None:
    """Whether a move took an untried exit, when the cell offered a choice (None when not).

    A cell offers a choice when at least one of its open sides is untried (the agent has never
    moved through it, in or out) and at least one is used. The move (N, E, S or W; a move into a
    wall is no untried exit) took an untried exit when it goes through an open, untried side.

    >>> exit_choice("E", "NE", "N"), exit_choice("N", "NE", "N"), exit_choice("E", "NE", "")
    (True, False, None)
    """
    opened, used = set(open_sides), set(used_sides)
    untried = opened - used
    if not untried or not opened & used:
        return None
    return move in untried


def is_exhausted(open_sides: Iterable[str], used_sides: Iterable[str]) -> bool:
    """Whether a cell is used up for the agent: it has moved through every open side of it
    (in or out), so no untried exit is left there.

    >>> is_exhausted("NS", "SN"), is_exhausted("NS", "S")
    (True, False)
    """
    return set(open_sides) <= set(used_sides)


# --- one game --------------------------------------------------------------------------------


@metric_function
def finish_turn(success: bool, turns: int) -> int | None:
    """Finish turn: the turn of team success (the game's last turn; None for a game the team
    did not finish)."""
    return turns if success else None


@metric_function
def fastest_finish(outcome: Mapping[str, Any]) -> int:
    """Fastest possible finish: the longest of the agents' shortest paths to the exit (the
    environment's ``fastest_possible_finish``): the turn of team success were every agent to
    walk straight out."""
    return int(outcome["fastest_possible_finish"])


@metric_function
def first_out(exit_turns: Mapping[str, int | None]) -> int | None:
    """First out: the earliest turn any agent first visited the exit (None if none did)."""
    reached = [turn for turn in exit_turns.values() if turn is not None]
    return min(reached) if reached else None


@metric_function
def agents_out(exit_turns: Mapping[str, int | None]) -> int:
    """Agents out: how many agents visited the exit at least once."""
    return sum(1 for turn in exit_turns.values() if turn is not None)


@metric_function
def finish_ratio(finish_turn: int | None, fastest: int) -> float | None:
    """Finish / fastest = the team's finish turn / the fastest possible finish (the longest of
    the agents' shortest paths); None for a game the team did not finish.

    >>> finish_ratio(30, 10), finish_ratio(None, 10)
    (3.0, None)
    """
    return finish_turn / fastest if finish_turn is not None and fastest > 0 else None


@metric_function
def finish_ratio_censored(finish_turn: int | None, max_turns: int, fastest: int) -> float | None:
    """Censored finish / fastest: as :func:`finish_ratio`, with a game the team did not finish
    counted as ``max_turns`` / fastest (a lower bound of its true ratio).

    >>> finish_ratio_censored(None, 600, 20)
    30.0
    """
    if fastest <= 0:
        return None
    return (finish_turn if finish_turn is not None else max_turns) / fastest


@metric_function
def notebook_bytes(notebooks: Mapping[str, str]) -> int:
    """Notebook bytes: the UTF-8 bytes of every agent's notebook at the game's end."""
    return sum(len(text.encode("utf-8")) for text in notebooks.values())


def game_status(*, error: bool, outages: int, stopped: bool) -> GameStatus:
    """How a game ended: ``outage`` when at least one decision was an outage (an action that was
    not the model's was played, so the game is not the model's play: reported apart, and played
    again by ``--resume``); else ``error`` when a policy raised or chose an action the
    environment refused (the policy's failure: counted as played, not won); else ``stopped``
    when a policy asked to stop (a token or cost cap: reported apart); else ``ok``.

    >>> game_status(error=True, outages=0, stopped=False)
    'error'
    """
    if outages:
        return "outage"
    if error:
        return "error"
    return "stopped" if stopped else "ok"


@metric_function
def success_rate_counting_excluded(successes: int, played: int, excluded: int) -> float | None:
    """Success rate counting excluded games as failures = successes / (games played + games
    excluded): the games an outage touched or a cap stopped count as failed. Shown beside the
    rate over the games played, because the excluded games are not a random sample: long
    (failing) games are the likeliest to meet an outage or a cap, so leaving them out biases
    the rate up, and counting them as failures biases it down; the truth lies between.

    >>> success_rate_counting_excluded(6, 10, 2), success_rate_counting_excluded(0, 0, 0)
    (0.5, None)
    """
    games = played + excluded
    return successes / games if games else None


@metric_function
def history_trims(records: Iterable[Any]) -> int:
    """History trims: decisions whose prompt left out earlier steps of the history to fit the
    model's context window (the decision record's ``history_trim``): how often the model did
    not see the whole episode it was asked to remember."""
    return sum(1 for r in records if isinstance(r, Mapping) and r.get("history_trim"))


@metric_function
def cap_breaches(records: Iterable[Any]) -> int:
    """Cap breaches: replies longer than the output cap (``max_output_tokens``) that was sent
    (the decision record's ``cap_breaches``: the server ignored the cap), over every attempt."""
    return sum(
        int(r.get("cap_breaches") or 0)
        for r in records
        if isinstance(r, Mapping) and isinstance(r.get("cap_breaches"), int)
    )


@metric_function
def truncations(records: Iterable[Any]) -> int:
    """Truncations: replies cut off at the output cap before they were complete (attempts whose
    ``error_kind`` is ``truncated``), over every attempt: a cap too low for what the model
    writes."""
    return sum(
        1
        for r in records
        if isinstance(r, Mapping)
        for attempt in r.get("attempts") or ()
        if isinstance(attempt, Mapping) and attempt.get("error_kind") == "truncated"
    )


def stop_kind(stop_reason: Any) -> str | None:
    """Why a stopped game stopped, in one word, from its ``stop_reason`` (``"<agent>: <reason>"``
    or the runner's ``"run cap: ..."``): ``run cap`` (a cap of the whole run), ``cap`` (a token
    or cost cap of the game), ``context`` (a prompt that cannot fit the context window),
    ``config`` (the server rejects the output mode), ``unavailable`` (the model could not be
    reached), ``unusable`` (no usable reply in many decisions in a row), else ``other``;
    ``None`` for no reason.

    >>> stop_kind("A: context: the prompt needs 900 tokens"), stop_kind("run cap: token cap")
    ('context', 'run cap')
    >>> stop_kind("B: token cap of the game reached: 5000 tokens used, cap 5000")
    'cap'
    """
    if not stop_reason:
        return None
    text = str(stop_reason)
    if text.startswith("run cap: "):
        return "run cap"
    _, found, reason = text.partition(": ")
    reason = reason if found else text
    for prefix, kind in (("context:", "context"), ("config:", "config")):
        if reason.startswith(prefix):
            return kind
    if "cap of the run" in reason:
        return "run cap"
    if "cap of the" in reason:
        return "cap"
    if reason.startswith("model unavailable"):
        return "unavailable"
    if reason.startswith("no usable reply"):
        return "unusable"
    return "other"


def is_played(status: Any) -> bool:
    """Whether a game counts in the rates and means of outcomes (success rate, finish ratio,
    RHAE, ...): its status is ``ok`` or ``error``; ``outage`` and ``stopped`` games do not."""
    return status in PLAYED
