"""Loopback servers speaking the real model wire protocols, for tests and benchmarks.

with serve() as server:
    server.push(HttpError(429, retry_after=1), Reply(tool_arguments='{"move": "N"}'))
    backend = make_backend("openai-chat:gpt-4o-mini",
                           ModelSettings(base_url=server.openai_base_url))
    ...
    assert server.requests[-1].body["tools"][0]["function"]["parameters"] == schema
"""

from tests.llm.servers.app import PATHS, LoopbackServer, serve
from tests.llm.servers.llamacpp import LlamaCpp
from tests.llm.servers.quirks import QUIRKS, quirk_payload
from tests.llm.servers.script import (
    Hang,
    Held,
    HttpError,
    RawBody,
    RecordedRequest,
    Reply,
    Stall,
    Step,
    malformed_json,
    non_object_json,
)

__all__ = [
    "PATHS",
    "QUIRKS",
    "Hang",
    "Held",
    "HttpError",
    "LlamaCpp",
    "LoopbackServer",
    "RawBody",
    "RecordedRequest",
    "Reply",
    "Stall",
    "Step",
    "malformed_json",
    "non_object_json",
    "quirk_payload",
    "serve",
]
