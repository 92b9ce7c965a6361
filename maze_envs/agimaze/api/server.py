"""``maze-envs agimaze serve``: the public AGI Maze HTTP API over the embedded engine and packs.

Any agent written for the public API (see :mod:`maze_envs.agimaze.api.protocol`) runs offline
against it. Endpoints: ``GET /api/description``, ``POST /api/start``, ``POST /api/step``,
``GET /api/session?id=``, and the OpenAPI schema at ``GET /openapi.json``. The logic is
:class:`~maze_envs.agimaze.api.service.AgiMazeService`; this module is its web layer.

Behaviour where the public service is silent (our choices):

* Errors are JSON: ``bad_action`` (400) has the public body ``{"error", "action", "allowed"}``;
  all others are ``{"error": CODE, "detail": "..."}`` with the codes of
  :data:`~maze_envs.agimaze.api.protocol.ERROR_STATUS`: malformed JSON or fields ``bad_request``,
  unknown or escaping pack path ``bad_path``, unknown or expired id ``unknown_session`` (404),
  a step after the win (or a new step of an evicted finished session) ``game_over`` (409), a
  seq too old to replay ``stale_seq`` (409), a stored seq resent with another action
  ``seq_conflict`` (409), every session slot held by an unfinished session in play
  ``server_full`` (503 with ``Retry-After`` and the unfinished count). No reply ever names a
  file of the server: pack errors name only the requested path, and an internal error says only
  that it happened (the traceback goes to the server's log).
* Bodies: a ``Content-Length`` over :data:`~maze_envs.agimaze.api.protocol.MAX_BODY_BYTES` is
  refused with 413 ``body_too_large`` before anything is read; a body without one is read in
  chunks and refused as soon as it passes the limit, so a 50 MB upload costs the server no
  more than the limit; a body not complete within ``--body-timeout`` seconds (dripped, or
  declared but never sent) gets 408 ``body_timeout``. Such replies close the connection. A
  client that disconnects mid-upload is logged in one line (no traceback).
* ``seq``: a repeated seq with the same action returns the stored reply without stepping (also
  for error replies); the last 64 replies of a session are kept
  (:class:`~maze_envs.agimaze.api.sessions.SeqReplay`). A repeated seq with another action is
  refused with ``seq_conflict``: answering it with the first reply would hide a client bug.
* ``seed`` null on a directory draws a bundle from fresh OS entropy; an int >= 0 draws with
  ``numpy.random.default_rng(seed)`` (the env's local backend makes the same draw).
* The server does not enforce ``max_steps``; harnesses do (``AgiMazeEnv`` truncates at 5×).
* ``map``: the full map with the player for open-map (TUTORIAL) labyrinths, the public map
  (frame and player only) otherwise. ``info`` in the start reply is ours: the bundle's pack path
  and the rivers / pit cycles / exit key counts of the task info.
* Sessions: at most ``--max-sessions`` live ones, each expiring after ``--ttl`` seconds without
  a request. A *finished* session (won, or its ``max_steps`` spent) is evictable: a start that
  finds the server full evicts the least recently used finished session, which keeps its last
  replies (so a resend of its final step with the same ``seq`` is still answered) and its
  snapshot. With no finished one left, it evicts the least recently used *unfinished* session
  that has gone ``--idle-evict`` seconds (default 1) without a request: a client that stops
  an episode early (a run capped below the budget, a cost cap) leaves sessions nobody will
  finish. Only when all ``--max-sessions`` are unfinished and each had a request within the
  last ``--idle-evict`` seconds is a start refused (``server_full``, ``Retry-After`` at most
  that). A public client, which never ends a session, runs any number of episodes, played to
  their end or not. The price: on a server full of sessions in play, a client that waits
  longer than ``--idle-evict`` between two steps may lose its session to a new start.
* A request for a session that is gone gets 404 ``unknown_session`` saying what happened, and
  ``reason``: ``evicted_idle`` (evicted unfinished, idle, while the server was full),
  ``expired`` (``--ttl``), ``evicted_finished`` (finished, evicted, its last replies dropped
  since), or ``unknown`` (never started on this server).
* Pack files are read in a worker thread, never on the event loop, and only regular files are
  read (a FIFO named ``x.json`` is skipped), so one request cannot stall the others.

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
import logging
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any

import orjson

from maze_envs.agimaze.api import protocol
from maze_envs.agimaze.api.body import BodyError, BodyReader, ClientGone
from maze_envs.agimaze.api.openapi import openapi_schema
from maze_envs.agimaze.api.service import AgiMazeService, Resolver, error, root_resolver
from maze_envs.agimaze.api.sessions import IDLE_SECONDS, Reply
from maze_envs.agimaze.packs import PACK_VERSIONS, resolve_pack_path, version_root

logger = logging.getLogger(__name__)

__all__ = ["AgiMazeService", "create_app", "main", "openapi_schema", "root_resolver"]


def create_app(
    service: AgiMazeService | None = None,
    *,
    max_body_bytes: int = protocol.MAX_BODY_BYTES,
    body_timeout: float = protocol.BODY_TIMEOUT_SECONDS,
) -> Any:
    """The Starlette application serving ``service`` (a default one when None).

    ``max_body_bytes`` and ``body_timeout`` (seconds) bound every request body.
    """
    try:
        from starlette.applications import Starlette
        from starlette.concurrency import run_in_threadpool
        from starlette.exceptions import HTTPException
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route
    except ImportError as exc:  # the core install has no web stack
        raise ImportError(
            "the AGI Maze server needs Starlette and uvicorn: pip install 'maze-envs[server]'"
        ) from exc
    reader = BodyReader(max_body_bytes, body_timeout)  # validates both
    api = service or AgiMazeService()
    schema = orjson.dumps(openapi_schema())

    def respond(reply: Reply, *, close: bool = False) -> Any:
        status, payload = reply
        headers = {"Connection": "close"} if close else {}
        if "retry_after" in payload:
            headers["Retry-After"] = str(payload["retry_after"])
        return Response(orjson.dumps(payload), status, headers, media_type="application/json")

    async def with_body(request: Request, handle: Any, *, threaded: bool = False) -> Any:
        try:
            body = await reader.read(request)
        except BodyError as exc:
            # the rest of the body may still be on the wire: close the connection
            return respond(error(exc.code, exc.detail), close=True)
        except ClientGone as exc:  # nobody is listening: one line, no traceback
            client = f"{request.client.host}:{request.client.port}" if request.client else "?"
            logger.warning(
                "client %s disconnected during the body of %s %s (%s); request dropped",
                client,
                request.method,
                request.url.path,
                exc,
            )
            return Response(status_code=int(HTTPStatus.BAD_REQUEST))
        if threaded:  # reads pack files: off the event loop
            return respond(await run_in_threadpool(handle, body))
        return respond(handle(body))

    async def description(request: Request) -> Any:
        return respond(api.description())

    async def start(request: Request) -> Any:
        return await with_body(request, api.start, threaded=True)

    async def step(request: Request) -> Any:
        return await with_body(request, api.step)

    async def session(request: Request) -> Any:
        return respond(api.snapshot(request.query_params.get("id")))

    async def openapi(request: Request) -> Any:
        return Response(schema, media_type="application/json")

    async def http_error(request: Request, exc: Any) -> Any:
        code = {
            HTTPStatus.NOT_FOUND: "not_found",
            HTTPStatus.METHOD_NOT_ALLOWED: "method_not_allowed",
        }.get(exc.status_code, "bad_request")
        detail = f"{request.method} {request.url.path}: {exc.detail}"
        return respond((exc.status_code, {"error": code, "detail": detail}))

    async def server_error(request: Request, exc: Exception) -> Any:
        # the exception text may name files of this machine: it goes to the log only
        # (Starlette re-raises after this handler, so the server logs the traceback)
        detail = f"internal server error ({exc.__class__.__name__}); details are in the log"
        return respond(error("internal_error", detail))

    routes = [
        Route("/api/description", description, methods=["GET"]),
        Route("/api/start", start, methods=["POST"]),
        Route("/api/step", step, methods=["POST"]),
        Route("/api/session", session, methods=["GET"]),
        Route("/openapi.json", openapi, methods=["GET"]),
    ]
    handlers = {HTTPException: http_error, Exception: server_error}
    return Starlette(routes=routes, exception_handlers=handlers)


def _parser() -> argparse.ArgumentParser:
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
    parser.add_argument(
        "--pack-version",
        default=None,
        choices=tuple(PACK_VERSIONS),
        help="serve a shipped pack version by name, e.g. the earlier packs to reproduce older "
        "results (default: the current one)",
    )
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=1000,
        help="live sessions kept at most; finished ones (won, or max_steps spent) are evicted "
        "to make room, then unfinished ones idle past --idle-evict (default 1000)",
    )
    parser.add_argument(
        "--ttl",
        type=float,
        default=3600.0,
        help="idle seconds before a session expires (default %(default)s)",
    )
    parser.add_argument(
        "--idle-evict",
        type=float,
        default=IDLE_SECONDS,
        metavar="SECONDS",
        help="a full server evicts an unfinished session idle this long to make room for a new "
        "one (the least recently used first); sessions with a request within it are never "
        "evicted (default %(default)s)",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=protocol.BODY_TIMEOUT_SECONDS,
        help="seconds a client has to send a request body (default %(default)s)",
    )
    parser.add_argument("--log-level", default="warning", help="uvicorn log level")
    return parser


def pack_resolver(pack_root: str | None = None, pack_version: str | None = None) -> Resolver:
    """The bundles a server serves: the shipped packs of the current version by default, a
    shipped ``pack_version`` by name, or the tree at ``pack_root`` (not both)."""
    if pack_root is not None and pack_version is not None:
        raise ValueError("give --pack-root or --pack-version, not both")
    if pack_version is not None:
        return root_resolver(version_root(pack_version))
    if pack_root is not None:
        return root_resolver(pack_root)
    return resolve_pack_path


def main(argv: Sequence[str] | None = None) -> int:
    """``maze-envs agimaze serve [--host H] [--port P] [--pack-root DIR | --pack-version NAME]
    [--max-sessions N] [--ttl S] [--idle-evict S]``."""
    parser = _parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.max_sessions < 1 or args.ttl <= 0 or args.body_timeout <= 0:
        parser.error("--max-sessions must be >= 1, and --ttl and --body-timeout > 0")
    if not 0 < args.idle_evict <= args.ttl:
        parser.error(
            f"--idle-evict must be > 0 and at most --ttl ({args.ttl:g}), got {args.idle_evict:g}"
        )
    try:
        import uvicorn
    except ImportError:
        print("the AGI Maze server needs uvicorn: pip install 'maze-envs[server]'")
        return 2
    try:
        resolver = pack_resolver(args.pack_root, args.pack_version)
    except ValueError as exc:
        parser.error(str(exc))
    service = AgiMazeService(
        resolver,
        max_sessions=args.max_sessions,
        ttl_seconds=args.ttl,
        idle_seconds=args.idle_evict,
    )
    app = create_app(service, body_timeout=args.body_timeout)
    print(f"AGI Maze API on http://{args.host}:{args.port} (OpenAPI at /openapi.json)")
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0
