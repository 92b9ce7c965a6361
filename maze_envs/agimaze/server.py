"""``maze-envs agimaze serve``: the public AGI Maze HTTP API over the embedded engine and packs.

Any agent written for the public API (see :mod:`maze_envs.agimaze.protocol`) runs offline
against it. Endpoints: ``GET /api/description``, ``POST /api/start``, ``POST /api/step``,
``GET /api/session?id=``, and the OpenAPI schema at ``GET /openapi.json``.

Behaviour where the public service is silent (our choices):

* Errors are JSON: ``bad_action`` (400) has the public body ``{"error", "action", "allowed"}``;
  all others are ``{"error": CODE, "detail": "..."}`` with the codes of
  :data:`~maze_envs.agimaze.protocol.ERROR_STATUS`: malformed JSON or fields ``bad_request``,
  unknown or escaping pack path ``bad_path``, unknown/expired/evicted id ``unknown_session``
  (404), a step after the win ``game_over`` (409), a seq too old to replay ``stale_seq`` (409).
* ``seq``: a repeated seq returns the stored reply without stepping (also for error replies);
  the last 64 replies of a session are kept (:class:`~maze_envs.agimaze.sessions.SeqReplay`).
* ``seed`` null on a directory draws a bundle from fresh OS entropy; an int >= 0 draws with
  ``numpy.random.default_rng(seed)`` (the env's local backend makes the same draw).
* The server does not enforce ``max_steps``; harnesses do (``AgiMazeEnv`` truncates at 5×).
* ``map``: the full map with the player for open-map (TUTORIAL) labyrinths, the public map
  (frame and player only) otherwise. ``info`` in the start reply is ours: the bundle's pack path
  and the rivers / pit cycles / exit key counts of the task info.
* Sessions: at most ``--max-sessions`` (the least recently used is evicted) and each expires
  after ``--ttl`` seconds without a request.

Example:
    >>> from starlette.testclient import TestClient
    >>> client = TestClient(create_app())
    >>> start = client.post("/api/start", json={"path": "TRAINING/S0-keys/STAGE-01/0005.json",
    ...                                         "seed": 0, "client": "api", "agent": "doc"}).json()
    >>> client.post("/api/step", json={"id": start["id"], "action": "up", "seq": 1}).status_code
    200
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from maze_envs.agimaze import protocol
from maze_envs.agimaze.engine import AgiMazeEngine
from maze_envs.agimaze.env import reference_max_steps
from maze_envs.agimaze.formal import inventory
from maze_envs.agimaze.mapfmt import render_map
from maze_envs.agimaze.packs import PackPathError, pack_root, resolve_pack_path
from maze_envs.agimaze.sessions import (
    Reply,
    SeqReplay,
    SessionStore,
    StaleSeqError,
    UnknownSessionError,
)
from maze_envs.agimaze.types import Bundle

ModelT = TypeVar("ModelT", bound=BaseModel)
#: Largest request body accepted (real requests are well under 1 KiB).
MAX_BODY_BYTES = 16 * 1024
#: pack path, rng (None: fresh entropy) -> (pack-relative name, bundle)
Resolver = Callable[[str, np.random.Generator | None], tuple[str, Bundle]]


@dataclass
class GameSession:
    """One game on the server: the engine plus what the API reports about it."""

    name: str
    bundle: Bundle
    engine: AgiMazeEngine
    lock: threading.Lock = field(default_factory=threading.Lock)
    replay: SeqReplay = field(default_factory=SeqReplay)
    #: public map text by player cell (it only changes with the cell)
    public_maps: dict[tuple[int, int], str] = field(default_factory=dict)

    @property
    def max_steps(self) -> int | None:
        return reference_max_steps(self.bundle)

    def map_text(self) -> str:
        lab, state = self.bundle.labyrinth, self.engine.state
        if lab.open_map:
            return render_map(lab, state)
        # The public map only changes with the player's cell: draw each one once.
        shown = self.public_maps.get(state.pos)
        if shown is None:
            shown = self.public_maps[state.pos] = render_map(lab, state, reveal=False)
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


def _error(code: str, detail: str) -> Reply:
    return protocol.ERROR_STATUS[code], {"error": code, "detail": detail}


def _validation_detail(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}" for err in exc.errors()
    )


class AgiMazeService:
    """The API's logic, independent of the web framework: each method returns a Reply."""

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
            return _error("bad_path", str(exc))
        lab = bundle.labyrinth
        session = GameSession(name, bundle, AgiMazeEngine(lab))
        start = session.engine.reset()
        session_id = self.sessions.add(session)
        body = {
            "id": session_id,
            "actions": list(lab.actions),
            "task_meta": {
                "max_steps": session.max_steps,
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
            return _error("unknown_session", str(exc))
        with session.lock:
            try:
                return session.replay.handle(request.seq, lambda: self._play(session, request))
            except StaleSeqError as exc:
                return _error("stale_seq", str(exc))

    def snapshot(self, session_id: str | None) -> Reply:
        if not session_id:
            return _error("bad_request", "query parameter 'id' is required: /api/session?id=...")
        if len(session_id) > protocol.MAX_SESSION_ID_LENGTH:
            limit = protocol.MAX_SESSION_ID_LENGTH
            return _error("bad_request", f"query parameter 'id' is longer than {limit} characters")
        try:
            session = self.sessions.get(session_id)
        except UnknownSessionError as exc:
            return _error("unknown_session", str(exc))
        with session.lock:
            engine = session.engine
            return 200, {
                "id": session_id,
                "path": session.name,
                "actions": engine.actions,
                "map": session.map_text(),
                "inventory": inventory(engine.state),
                "steps": engine.steps,
                "done": engine.done,
                "max_steps": session.max_steps,
            }

    @staticmethod
    def _play(session: GameSession, request: protocol.StepRequest) -> Reply:
        engine = session.engine
        if engine.done:
            return _error(
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
        if len(raw) > MAX_BODY_BYTES:
            return _error("bad_request", f"request body over {MAX_BODY_BYTES} bytes")
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # bad UTF-8 or JSON, huge ints, deep nesting
            return _error("bad_request", f"request body is not valid JSON: {exc}")
        if not isinstance(data, dict):
            return _error("bad_request", "request body must be a JSON object")
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            return _error("bad_request", _validation_detail(exc))


def openapi_schema() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the API, built from the pydantic models of the protocol."""
    models: list[type[BaseModel]] = [
        protocol.DescriptionResponse,
        protocol.StartRequest,
        protocol.StartResponse,
        protocol.StepRequest,
        protocol.StepResponse,
        protocol.SessionSnapshot,
        protocol.BadActionError,
        protocol.ErrorResponse,
    ]
    _, top = models_json_schema(
        [(m, "validation") for m in models], ref_template="#/components/schemas/{model}"
    )

    def ref(model: type[BaseModel]) -> dict[str, Any]:
        return {"$ref": f"#/components/schemas/{model.__name__}"}

    def reply(model: type[BaseModel], what: str) -> dict[str, Any]:
        return {"description": what, "content": {"application/json": {"schema": ref(model)}}}

    error = reply(protocol.ErrorResponse, "error (see ERROR_STATUS codes)")
    step_400 = {
        "description": "bad_action (public body) or bad_request",
        "content": {
            "application/json": {
                "schema": {"oneOf": [ref(protocol.BadActionError), ref(protocol.ErrorResponse)]}
            }
        },
    }

    def body(model: type[BaseModel]) -> dict[str, Any]:
        return {"required": True, "content": {"application/json": {"schema": ref(model)}}}

    return {
        "openapi": "3.1.0",
        "info": {"title": "AGI Maze API (maze-envs offline server)", "version": "1"},
        "paths": {
            "/api/description": {
                "get": {"responses": {"200": reply(protocol.DescriptionResponse, "rule text")}}
            },
            "/api/start": {
                "post": {
                    "requestBody": body(protocol.StartRequest),
                    "responses": {
                        "200": reply(protocol.StartResponse, "a new session"),
                        "400": error,
                    },
                }
            },
            "/api/step": {
                "post": {
                    "requestBody": body(protocol.StepRequest),
                    "responses": {
                        "200": reply(protocol.StepResponse, "the step's result"),
                        "400": step_400,
                        "404": error,
                        "409": error,
                    },
                }
            },
            "/api/session": {
                "get": {
                    "parameters": [
                        {
                            "name": "id",
                            "in": "query",
                            "required": True,
                            "schema": {"type": "string"},
                        }
                    ],
                    "responses": {
                        "200": reply(protocol.SessionSnapshot, "session snapshot"),
                        "400": error,
                        "404": error,
                    },
                }
            },
        },
        "components": {"schemas": top.get("$defs", {})},
    }


def create_app(service: AgiMazeService | None = None) -> Any:
    """The Starlette application serving ``service`` (a default one when None)."""
    try:
        from starlette.applications import Starlette
        from starlette.exceptions import HTTPException
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route
    except ImportError as exc:  # the core install has no web stack
        raise ImportError(
            "the AGI Maze server needs Starlette and uvicorn: pip install 'maze-envs[server]'"
        ) from exc

    api = service or AgiMazeService()
    schema = openapi_schema()

    def respond(reply: Reply) -> Any:
        status, payload = reply
        return JSONResponse(payload, status_code=status)

    async def description(request: Request) -> Any:
        return respond(api.description())

    async def start(request: Request) -> Any:
        return respond(api.start(await request.body()))

    async def step(request: Request) -> Any:
        return respond(api.step(await request.body()))

    async def session(request: Request) -> Any:
        return respond(api.snapshot(request.query_params.get("id")))

    async def openapi(request: Request) -> Any:
        return JSONResponse(schema)

    async def http_error(request: Request, exc: Any) -> Any:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "bad_request")
        detail = f"{request.method} {request.url.path}: {exc.detail}"
        return JSONResponse({"error": code, "detail": detail}, status_code=exc.status_code)

    async def server_error(request: Request, exc: Exception) -> Any:
        detail = f"{exc.__class__.__name__}: {exc}"
        return JSONResponse({"error": "internal_error", "detail": detail}, status_code=500)

    routes = [
        Route("/api/description", description, methods=["GET"]),
        Route("/api/start", start, methods=["POST"]),
        Route("/api/step", step, methods=["POST"]),
        Route("/api/session", session, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    handlers = {HTTPException: http_error, Exception: server_error}
    return Starlette(routes=routes, exception_handlers=handlers)


def main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs agimaze serve [--host H] [--port P] [--pack-root DIR] [--max-sessions N]``."""
    parser = argparse.ArgumentParser(
        prog="maze-envs agimaze serve",
        description="Serve the AGI Maze HTTP API over the embedded engine and shipped packs.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    parser.add_argument(
        "--pack-root",
        default=None,
        help="serve bundles from this directory (default: shipped packs)",
    )
    parser.add_argument("--max-sessions", type=int, default=1000, help="sessions kept at most")
    parser.add_argument("--ttl", type=float, default=3600.0, help="idle seconds before expiry")
    parser.add_argument("--log-level", default="warning", help="uvicorn log level")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.max_sessions < 1 or args.ttl <= 0:
        parser.error("--max-sessions must be >= 1 and --ttl > 0")
    try:
        import uvicorn
    except ImportError:
        print("the AGI Maze server needs uvicorn: pip install 'maze-envs[server]'")
        return 2
    resolver: Resolver = resolve_pack_path
    if args.pack_root is not None:
        try:
            resolver = root_resolver(args.pack_root)
        except ValueError as exc:
            parser.error(str(exc))
    service = AgiMazeService(resolver, max_sessions=args.max_sessions, ttl_seconds=args.ttl)
    print(f"AGI Maze API on http://{args.host}:{args.port} (OpenAPI at /openapi.json)")
    uvicorn.run(create_app(service), host=args.host, port=args.port, log_level=args.log_level)
    return 0
