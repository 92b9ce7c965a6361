"""AGI Maze's public HTTP API, apart from the game: client, env backend, offline server.

The game (:mod:`maze_envs.agimaze`) never imports this package; it meets it only through the
:class:`~maze_envs.agimaze.backends.Backend` protocol.

Client side (standard library only):

* :class:`HttpBackend`: the env's backend for a server, ``AgiMazeEnv(path=...,
  backend=HttpBackend(base_url, timeout=..., retries=...))``;
* :class:`AgiMazeClient` and its errors: the API's four calls (:mod:`.client`).

Server side (``pip install 'maze-envs[server]'``): :mod:`.protocol` (the wire format as pydantic
models), :mod:`.openapi` (the OpenAPI document built from them), :mod:`.sessions` (bounded
sessions and seq replay), :mod:`.service` (each endpoint's logic), :mod:`.body` (request bodies
with a size cap and a deadline) and :mod:`.server` (Starlette app and ``maze-envs agimaze serve``).
"""

from maze_envs.agimaze.api.client import (
    AgiMazeAPIError,
    AgiMazeClient,
    AgiMazeConnectionError,
    AgiMazeProtocolError,
    AgiMazeTimeoutError,
)
from maze_envs.agimaze.api.http_backend import HttpBackend, expected_actions

__all__ = [
    "AgiMazeAPIError",
    "AgiMazeClient",
    "AgiMazeConnectionError",
    "AgiMazeProtocolError",
    "AgiMazeTimeoutError",
    "HttpBackend",
    "expected_actions",
]
