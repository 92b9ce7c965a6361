"""The public AGI Maze HTTP API as pydantic models: requests, responses, errors, rule text.

These models are the single description of the wire format shared by the server
(:mod:`maze_envs.agimaze.api.server`), its OpenAPI schema and the documentation. The client
(:mod:`maze_envs.agimaze.api.client`) speaks the same format with the standard library only.

Endpoints (all bodies JSON):

* ``GET /api/description`` → :class:`DescriptionResponse`
* ``POST /api/start`` with :class:`StartRequest` → :class:`StartResponse`
* ``POST /api/step`` with :class:`StepRequest` → :class:`StepResponse`
* ``GET /api/session?id=...`` → :class:`SessionSnapshot`

Errors are JSON objects with an ``error`` code (see :data:`ERROR_STATUS`). An action outside the
labyrinth's list is HTTP 400 ``{"error": "bad_action", "action": ..., "allowed": [...]}``, exactly
as the public service answers; every other error is ``{"error": CODE, "detail": "..."}``
(``server_full`` adds ``retry_after``, in seconds, also sent as the ``Retry-After`` header, and
``unfinished``, the number of sessions still in play; ``unknown_session`` adds ``reason``:
``evicted_idle``, ``expired``, ``evicted_finished`` or ``unknown``).

Request bodies are JSON of at most :data:`MAX_BODY_BYTES` bytes, received within
:data:`BODY_TIMEOUT_SECONDS` seconds.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, model_validator

#: Error code -> HTTP status. ``bad_action`` has its own body (:class:`BadActionError`).
ERROR_STATUS: Final[dict[str, HTTPStatus]] = {
    # malformed JSON, missing or mistyped fields, a bad Content-Length
    "bad_request": HTTPStatus.BAD_REQUEST,
    # the action is not in the session's action list
    "bad_action": HTTPStatus.BAD_REQUEST,
    # no such pack path, or a path that would leave the pack root
    "bad_path": HTTPStatus.BAD_REQUEST,
    # no session with this id: evicted unfinished after going idle, expired, finished and
    # evicted long ago, or never started here (the body's ``reason`` says which)
    "unknown_session": HTTPStatus.NOT_FOUND,
    # no such endpoint
    "not_found": HTTPStatus.NOT_FOUND,
    "method_not_allowed": HTTPStatus.METHOD_NOT_ALLOWED,
    # the request body did not arrive in time (slow or missing)
    "body_timeout": HTTPStatus.REQUEST_TIMEOUT,
    # a step after the win, or a new step of an evicted finished session
    "game_over": HTTPStatus.CONFLICT,
    # a seq older than the replay window, whose response is gone
    "stale_seq": HTTPStatus.CONFLICT,
    # a stored seq resent with another action
    "seq_conflict": HTTPStatus.CONFLICT,
    # a body (declared or received) over MAX_BODY_BYTES
    "body_too_large": HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
    # a bug of the server (details only in the server's log)
    "internal_error": HTTPStatus.INTERNAL_SERVER_ERROR,
    # every session slot holds an unfinished session in play (none is evictable)
    "server_full": HTTPStatus.SERVICE_UNAVAILABLE,
}

#: Largest request body accepted, in bytes (real requests are well under 1 KiB).
MAX_BODY_BYTES: Final = 16 * 1024
#: Seconds a client has to deliver a whole request body.
BODY_TIMEOUT_SECONDS: Final = 10.0

#: Longest session id a request may carry (ours are 32 hex digits).
MAX_SESSION_ID_LENGTH: Final = 128
#: Longest action a step request may carry (real ones are a dozen characters at most).
MAX_ACTION_LENGTH: Final = 64


class _Request(BaseModel):
    # Agents may send extra fields (the public client does); ignore them rather than fail.
    model_config = ConfigDict(extra="ignore")


class StartRequest(_Request):
    """Body of ``POST /api/start``."""

    path: StrictStr = Field(
        min_length=1,
        max_length=512,
        description="pack path, group prefix first: a .json bundle or a directory "
        "(then one bundle is drawn from the seed), e.g. TRAINING/S0-keys/STAGE-01/0005.json",
    )
    seed: StrictInt | None = Field(
        default=None,
        ge=0,
        description="seed (>= 0) for drawing from a directory; null draws freshly",
    )
    client: StrictStr = Field(default="api", description='client kind; agents send "api"')
    agent: StrictStr | None = Field(
        default=None, max_length=256, description='agent name; required when client is "api"'
    )

    @model_validator(mode="after")
    def _agent_required_for_api(self) -> StartRequest:
        if self.client == "api" and not self.agent:
            raise ValueError('field "agent" is required when client is "api"')
        return self


class StepRequest(_Request):
    """Body of ``POST /api/step``."""

    id: StrictStr = Field(
        min_length=1, max_length=MAX_SESSION_ID_LENGTH, description="session id from /api/start"
    )
    action: StrictStr = Field(
        max_length=MAX_ACTION_LENGTH, description="one of the session's actions"
    )
    seq: StrictInt | None = Field(
        default=None,
        ge=0,
        description="client sequence number (1, 2, 3, ...); a repeated seq with the same "
        "action returns the stored response without stepping again; with another action it is "
        "refused (seq_conflict)",
    )


class Board(BaseModel):
    n: int = Field(description="rows")
    m: int = Field(description="columns")


class StartPosition(BaseModel):
    row: int
    col: int


class TaskMeta(BaseModel):
    max_steps: int | None = Field(description="reference step budget of the labyrinth")
    board: Board
    start: StartPosition


class Formal(BaseModel):
    """Structured counterpart of ``text``."""

    status: Literal["success", "blocked"]
    observe: str = Field(description="what the player stands on or found, e.g. empty, key, exit")
    events: list[str]
    inventory: dict[str, bool | int]
    details: dict[str, Any] = Field(default_factory=dict)


class StartResponse(BaseModel):
    id: str
    actions: list[str] = Field(description="the labyrinth's actions (authoritative)")
    task_meta: TaskMeta
    text: str
    formal: Formal
    map: str = Field(description="open map (TUTORIAL) or public map: closed frame and player")
    inventory: dict[str, bool | int]
    info: dict[str, Any] = Field(default_factory=dict, description="rivers, pits, exit key")


class StepResponse(BaseModel):
    text: str
    done: bool = Field(description="true iff the episode ended with a win")
    formal: Formal
    inventory: dict[str, bool | int]
    events: list[str]
    map: str


class SessionSnapshot(BaseModel):
    id: str
    path: str
    actions: list[str]
    map: str
    inventory: dict[str, bool | int]
    steps: int
    done: bool
    max_steps: int | None


class DescriptionResponse(BaseModel):
    description: str


class BadActionError(BaseModel):
    error: Literal["bad_action"]
    action: str
    allowed: list[str]


class ErrorResponse(BaseModel):
    error: str = Field(description="one of: " + ", ".join(ERROR_STATUS))
    detail: str
    retry_after: int | None = Field(
        default=None, description="server_full only: seconds until a session slot may free up"
    )
    unfinished: int | None = Field(
        default=None,
        description="server_full only: sessions still in play (neither won nor out of steps)",
    )
    reason: Literal["evicted_idle", "expired", "evicted_finished", "unknown"] | None = Field(
        default=None,
        description="unknown_session only: evicted unfinished after going idle while the "
        "server was full, expired (--ttl), finished and evicted long ago, or never started here",
    )
