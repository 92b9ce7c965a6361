"""The OpenAPI 3.1 document of the AGI Maze HTTP API, built from :mod:`.protocol`'s models."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from maze_envs.agimaze.api import protocol


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
                "get": {"responses": {"200": reply(protocol.DescriptionResponse, "rule text")}}
            },
            "/api/start": {
                "post": {
                    "requestBody": body(protocol.StartRequest),
                    "responses": {
                        "200": reply(protocol.StartResponse, "a new session"),
                        "400": error,
                        "408": too_slow,
                        "413": too_large,
                        "503": reply(protocol.ErrorResponse, "server_full (see retry_after)"),
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
                        "408": too_slow,
                        "409": reply(protocol.ErrorResponse, "game_over, stale_seq, seq_conflict"),
                        "413": too_large,
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
