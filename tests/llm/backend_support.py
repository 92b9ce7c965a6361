"""Helpers of the backend tests: a request builder, a recording sleep, a loopback fixture."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from llm_policies.backends.base import ChatMessage, ModelRequest
from llm_policies.backends.retry import RetryPolicy
from llm_policies.settings import ModelSettings, OutputMode
from tests.llm.servers import LoopbackServer

# a reply schema whose key order (check before move) and nullable field must survive the trip
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "check": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "one line"},
        "move": {"type": "string", "enum": ["N", "E", "S", "W", "STAY"]},
        "radio": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["check", "move", "radio"],
}
SYSTEM = "RULES v3: you are agent A in a maze. Reply with one action object."


def request(
    settings: ModelSettings,
    mode: OutputMode = "tool",
    *,
    user: str = "turn 1: N open, E wall",
    history: tuple[ChatMessage, ...] = (),
    schema: dict[str, Any] | None = None,
    extra: str = "",
) -> ModelRequest:
    return ModelRequest(
        system=SYSTEM,
        messages=(*history, ChatMessage("user", user)),
        output_mode=mode,
        schema=SCHEMA if schema is None else schema,
        schema_name="maze_action",
        settings=settings,
        cache_key_extra=extra,
    )


class Sleeps:
    """A RetryPolicy sleep that records the waits and does not wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)

    def policy(self, seed: int = 7) -> RetryPolicy:
        return RetryPolicy(seed=seed, sleep=self)


@pytest.fixture(scope="module")
def module_server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as server:
        yield server


@pytest.fixture
def server(module_server: LoopbackServer) -> Iterator[LoopbackServer]:
    module_server.reset()
    yield module_server
    module_server.reset()
