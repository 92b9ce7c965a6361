"""BodyReader: size cap, deadline, disconnects, and cancellations that are not its own."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from starlette.requests import Request

from maze_envs.agimaze.api.body import BodyError, BodyReader, ClientGone

Receive = Callable[[], Awaitable[dict[str, Any]]]


def request(receive: Receive, length: int | None = None) -> Request:
    headers = [] if length is None else [(b"content-length", str(length).encode())]
    return Request({"type": "http", "headers": headers}, receive)


def chunks(*parts: bytes, then: Receive | None = None) -> Receive:
    queue = list(parts)

    async def receive() -> dict[str, Any]:
        if queue:
            part = queue.pop(0)
            return {"type": "http.request", "body": part, "more_body": bool(queue) or bool(then)}
        assert then is not None
        return await then()

    return receive


async def forever() -> dict[str, Any]:
    await asyncio.sleep(3600)
    raise AssertionError("unreachable")


async def disconnect() -> dict[str, Any]:
    return {"type": "http.disconnect"}


def test_a_body_in_several_chunks_is_joined() -> None:
    body = asyncio.run(BodyReader(64, 1.0).read(request(chunks(b'{"a"', b": 1", b"}"))))
    assert body == b'{"a": 1}'


def test_the_declared_length_is_checked_before_reading() -> None:
    async def never_read() -> dict[str, Any]:
        raise AssertionError("the body was read")

    with pytest.raises(BodyError) as info:
        asyncio.run(BodyReader(16, 1.0).read(request(never_read, length=17)))
    assert info.value.code == "body_too_large"
    assert info.value.detail == "request body of 17 bytes declared; at most 16 bytes are accepted"


def test_reading_stops_at_the_cap() -> None:
    read: list[int] = []

    async def endless() -> dict[str, Any]:
        read.append(1)
        return {"type": "http.request", "body": b"x" * 10, "more_body": True}

    with pytest.raises(BodyError, match="over 16 bytes") as info:
        asyncio.run(BodyReader(16, 1.0).read(request(endless)))
    assert info.value.code == "body_too_large" and len(read) == 2


def test_a_body_that_does_not_arrive_times_out_and_the_task_goes_on() -> None:
    async def main() -> tuple[str, float, str]:
        began = time.monotonic()
        try:
            await BodyReader(64, 0.2).read(request(chunks(b"{", then=forever), length=10))
        except BodyError as exc:
            code, detail = exc.code, exc.detail
        elapsed = time.monotonic() - began
        await asyncio.sleep(0.01)  # the task is not left cancelled
        return code, elapsed, detail

    code, elapsed, detail = asyncio.run(main())
    assert code == "body_timeout" and elapsed >= 0.2  # never early; late only on a busy machine
    assert detail == "the request body did not arrive within 0.2 s (1 of 10 bytes received)"


def test_a_cancellation_that_is_not_a_timeout_propagates() -> None:
    async def main() -> None:
        reader = BodyReader(64, 10.0)
        task = asyncio.create_task(reader.read(request(forever)))
        await asyncio.sleep(0)  # one turn of the loop: the reader is now waiting for the body
        assert reader._deadlines != {}
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert reader._deadlines == {}

    asyncio.run(main())


def test_many_concurrent_readers_each_get_their_own_outcome() -> None:
    async def main() -> list[object]:
        reader = BodyReader(64, 0.2)
        fast = [reader.read(request(chunks(b"ok"))) for _ in range(5)]
        slow = [reader.read(request(forever)) for _ in range(5)]
        return await asyncio.gather(*fast, *slow, return_exceptions=True)

    results = asyncio.run(main())
    assert results[:5] == [b"ok"] * 5
    assert all(isinstance(r, BodyError) and r.code == "body_timeout" for r in results[5:])


def test_a_client_that_leaves_is_client_gone() -> None:
    with pytest.raises(ClientGone, match="3 of 100 bytes received"):
        asyncio.run(BodyReader(200, 1.0).read(request(chunks(b"abc", then=disconnect), 100)))


@pytest.mark.parametrize(("max_bytes", "timeout"), [(0, 1.0), (16, 0.0), (1.5, 1.0)])
def test_reader_arguments_are_checked(max_bytes: Any, timeout: float) -> None:
    with pytest.raises(ValueError):
        BodyReader(max_bytes, timeout)


def test_a_bad_content_length_is_a_bad_request() -> None:
    with pytest.raises(BodyError) as info:
        asyncio.run(
            BodyReader(64, 1.0).read(
                Request({"type": "http", "headers": [(b"content-length", b"12x")]}, disconnect)
            )
        )
    assert info.value.code == "bad_request"
