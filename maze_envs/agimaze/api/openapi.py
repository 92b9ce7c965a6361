"""The OpenAPI 3.1 document of the AGI Maze HTTP API, built from :mod:`.protocol`'s models."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from maze_envs.agimaze.api import protocol


def _code(status: HTTPStatus) -> str:
    """A response key of the OpenAPI document (the status number as text)."""
    return str(status.value)


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
    too_large = reply(protocol.ErrorResponse, "body_too_large: over MAX_BODY_BYTES")
    too_slow = reply(protocol.ErrorResponse, "body_timeout: the body did not arrive in time")
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
                "get": {
                    "responses": {
                        _code(HTTPStatus.OK): reply(protocol.DescriptionResponse, "rule text")
                    }
                }
            },
            "/api/start": {
                "post": {
                    "requestBody": body(protocol.StartRequest),
                    "responses": {
                        _code(HTTPStatus.OK): reply(protocol.StartResponse, "a new session"),
                        _code(HTTPStatus.BAD_REQUEST): error,
                        _code(HTTPStatus.REQUEST_TIMEOUT): too_slow,
                        _code(HTTPStatus.REQUEST_ENTITY_TOO_LARGE): too_large,
                        _code(HTTPStatus.SERVICE_UNAVAILABLE): reply(
                            protocol.ErrorResponse, "server_full (see retry_after)"
                        ),
                    },
                }
            },
            "/api/step": {
                "post": {
                    "requestBody": body(protocol.StepRequest),
                    "responses": {
                        _code(HTTPStatus.OK): reply(protocol.StepResponse, "the step's result"),
                        _code(HTTPStatus.BAD_REQUEST): step_400,
                        _code(HTTPStatus.NOT_FOUND): error,
                        _code(HTTPStatus.REQUEST_TIMEOUT): too_slow,
                        _code(HTTPStatus.CONFLICT): reply(
                            protocol.ErrorResponse, "game_over, stale_seq, seq_conflict"
                        ),
                        _code(HTTPStatus.REQUEST_ENTITY_TOO_LARGE): too_large,
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
                        _code(HTTPStatus.OK): reply(protocol.SessionSnapshot, "session snapshot"),
                        _code(HTTPStatus.BAD_REQUEST): error,
                        _code(HTTPStatus.NOT_FOUND): error,
                    },
                }
            },
        },
        "components": {"schemas": top.get("$defs", {})},
    }
