"""The logic of the AGI Maze HTTP API, independent of the web framework.

:class:`AgiMazeService` answers each endpoint with a :data:`~maze_envs.agimaze.sessions.Reply`
(HTTP status, JSON body); :mod:`maze_envs.agimaze.server` puts it behind Starlette. The rules
it applies where the public service is silent are listed in the server's module docstring.

Memory: a labyrinth played by many sessions is loaded and compiled once (:class:`Board`, kept in
a bounded cache), and each session keeps only its engine state, a lock and its seq replies.

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
from pathlib import Path
from typing import Final, TypeVar

import numpy as np
from pydantic import BaseModel, ValidationError

from maze_envs.agimaze import protocol
from maze_envs.agimaze.backends import reference_max_steps
from maze_envs.agimaze.compiled import CompiledLabyrinth
from maze_envs.agimaze.engine import AgiMazeEngine, compile_labyrinth
from maze_envs.agimaze.formal import inventory
from maze_envs.agimaze.mapfmt import render_map
from maze_envs.agimaze.packs import PackPathError, pack_root, resolve_pack_path
from maze_envs.agimaze.sessions import (
    Reply,
    SeqConflictError,
    SeqReplay,
    SessionLimitError,
    SessionStore,
    StaleSeqError,
    UnknownSessionError,
)
from maze_envs.agimaze.types import Bundle

ModelT = TypeVar("ModelT", bound=BaseModel)
#: pack path, rng (None: fresh entropy) -> (pack-relative name, bundle)
Resolver = Callable[[str, np.random.Generator | None], tuple[str, Bundle]]
#: Distinct labyrinths kept compiled (each a few KiB to a few tens of KiB).
BOARD_CACHE_SIZE: Final = 1024


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

    def map_text(self) -> str:
        board, state = self.board, self.engine.state
        lab = board.bundle.labyrinth
        if lab.open_map:
            return render_map(lab, state)
        shown = board.public_maps.get(state.pos)
        if shown is None:
            shown = board.public_maps[state.pos] = render_map(lab, state, reveal=False)
        return shown


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


def error(code: str, detail: str) -> Reply:
    """The reply of error ``code`` (its status from :data:`~.protocol.ERROR_STATUS`)."""
    return protocol.ERROR_STATUS[code], {"error": code, "detail": detail}


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
    ) -> None:
        self.resolver = resolver
        self.sessions: SessionStore[GameSession] = SessionStore(
            max_sessions=max_sessions, ttl_seconds=ttl_seconds, clock=clock
        )
        self._boards: OrderedDict[str, Board] = OrderedDict()
        self._boards_lock = threading.Lock()

    def description(self) -> Reply:
        return 200, {"description": protocol.API_DESCRIPTION}

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
            body["retry_after"] = max(1, math.ceil(exc.retry_after))
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
        return 200, body

    def step(self, raw: bytes) -> Reply:
        parsed = self._parse(raw, protocol.StepRequest)
        if isinstance(parsed, tuple):
            return parsed
        request = parsed
        try:
            session = self.sessions.get(request.id)
        except UnknownSessionError as exc:
            return error("unknown_session", str(exc))
        with session.lock:
            try:
                return session.replay.handle(
                    request.seq, request.action, lambda: self._play(session, request)
                )
            except StaleSeqError as exc:
                return error("stale_seq", str(exc))
            except SeqConflictError as exc:
                return error("seq_conflict", str(exc))

    def snapshot(self, session_id: str | None) -> Reply:
        if not session_id:
            return error("bad_request", "query parameter 'id' is required: /api/session?id=...")
        if len(session_id) > protocol.MAX_SESSION_ID_LENGTH:
            limit = protocol.MAX_SESSION_ID_LENGTH
            return error("bad_request", f"query parameter 'id' is longer than {limit} characters")
        try:
            session = self.sessions.get(session_id)
        except UnknownSessionError as exc:
            return error("unknown_session", str(exc))
        with session.lock:
            engine = session.engine
            return 200, {
                "id": session_id,
                "path": session.board.name,
                "actions": engine.actions,
                "map": session.map_text(),
                "inventory": inventory(engine.state),
                "steps": engine.steps,
                "done": engine.done,
                "max_steps": session.board.max_steps,
            }

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
            return 400, {"error": "bad_action", "action": request.action, "allowed": allowed}
        result = engine.step(request.action)
        return 200, {
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
