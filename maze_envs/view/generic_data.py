"""The data of a viewer page for a game of any other environment (CartPole, a PettingZoo env...).

``wrappers.recording`` journals foreign Gymnasium and PettingZoo environments through the generic
:class:`~maze_envs.journal.Recorder`: per turn every agent's observation, action, and events
``{"reward", "terminated", "truncated", "info"}`` made plain JSON (turn 0 holds the reset's
``info``). The library cannot rebuild such a game, so the page shows the rows as recorded and
says so: "recorded, not replayable: not verified by replay"; only the stored rows (hash chains)
are checked (:func:`maze_envs.view.verification.verify`). A game whose rows stop being
trustworthy is drawn up to its first bad turn.

The data is columnar, one list per agent and field (``obs``, ``actions``, ``rewards``,
``terminated``, ``truncated``, ``info``, other ``events``), ``None`` where an agent has no value
that turn; long arrays and texts are shortened (:func:`shorten`) so a 1,000-step game of image
observations still makes a small page.

Example:
    >>> import tempfile, pathlib
    >>> from maze_envs.journal import Recorder, Journal
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> rec = Recorder(path, env_id="Toy-v0", config={})
    >>> _ = rec.start(5, {"agent": [0.0, 1.0]}, b"0", {"agent": {"info": {}}})
    >>> step = {"reward": 1.0, "terminated": True, "truncated": False, "info": {}}
    >>> _ = rec.turn(1, {"agent": [0.5, 1.0]}, {"agent": 1}, {"agent": step}, b"1")
    >>> rec.finish({"return": 1.0, "steps": 1, "terminated": True, "truncated": False})
    >>> rec.close()
    >>> with Journal.open_readonly(path) as journal:
    ...     data = generic_game_data(journal, 1)
    >>> data["agents"], data["obs"]["agent"], data["actions"]["agent"], data["rewards"]["agent"]
    (['agent'], [[0.0, 1.0], [0.5, 1.0]], [None, 1], [None, 1.0])
    >>> data["verification"]
    'recorded, not replayable: not verified by replay (stored rows checked: 2 turns intact)'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from maze_envs.journal import GameInfo, Journal, JournalError, TurnRecord, VerifyReport
from maze_envs.reading.turns import read_turns
from maze_envs.view.decisions import decision_tables
from maze_envs.view.verification import verify

#: Lists longer than this are cut to their first :data:`KEEP_ITEMS` items and a note.
MAX_ITEMS: Final = 64
KEEP_ITEMS: Final = 16
#: Texts longer than this are cut (a note says how much was left out).
MAX_TEXT: Final = 4000
#: The event fields shown in their own rows; any other field goes to ``events``.
_KNOWN: Final = frozenset({"reward", "terminated", "truncated", "info"})
NOT_REPLAYED: Final = "recorded, not replayable: not verified by replay"


def _shape(value: Any) -> list[int]:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return shape


def shorten(value: Any, counter: list[int] | None = None) -> Any:
    """``value`` with every long list and text cut, readably (``counter[0]`` counts the cuts).

    A list of more than :data:`MAX_ITEMS` items keeps its first :data:`KEEP_ITEMS` and ends
    with a text naming how many were left out and the array's shape.

    >>> shorten(list(range(100)))[-3:]
    [14, 15, '… 84 more (100 items, shape [100])']
    >>> shorten({"grid": [[0] * 3] * 2, "name": "x" * 5000})["name"][-24:]
    '… (1000 more characters)'
    """
    if isinstance(value, str):
        if len(value) <= MAX_TEXT:
            return value
        if counter is not None:
            counter[0] += 1
        return value[:MAX_TEXT] + f"… ({len(value) - MAX_TEXT} more characters)"
    if isinstance(value, list):
        if len(value) <= MAX_ITEMS:
            return [shorten(v, counter) for v in value]
        if counter is not None:
            counter[0] += 1
        head = [shorten(v, counter) for v in value[:KEEP_ITEMS]]
        more = len(value) - KEEP_ITEMS
        return [*head, f"… {more} more ({len(value)} items, shape {_shape(value)})"]
    if isinstance(value, dict):
        return {k: shorten(v, counter) for k, v in value.items()}
    return value


def _agents(turns: list[TurnRecord]) -> list[str]:
    """Every agent named in the game, in order of first appearance."""
    seen: dict[str, None] = {}
    for record in turns:
        for part in (record.observations, record.actions, record.events):
            for agent in part:
                seen.setdefault(str(agent), None)
    return list(seen)


def _outcome_text(info: GameInfo, steps: int) -> str:
    outcome = info.outcome
    if outcome is None:
        return "unfinished (no outcome recorded)"
    if outcome.get("aborted"):
        text = "abandoned before its end"
    elif outcome.get("terminated"):
        text = "terminated"
    elif outcome.get("truncated"):
        text = "truncated"
    else:
        text = "finished"
    if isinstance(outcome.get("return"), int | float):
        text += f", return {outcome['return']:g}"
    elif isinstance(outcome.get("returns"), Mapping):
        text += ", returns " + ", ".join(
            f"{a} {v:g}" if isinstance(v, int | float) else f"{a} {v}"
            for a, v in outcome["returns"].items()
        )
    return text + f", {outcome.get('steps', steps)} steps"


def _verdict(report: Any) -> str:
    if report.ok:
        checked = f"{report.turns_verified} turns intact"
    elif report.status == "unfinished":
        checked = f"{report.turns_verified} turns intact, the game has no outcome"
    else:
        checked = report.describe()
    return f"{NOT_REPLAYED} (stored rows checked: {checked})"


def page_header(kind: str, game_id: int, info: GameInfo) -> dict[str, Any]:
    """The first entries of every game's page data: the page ``kind`` and the game as the
    journal holds it (id, env id, seed, configuration, what the runner attached, outcome)."""
    return {
        "kind": kind,
        "game": game_id,
        "env_id": info.env_id,
        "seed": info.seed,
        "config": info.config,
        "meta": info.meta,
        "outcome": info.outcome,
    }


def generic_game_data(
    journal: Journal, game_id: int, report: VerifyReport | None = None
) -> dict[str, Any]:
    """Everything the page of a game of any other environment shows, as JSON-ready data.
    ``report``: the game's verification when already made on this journal (else it is
    verified here)."""
    info = journal.game(game_id)
    turns, problem = read_turns(journal, game_id)
    if report is None:  # a report of the same journal may be given (the runner's)
        report = verify(journal, game_id, info)
    if report.problem is not None and report.problem.turn < len(turns):
        turns = turns[: report.problem.turn]  # draw only the turns whose rows are intact
        problem = f"turn {report.problem.turn} ({report.problem.kind})"
    if not turns:
        raise JournalError(f"game {game_id} holds no readable turns")
    agents = _agents(turns)
    cuts = [0]
    columns: dict[str, dict[str, list[Any]]] = {
        name: {a: [] for a in agents}
        for name in ("obs", "actions", "rewards", "terminated", "truncated", "info", "events")
    }
    for record in turns:
        for agent in agents:
            events = record.events.get(agent)
            events = events if isinstance(events, Mapping) else {}
            item_info = events.get("info")
            extra = {k: v for k, v in events.items() if k not in _KNOWN}
            columns["obs"][agent].append(shorten(record.observations.get(agent), cuts))
            columns["actions"][agent].append(shorten(record.actions.get(agent), cuts))
            columns["rewards"][agent].append(events.get("reward"))
            for flag in ("terminated", "truncated"):
                value = events.get(flag)
                columns[flag][agent].append(None if value is None else int(bool(value)))
            columns["info"][agent].append(shorten(item_info, cuts) if item_info else None)
            columns["events"][agent].append(shorten(extra, cuts) if extra else None)
    decisions, blobs = decision_tables(journal, turns, agents)
    steps = turns[-1].turn
    summary = [
        info.env_id,
        f"game {info.id}",
        f"seed {info.seed}",
        f"{len(turns)} turns recorded",
        _outcome_text(info, steps),
        f"{len(agents)} agent{'s' if len(agents) != 1 else ''}",
        f"library {info.library_version}",
        info.created,
    ]
    if cuts[0]:
        summary.append(f"{cuts[0]} long arrays or texts shortened on the page")
    return {
        **page_header("generic", game_id, info),
        "summary": summary,
        "verification": _verdict(report),
        "verified": False,  # never replayed: the header must not show it as verified
        "rows_intact": report.ok,
        "problem": problem,
        "n": len(turns),
        "turns": [record.turn for record in turns],
        "agents": agents,
        "shortened": cuts[0],
        **columns,
        "decisions": decisions,
        "blobs": blobs,
    }
