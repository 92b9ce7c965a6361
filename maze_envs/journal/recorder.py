"""The :class:`Recorder`: how any environment writes its games to a journal.

An environment given ``journal=`` (a path or a :class:`~maze_envs.journal.Journal`) holds one
Recorder as ``env.recorder`` and calls it at the points of its game loop; it knows nothing of
environments (observations, actions and events are mappings, the state digest comes from the
caller), so a wrapper can journal a foreign environment the same way.

* :meth:`Recorder.set_game_meta` — what a runner attaches to the next game (run key, policy
  specs, harness settings); used once, by the next :meth:`~Recorder.start`.
* :meth:`Recorder.start` at reset: a new game and its turn 0.
* :meth:`Recorder.note` — a policy's per-decision record for one agent, attached to the next
  recorded turn (``turns.decisions``).
* :meth:`Recorder.turn` after each step; :meth:`Recorder.finish` at the game's end;
  :meth:`Recorder.abort` for a game abandoned before its end (reset mid-game, close).
* :meth:`Recorder.flush` (or ``settle``) commits the turns the journal holds back.

When turns reach the file. A journal opened from a path uses ``durability="batch"`` (group
commit, see :class:`~maze_envs.journal.Journal`): turns are committed 64 at a time or every
0.2 s of play, and always at :meth:`~Recorder.finish`, :meth:`~Recorder.abort` (so at every
reset and close) and :meth:`~Recorder.flush`. So readers of a finished game see every turn,
and a process killed mid-game loses at most the last uncommitted batch (the game then verifies
as unfinished). For every turn committed before ``env.step`` returns, give the environment
``journal=Journal(path, durability="turn")``.

Honesty when the journal fails. The first failed write (the disk is full, another connection
holds the write lock past the busy wait, the file was removed...) raises
:class:`~maze_envs.journal.JournalError` from the call that made it; with group commit that is
the call that committed the batch, which may be a later :meth:`~Recorder.turn` (so a later
``env.step``) than the turns that were lost, or :meth:`~Recorder.finish`/:meth:`~Recorder.abort`
(a step that ends the game, a ``reset``, ``close``) or :meth:`~Recorder.flush`. Turns the
environment had already returned to its caller may then be missing from the file. The game is
no longer recorded: the Recorder stores it as aborted with an outcome that says both what the
file holds and what was played::

    {"aborted": true, "turns": <last stored turn>, "turns_played": <last turn returned>,
     "journal_error": "..."}

``turns_played`` is the last turn the environment returned to its caller: the last turn whose
:meth:`~Recorder.turn` (or :meth:`~Recorder.start`, for turn 0) returned, unless the
:meth:`~Recorder.finish` that follows it in the same step failed (that step raises, so its turn
is never returned). ``maze-envs verify`` fails a game whose ``turns_played`` is past its last
stored turn, naming the turns played but never stored; an abandoned game verifies only when
nothing it returned is missing. When even the outcome cannot be written (the lock is still
held), the Recorder writes it at its next chance (:meth:`~Recorder.start`,
:meth:`~Recorder.flush`, :meth:`~Recorder.close`); until then the game has no outcome and
verify reports it unfinished. :meth:`~Recorder.check` (which the environments call before
applying a step) and :meth:`~Recorder.turn` raise until the next :meth:`~Recorder.start`.
Outcomes always get ``turns`` = the last stored turn; a different count the environment claimed
is kept as ``turns_played`` (so a claim past the stored turns fails verification too).

Example:
    >>> import tempfile, pathlib
    >>> from maze_envs.journal import Journal
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "games.sqlite"
    >>> recorder = Recorder(path, env_id="toy-v0", config={"size": 3})
    >>> recorder.set_game_meta({"run_key": "toy/seed=1"})
    >>> game = recorder.start(1, {"A": [0, 0]}, b"start")
    >>> recorder.note("A", {"reply": "go east"})
    >>> _ = recorder.turn(1, {"A": [1, 0]}, {"A": "E"}, {"A": "moved"}, b"moved")
    >>> recorder.finish({"success": True})
    >>> recorder.close()
    >>> with Journal(path, readonly=True) as journal:
    ...     info, turns = journal.game(game), list(journal.turns(game))
    >>> info.meta, info.outcome, turns[1].decisions
    ({'run_key': 'toy/seed=1'}, {'success': True, 'turns': 1}, {'A': {'reply': 'go east'}})
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Protocol

from maze_envs.journal.delta import Hint
from maze_envs.journal.format import JournalError
from maze_envs.journal.store import Journal


class RecordingTarget(Protocol):
    """What a Recorder writes to: a :class:`Journal`, or a replayer's capture of one."""

    def start_game(
        self,
        *,
        env_id: str,
        config: Mapping[str, Any],
        seed: int | None,
        library_version: str,
        generator: Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> int: ...

    def record_turn(
        self,
        game_id: int,
        turn: int,
        *,
        observations: Mapping[str, Any],
        actions: Mapping[str, Any],
        events: Mapping[str, Any],
        state_digest: bytes,
        decisions: Mapping[str, Any] | None = None,
        changed: Hint | None = None,
    ) -> str: ...

    def finish_game(self, game_id: int, outcome: Mapping[str, Any]) -> None: ...

    def committed_turn(self, game_id: int) -> int | None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


@functools.cache  # a replay builds one Recorder per game: look the version up once
def _library_version() -> str:
    try:
        return version("maze-envs")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0.0.0+unknown"


class Recorder:
    """Writes one environment's games to a journal (see the module docstring).

    ``journal`` is a path (the Recorder opens the journal and :meth:`close` closes it) or an
    open journal (left open). ``config`` and ``generator`` are what a replay needs to rebuild the
    environment, stored with every game.
    """

    def __init__(
        self,
        journal: str | os.PathLike[str] | RecordingTarget,
        *,
        env_id: str,
        config: Mapping[str, Any],
        generator: Mapping[str, Any] | None = None,
        library_version: str | None = None,
    ) -> None:
        self._owned = isinstance(journal, str | os.PathLike)
        self.journal: RecordingTarget = (
            Journal(journal) if isinstance(journal, str | os.PathLike) else journal
        )
        self.env_id = env_id
        self.config = dict(config)
        self.generator = None if generator is None else dict(generator)
        self.library_version = library_version or _library_version()
        #: The game being recorded; None before the first start and once it has an outcome.
        self.game_id: int | None = None
        #: The last game started (kept after it is finished).
        self.last_game_id: int | None = None
        #: The last turn of the current game handed to the journal (None: not even turn 0);
        #: with group commit the last few may not be committed yet.
        self.last_turn: int | None = None
        #: Why the current game is no longer recorded, once a write failed.
        self.failure: str | None = None
        # The outcome of a game a failed write stopped, when even it could not be written yet.
        self._unwritten: tuple[int, dict[str, Any]] | None = None
        self._meta: dict[str, Any] | None = None
        self._notes: dict[str, Any] = {}

    # -- the game loop ---------------------------------------------------------------------

    def set_game_meta(self, meta: Mapping[str, Any] | None) -> None:
        """Attach ``meta`` to the next game started (used once; None clears it)."""
        self._meta = None if meta is None else dict(meta)

    def start(
        self,
        seed: int | None,
        observations: Mapping[str, Any],
        state_digest: bytes,
        events: Mapping[str, Any] | None = None,
    ) -> int:
        """Start a new game with its turn 0 (the reset state, with ``events`` if any).

        Returns the game's id. A game still being recorded is first stored as aborted.
        """
        if self.game_id is not None:
            self.abort({})
        self._write_stopped_outcome()
        self.failure = None
        self.last_turn = None
        self._notes = {}
        meta, self._meta = self._meta, None
        try:
            game_id = self.journal.start_game(
                env_id=self.env_id,
                config=self.config,
                seed=seed,
                library_version=self.library_version,
                generator=self.generator,
                meta=meta,
            )
        except JournalError as exc:
            self.failure = f"the game could not be started: {exc}"
            raise
        self.game_id = self.last_game_id = game_id
        self._record(
            0, observations=observations, actions={}, events=events or {}, state_digest=state_digest
        )
        return game_id

    def note(self, agent: str, record: Any) -> None:
        """Attach ``record`` (a policy's per-decision record) to ``agent`` in the next turn.

        A second note for the same agent before that turn replaces the first.
        """
        self._notes[agent] = record

    def check(self) -> None:
        """Raise :class:`JournalError` when the current game can no longer be recorded."""
        if self.failure is not None:
            raise JournalError(
                f"game {self.last_game_id} is no longer being recorded ({self.failure}); "
                "call reset() to start a new game"
            )

    def turn(
        self,
        turn: int,
        observations: Mapping[str, Any],
        actions: Mapping[str, Any],
        events: Mapping[str, Any],
        state_digest: bytes,
        changed: Hint | None = None,
    ) -> str:
        """Store one turn with the notes taken since the last one; return its state hash.

        ``changed``: the environment's hint of which keys of each agent's observation may have
        changed since the last turn (``{agent: keys}``; see :mod:`maze_envs.journal.delta`).
        """
        self.check()
        if self.game_id is None:
            raise JournalError("no game is being recorded: start() comes first")
        decisions, self._notes = self._notes, {}
        return self._record(
            turn,
            observations=observations,
            actions=actions,
            events=events,
            state_digest=state_digest,
            decisions=decisions,
            changed=changed,
        )

    @property
    def next_turn(self) -> int:
        """The number of the next turn to record."""
        return 0 if self.last_turn is None else self.last_turn + 1

    def flush(self) -> None:
        """Commit the turns the journal still holds back (a failure stops the game, raising)."""
        self._write_stopped_outcome()
        if self.game_id is None:
            with contextlib.suppress(JournalError):  # turns of another game: its recorder's
                self.journal.flush()
            return
        try:
            self.journal.flush()
        except JournalError as exc:
            self._stop_recording(exc, self.last_turn)  # every turn recorded was returned
            raise

    def settle(self) -> None:
        """:meth:`flush` (the name runners use)."""
        self.flush()

    def finish(self, outcome: Mapping[str, Any]) -> None:
        """Store the game's outcome (its ``turns`` set to the last stored turn).

        Called by the step that recorded the game's last turn. The turns still pending are
        committed first; when that fails, the game is stored as aborted with only the turns in
        the file (that step raises, so its turn counts as not returned), and
        :class:`JournalError` is raised.
        """
        self._end(outcome, ending_step=True)

    def abort(self, outcome: Mapping[str, Any]) -> None:
        """Store the outcome of a game abandoned before its end (``"aborted": true``).

        Called between steps (``reset``, ``close``, a runner giving up), so every turn recorded
        was returned to the caller; a failure stores the game as :meth:`finish` does.
        """
        self._end({**outcome, "aborted": True}, ending_step=False)

    def _end(self, outcome: Mapping[str, Any], *, ending_step: bool) -> None:
        if self.game_id is None:
            return  # nothing is being recorded (or the failure already stored the outcome)
        game_id = self.game_id
        last = -1 if self.last_turn is None else self.last_turn
        returned = last - 1 if ending_step else last
        try:
            self.journal.flush()
        except JournalError as exc:
            self._stop_recording(exc, returned)
            raise
        honest = dict(outcome)
        claimed = honest.get("turns")
        if claimed is not None and claimed != last:
            honest["turns_played"] = claimed
        honest["turns"] = last
        try:
            self.journal.finish_game(game_id, honest)
        except JournalError as exc:
            self._stop_recording(exc, returned)  # stored as aborted with what the file holds
            self.failure = f"its outcome could not be stored: {exc}"
            raise
        self.game_id = None

    def close(self) -> None:
        """Abort a game still being recorded; close the journal if this Recorder opened it."""
        try:
            if self.game_id is not None:
                self.abort({})
            self._write_stopped_outcome()
        finally:
            if self._owned:
                self.journal.close()

    # -- internals -------------------------------------------------------------------------

    def _record(self, turn: int, **parts: Any) -> str:
        """Hand the journal one turn (``parts``: :meth:`~RecordingTarget.record_turn`'s
        keywords); a failure stops the recording of the game."""
        assert self.game_id is not None
        try:
            state_hash = self.journal.record_turn(self.game_id, turn, **parts)
        except JournalError as exc:
            # this turn is not returned (the step or reset raises); the one before it was
            self._stop_recording(exc, self.last_turn)
            raise
        self.last_turn = turn
        return state_hash

    def _stop_recording(self, error: JournalError, returned: int | None) -> None:
        """After a failed write: store the game as aborted, with what the file holds and what
        was played (``returned``: the last turn the environment returned to its caller)."""
        game_id, self.game_id = self.game_id, None
        self.failure = f"the journal failed: {error}"
        assert game_id is not None
        self.last_turn = self.journal.committed_turn(game_id)  # what the file holds
        outcome = {
            "aborted": True,
            "turns": -1 if self.last_turn is None else self.last_turn,
            "turns_played": -1 if returned is None else returned,
            "journal_error": str(error),
        }
        self._unwritten = (game_id, outcome)
        self._write_stopped_outcome()

    def _write_stopped_outcome(self) -> None:
        """Write the outcome of a game a failed write stopped, if it is still unwritten.

        While it cannot be written (the lock is still held, the disk still full), the game has
        no outcome and verifies as unfinished; this is retried at the next start, flush and
        close.
        """
        if self._unwritten is None:
            return
        game_id, outcome = self._unwritten
        with contextlib.suppress(JournalError):
            self.journal.finish_game(game_id, outcome)
            self._unwritten = None
