"""The logic of the AGI Maze HTTP API, independent of the web framework.

:class:`AgiMazeService` answers each endpoint with a :data:`~maze_envs.agimaze.api.sessions.Reply`
(HTTP status, JSON body); :mod:`maze_envs.agimaze.api.server` puts it behind Starlette. The rules
it applies where the public service is silent are listed in the server's module docstring.

Sessions: a session is *finished* once its game is won or its step budget is spent (the
labyrinth's reference ``max_steps``, which the public harnesses treat as hard; a labyrinth
without one finishes only when won). The server still answers steps of a finished session (it
does not enforce ``max_steps``), but when a start finds ``max_sessions`` live sessions the
least recently used finished one is evicted. It leaves a :class:`RetiredGame` (its last
:data:`RETIRED_REPLIES` replies and a snapshot), so a resend of its final step with the same
``seq`` still gets the stored reply. With no finished session left, the least recently used
unfinished one is evicted once it has gone ``idle_seconds`` (1 s by default) without a request:
sessions a client stopped playing never fill the server (:mod:`~maze_envs.agimaze.api.sessions`).
A request for a session that is gone gets 404 ``unknown_session`` saying what happened, with
``reason`` ``evicted_idle``, ``expired``, ``evicted_finished`` or ``unknown``.

Memory: a labyrinth played by many sessions is loaded and compiled once (:class:`Board`, kept in
a bounded cache of :data:`BOARD_CACHE_SIZE`), and each session keeps only its engine state, a
lock and its seq replies (at most 64, as JSON bytes). The bound per session and the ceiling of
the default limits are measured by ``benchmarks/agimaze_server_bench.py`` (README, "HTTP API").

Example:
    >>> import json
    >>> service = AgiMazeService()
    >>> status, start = service.start(json.dumps(
    ...     {"path": "TRAINING/S0-keys/STAGE-01/0005.json", "agent": "doc"}).encode())
    >>> status, start["text"], start["actions"]
    (200, 'Game has started.', ['up', 'down', 'left', 'right'])
    >>> request = json.dumps({"id": start["id"], "action": "up", "seq": 1}).encode()
    >>> service.step(request)[0], service.step(request) == service.step(request)
    (200, True)
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from http import HTTPStatus
from pathlib import Path
from typing import Any, Final, TypeVar

import numpy as np
import orjson
from pydantic import BaseModel, ValidationError

from maze_envs.agimaze.api import protocol
from maze_envs.agimaze.api.sessions import (
    IDLE_SECONDS,
    Reply,
    SeqConflictError,
    SeqReplay,
    SessionLimitError,
    SessionStore,
    StaleSeqError,
    UnknownSessionError,
)
from maze_envs.agimaze.backends import reference_max_steps
from maze_envs.agimaze.compiled import CompiledLabyrinth
from maze_envs.agimaze.engine import AgiMazeEngine, compile_labyrinth
from maze_envs.agimaze.formal import inventory
from maze_envs.agimaze.mapfmt import render_map
from maze_envs.agimaze.model_text import API_DESCRIPTION
from maze_envs.agimaze.packs import PackPathError, pack_root, resolve_pack_path
from maze_envs.agimaze.types import Bundle

ModelT = TypeVar("ModelT", bound=BaseModel)
#: pack path, rng (None: fresh entropy) -> (pack-relative name, bundle)
Resolver = Callable[[str, np.random.Generator | None], tuple[str, Bundle]]
#: Distinct labyrinths kept compiled (each a few KiB to a few tens of KiB).
BOARD_CACHE_SIZE: Final = 1024
#: Replies an evicted finished session keeps for resends (its final step and the one before).
RETIRED_REPLIES: Final = 2


@dataclass(eq=False)
class Board:
    """One labyrinth as the server plays it, shared by every session of it (never mutated)."""

    name: str
    bundle: Bundle
    compiled: CompiledLabyrinth
    max_steps: int | None
    #: public map text by player cell (a hidden map only changes with the cell); filled lazily,
    #: and a racing fill writes the same text, so no lock is needed
    public_maps: dict[tuple[int, int], str] = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class GameSession:
    """One game on the server: a shared board, its own engine state and seq replies."""

    board: Board
    engine: AgiMazeEngine
    lock: threading.Lock = field(default_factory=threading.Lock)
    replay: SeqReplay = field(default_factory=SeqReplay)
    #: set when evicted: a request that got this session just before answers from the stand-in
    retired: RetiredGame | None = None

    @property
    def finished(self) -> bool:
        """Won, or its step budget (the reference ``max_steps``) spent."""
        budget = self.board.max_steps
        return self.engine.done or (budget is not None and self.engine.steps >= budget)

    def map_text(self) -> str:
        board, state = self.board, self.engine.state
        lab = board.bundle.labyrinth
        if lab.open_map:
            return render_map(lab, state)
        shown = board.public_maps.get(state.pos)
        if shown is None:
            shown = board.public_maps[state.pos] = render_map(lab, state, reveal=False)
        return shown

    def snapshot(self, session_id: str) -> dict[str, Any]:
        """The ``GET /api/session`` body (the caller holds the lock)."""
        engine = self.engine
        return {
            "id": session_id,
            "path": self.board.name,
            "actions": engine.actions,
            "map": self.map_text(),
            "inventory": inventory(engine.state),
            "steps": engine.steps,
            "done": engine.done,
            "max_steps": self.board.max_steps,
        }

    def retire(self) -> RetiredGame:
        """The stand-in kept once this finished session is evicted (takes the lock)."""
        with self.lock:
            self.retired = RetiredGame(
                won=self.engine.done,
                steps=self.engine.steps,
                max_steps=self.board.max_steps,
                snapshot=bytes(memoryview(orjson.dumps(self.snapshot("")))),  # no 4 KiB buffer
                replay=self.replay.tail(RETIRED_REPLIES),
                lock=self.lock,  # one lock for both: a racing request sees one replay
            )
            return self.retired


@dataclass(eq=False, slots=True)
class RetiredGame:
    """What an evicted finished session keeps: its last replies (for resends) and a snapshot."""

    won: bool
    steps: int
    max_steps: int | None
    #: the snapshot body as JSON bytes (with an empty id)
    snapshot: bytes
    replay: SeqReplay
    lock: threading.Lock

    def refuse_new_step(self) -> Reply:
        """The answer to a new ``seq``: the game is over and only resends are answered."""
        why = "was won" if self.won else f"spent its step budget ({self.steps} of {self.max_steps})"
        return error(
            "game_over",
            f"this session's game is over: it {why} and the session was evicted to make room "
            f"for new ones, keeping only its last {RETIRED_REPLIES} replies for resends with "
            "their seq; start a new session",
        )


def _retire(session: GameSession | RetiredGame) -> GameSession | RetiredGame:
    return session.retire() if isinstance(session, GameSession) else session


def root_resolver(root: str | Path) -> Resolver:
    """A resolver over the bundle tree at ``root`` (``--pack-root``), as safe as the shipped one.

    The same :func:`~maze_envs.agimaze.packs.resolve_pack_path` with another root; raises
    :class:`~maze_envs.agimaze.packs.PackPathError` (a ValueError) when ``root`` is not a
    directory.
    """
    base = pack_root(Path(root))

    def resolve(path: str, rng: np.random.Generator | None) -> tuple[str, Bundle]:
        return resolve_pack_path(path, rng, root=base)

    return resolve


#: Replies carry plain ints, as on the wire (the names are http.HTTPStatus).
_OK: Final = int(HTTPStatus.OK)


def error(code: str, detail: str) -> Reply:
    """The reply of error ``code`` (its status from :data:`~.protocol.ERROR_STATUS`)."""
    return int(protocol.ERROR_STATUS[code]), {"error": code, "detail": detail}


def _unknown(exc: UnknownSessionError) -> Reply:
    """The 404 of a session that is gone or never was: what happened, in ``detail`` and as a
    code in ``reason`` (``evicted_idle``, ``expired``, ``evicted_finished``, ``unknown``)."""
    status, body = error("unknown_session", str(exc))
    body["reason"] = exc.reason
    return status, body


def _validation_detail(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}" for err in exc.errors()
    )


class AgiMazeService:
    """The API's logic: each method takes the raw request and returns a Reply.

    ``start`` reads pack files (through ``resolver``); the web layer runs it off its event
    loop. The others only touch memory.
    """

    def __init__(
        self,
        resolver: Resolver = resolve_pack_path,
        max_sessions: int = 1000,
        ttl_seconds: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        idle_seconds: float = IDLE_SECONDS,
    ) -> None:
        self.resolver = resolver
        self.sessions: SessionStore[GameSession | RetiredGame] = SessionStore(
            max_sessions=max_sessions,
            ttl_seconds=ttl_seconds,
            clock=clock,
            retire=_retire,
            idle_seconds=idle_seconds,
        )
        self._boards: OrderedDict[str, Board] = OrderedDict()
        self._boards_lock = threading.Lock()

    def description(self) -> Reply:
        return _OK, {"description": API_DESCRIPTION}

    def start(self, raw: bytes) -> Reply:
        parsed = self._parse(raw, protocol.StartRequest)
        if isinstance(parsed, tuple):
            return parsed
        request = parsed
        rng = np.random.default_rng(request.seed)  # seed None: fresh OS entropy
        try:
            name, bundle = self.resolver(request.path, rng)
        except PackPathError as exc:
            return error("bad_path", str(exc))
        board = self._board(name, bundle)
        lab = bundle.labyrinth
        session = GameSession(board, AgiMazeEngine(board.compiled))
        start = session.engine.reset()
        try:
            session_id = self.sessions.add(session)
        except SessionLimitError as exc:
            status, body = error("server_full", str(exc))
            body["retry_after"] = max(1, math.ceil(exc.retry_after))  # whole seconds (header)
            body["unfinished"] = exc.unfinished
            return status, body
        body = {
            "id": session_id,
            "actions": list(lab.actions),
            "task_meta": {
                "max_steps": board.max_steps,
                "board": {"n": lab.rows, "m": lab.cols},
                "start": {"row": lab.start[0], "col": lab.start[1]},
            },
            "text": start.text,
            "formal": start.formal,
            "map": session.map_text(),
            "inventory": start.inventory,
            "info": {
                "path": name,
                "rivers": len(lab.rivers),
                "pit_cycles": len(lab.pits),
                "pits_per_cycle": [len(cycle.cells) for cycle in lab.pits],
                "exit_key": lab.exit_key is not None,
            },
        }
        return _OK, body

    def step(self, raw: bytes) -> Reply:
        parsed = self._parse(raw, protocol.StepRequest)
        if isinstance(parsed, tuple):
            return parsed
        request = parsed
        try:
            session = self.sessions.get(request.id)
        except UnknownSessionError as exc:
            return _unknown(exc)
        with session.lock:
            current: GameSession | RetiredGame = session
            if isinstance(session, GameSession) and session.retired is not None:
                current = session.retired  # evicted since we got it
            if isinstance(current, RetiredGame):
                compute: Callable[[], Reply] = current.refuse_new_step
                finished_before = True
            else:
                compute = partial(self._play, current, request)
                finished_before = current.finished
            try:
                reply = current.replay.handle(request.seq, request.action, compute)
            except StaleSeqError as exc:
                return error("stale_seq", str(exc))
            except SeqConflictError as exc:
                return error("seq_conflict", str(exc))
            finished_now = isinstance(current, GameSession) and current.finished
        if finished_now and not finished_before:  # outside the session's lock (lock order)
            self.sessions.finish(request.id)
        return reply

    def snapshot(self, session_id: str | None) -> Reply:
        if not session_id:
            return error("bad_request", "query parameter 'id' is required: /api/session?id=...")
        if len(session_id) > protocol.MAX_SESSION_ID_LENGTH:
            limit = protocol.MAX_SESSION_ID_LENGTH
            return error("bad_request", f"query parameter 'id' is longer than {limit} characters")
        try:
            session = self.sessions.get(session_id)
        except UnknownSessionError as exc:
            return _unknown(exc)
        if isinstance(session, RetiredGame):
            return _OK, orjson.loads(session.snapshot) | {"id": session_id}
        with session.lock:
            return _OK, session.snapshot(session_id)

    def _board(self, name: str, bundle: Bundle) -> Board:
        """The shared board of ``name`` (rebuilt when the bundle on disk changed)."""
        with self._boards_lock:
            board = self._boards.get(name)
            if board is not None and board.bundle == bundle:
                self._boards.move_to_end(name)
                return board
        compiled = compile_labyrinth(bundle.labyrinth)
        board = Board(name, bundle, compiled, reference_max_steps(bundle))
        with self._boards_lock:
            self._boards[name] = board
            while len(self._boards) > BOARD_CACHE_SIZE:
                self._boards.popitem(last=False)
        return board

    @staticmethod
    def _play(session: GameSession, request: protocol.StepRequest) -> Reply:
        engine = session.engine
        if engine.done:
            return error(
                "game_over",
                "this session's game is won and over (done=true); start a new session",
            )
        if request.action not in engine.compiled.ops:
            allowed = engine.actions
            return int(HTTPStatus.BAD_REQUEST), {
                "error": "bad_action",
                "action": request.action,
                "allowed": allowed,
            }
        result = engine.step(request.action)
        return _OK, {
            "text": result.text,
            "done": result.done,
            "formal": result.formal,
            "inventory": result.inventory,
            "events": list(result.events),
            "map": session.map_text(),
        }

    @staticmethod
    def _parse(raw: bytes, model: type[ModelT]) -> ModelT | Reply:
        if len(raw) > protocol.MAX_BODY_BYTES:
            limit = protocol.MAX_BODY_BYTES
            return error("body_too_large", f"request body over {limit} bytes; at most {limit}")
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # bad UTF-8 or JSON, huge ints, deep nesting
            return error("bad_request", f"request body is not valid JSON: {exc}")
        if not isinstance(data, dict):
            return error("bad_request", "request body must be a JSON object")
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            return error("bad_request", _validation_detail(exc))
