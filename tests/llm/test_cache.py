"""The response cache: a rerun sends zero requests; read-only mode reproduces offline."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from llm_policies.backends import ChatMessage, ModelUnavailable, make_backend
from llm_policies.cache import CachedBackend, CacheMiss, request_key
from llm_policies.settings import ModelSettings
from tests.llm.backend_support import module_server, request, server
from tests.llm.servers import HttpError, LoopbackServer, Reply

__all__ = ["module_server", "server"]  # fixtures used below

SPEC = "openai-chat:gpt-4o-mini"
KEY = "sk-test-cache-SECRET-5555"


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def cached(server: LoopbackServer, path: Path, **kw: Any) -> CachedBackend:
    settings = ModelSettings(base_url=server.openai_base_url)
    return CachedBackend(make_backend(SPEC, settings), path, **kw)


def run(backend: CachedBackend, requests: list[Any]) -> list[Any]:
    async def go() -> list[Any]:
        try:
            return [await backend.complete(r) for r in requests]
        finally:
            await backend.aclose()

    return asyncio.run(go())


def game(settings: ModelSettings, turns: int = 5) -> list[Any]:
    return [request(settings, "tool", user=f"turn {t}: N open") for t in range(turns)]


def test_a_rerun_against_the_cache_sends_zero_requests(
    server: LoopbackServer, tmp_path: Path
) -> None:
    path = tmp_path / "replies.sqlite"
    server.respond_with(
        lambda r: Reply(
            tool_arguments=f'{{"move": "N", "turn": "{r.body["messages"][-1]["content"]}"}}',
            input_tokens=900,
            output_tokens=20,
        )
    )
    settings = ModelSettings(base_url=server.openai_base_url)
    first_backend = cached(server, path)
    first = run(first_backend, game(settings))
    assert len(server.requests) == 5 and first_backend.stats()["stored"] == 5
    assert not any(r.cached for r in first)

    rerun_backend = cached(server, path)  # a new run, as from a new process
    again = run(rerun_backend, game(settings))
    assert len(server.requests) == 5  # nothing more was sent
    assert rerun_backend.stats() == {
        "path": str(path),
        "mode": "read_write",
        "hits": 5,
        "misses": 0,
        "stored": 0,
    }
    assert [r.tool_arguments for r in again] == [r.tool_arguments for r in first]
    assert all(r.cached for r in again)
    # tokens and cost as recorded; no request was sent
    assert [r.usage.input_tokens for r in again] == [900] * 5
    assert [r.usage.cost_usd for r in again] == [r.usage.cost_usd for r in first]
    assert all(r.usage.requests == 0 for r in again)
    assert again[0].raw == first[0].raw and again[0].model == first[0].model


def test_read_only_reproduces_offline_and_names_the_departure(
    server: LoopbackServer, tmp_path: Path
) -> None:
    path = tmp_path / "replies.sqlite"
    server.respond_with(lambda r: Reply(tool_arguments='{"move": "E"}'))
    settings = ModelSettings(base_url=server.openai_base_url)
    run(cached(server, path), game(settings, 3))
    server.reset()  # from here on the server would refuse everything
    offline = cached(server, path, mode="read_only")
    replies = run(offline, game(settings, 3))
    assert [r.tool_arguments for r in replies] == ['{"move": "E"}'] * 3
    assert server.requests == []
    with pytest.raises(CacheMiss, match="has no reply for this request") as caught:
        run(cached(server, path, mode="read_only"), [request(settings, user="a new turn")])
    assert isinstance(caught.value, ModelUnavailable) and caught.value.kind == "refused"
    assert server.requests == []
    with pytest.raises(FileNotFoundError, match="does not exist"):
        cached(server, tmp_path / "missing.sqlite", mode="read_only")


def test_off_sends_everything_and_stores_nothing(server: LoopbackServer, tmp_path: Path) -> None:
    path = tmp_path / "never.sqlite"
    server.respond_with(lambda r: Reply(text="x"))
    settings = ModelSettings(base_url=server.openai_base_url)
    run(cached(server, path, mode="off"), game(settings, 2) * 2)
    assert len(server.requests) == 4 and not path.exists()
    with pytest.raises(ValueError, match="cache mode must be one of off, read_write, read_only"):
        cached(server, path, mode="sometimes")  # type: ignore[arg-type]


def test_the_key_is_the_exact_request() -> None:
    settings = ModelSettings(temperature=0.5)
    base = request(settings)
    key = request_key(SPEC, base)
    reordered = {
        "type": "object",
        "properties": dict(reversed(list(base.schema["properties"].items()))),
        "required": base.schema["required"],
    }
    different = [
        request_key("openai:gpt-4o-mini", base),
        request_key(SPEC, request(ModelSettings(temperature=0.6))),
        request_key(SPEC, request(ModelSettings(temperature=0.5, seed=1))),
        request_key(SPEC, request(settings, "native")),
        request_key(SPEC, request(settings, user="turn 2")),
        request_key(SPEC, request(settings, history=(ChatMessage("user", "earlier"),))),
        request_key(SPEC, request(settings, schema=reordered)),  # key order is meaningful
        request_key(SPEC, request(settings, extra="prompt v4")),
    ]
    assert key not in different and len(set(different)) == len(different)
    # how and where a request travels does not change its reply: the same model and request
    # behind another port or proxy is the same request
    transport = ModelSettings(temperature=0.5, timeout_s=5, retries=0, keep_alive="1h")
    assert request_key(SPEC, request(transport)) == key
    moved = ModelSettings(temperature=0.5, base_url="http://h:1/v1", context_window=4096)
    assert request_key(SPEC, request(moved)) == key
    # and the key is stable across processes and releases (a literal, not recomputed)
    assert key == "03db8230cf3bacac028db7f2d3f4bd342c5860c2b5dadf29b696a4474cb333cc"


def test_the_same_model_behind_another_port_reuses_the_cache(
    server: LoopbackServer, tmp_path: Path
) -> None:
    from tests.llm.servers import serve

    path = tmp_path / "replies.sqlite"
    server.respond_with(lambda r: Reply(tool_arguments='{"move": "N"}'))
    first = run(cached(server, path), game(ModelSettings(base_url=server.openai_base_url)))
    assert len(server.requests) == 5
    with serve() as moved:  # the same server restarted on a new port
        settings = ModelSettings(base_url=moved.openai_base_url)
        backend = CachedBackend(make_backend(SPEC, settings), path)
        again = run(backend, game(settings))
        assert moved.requests == [] and backend.hits == 5
    assert [r.tool_arguments for r in again] == [r.tool_arguments for r in first]


def test_identical_requests_share_a_reply_unless_repeats_are_distinct(
    server: LoopbackServer, tmp_path: Path
) -> None:
    counter = iter(range(100))
    server.respond_with(lambda r: Reply(text=f"sample {next(counter)}"))
    settings = ModelSettings(base_url=server.openai_base_url)
    same = [request(settings)] * 3
    plain = run(cached(server, tmp_path / "plain.sqlite"), same)
    assert [r.text for r in plain] == ["sample 0"] * 3 and len(server.requests) == 1
    path = tmp_path / "repeats.sqlite"
    distinct = run(cached(server, path, distinct_repeats=True), same)
    assert [r.text for r in distinct] == ["sample 1", "sample 2", "sample 3"]
    replay = run(cached(server, path, distinct_repeats=True, mode="read_only"), same)
    assert [r.text for r in replay] == ["sample 1", "sample 2", "sample 3"]


def test_failures_are_not_cached(server: LoopbackServer, tmp_path: Path) -> None:
    path = tmp_path / "replies.sqlite"
    server.push(HttpError(400))
    settings = ModelSettings(base_url=server.openai_base_url, retries=0)
    with pytest.raises(ModelUnavailable):
        run(cached(server, path), [request(settings)])
    server.push(Reply(text="now it works"))
    assert run(cached(server, path), [request(settings)])[0].text == "now it works"


def test_the_cache_never_holds_the_api_key(server: LoopbackServer, tmp_path: Path) -> None:
    path = tmp_path / "replies.sqlite"
    server.respond_with(lambda r: Reply(tool_arguments='{"move": "W"}'))
    settings = ModelSettings(base_url=server.openai_base_url)
    run(cached(server, path), game(settings, 2))
    assert KEY in server.requests[0].headers["authorization"]  # it was used...
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT * FROM replies").fetchall()
    assert len(rows) == 2
    assert all(KEY not in str(row) and "SECRET" not in str(row) for row in rows)
    for file in tmp_path.iterdir():  # ...and is in no file the cache wrote (WAL included)
        assert KEY.encode() not in file.read_bytes()


class _Remote:
    """A Ray actor method's stand-in: ``.remote(...)`` gives an awaitable of the call."""

    def __init__(self, method: Any) -> None:
        self.method = method

    def remote(self, *args: Any) -> Any:
        async def call() -> Any:
            return self.method(*args)

        return call()


class _DriverServices:
    """The run's services actor, in this process (what a Ray worker reaches on the driver)."""

    def __init__(self) -> None:
        from maze_envs.bench.travel import RunServices

        self.inner = RunServices()
        self.call = _Remote(self.inner.call)


def test_a_ray_worker_reads_and_writes_the_drivers_cache_through_the_driver(
    server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a batch of a Ray run the cache never opens the file itself: every lookup and store
    goes to the driver's services (on the driver's node, where the file is), and a relative
    path is the driver's."""
    from llm_policies.cache import DriverReplies
    from maze_envs.bench.travel import DriverLink, linked

    worker_dir = tmp_path / "worker"
    worker_dir.mkdir()
    monkeypatch.chdir(worker_dir)  # the worker's own folder: the cache must not land here
    services = _DriverServices()
    link = DriverLink(services, cwd=str(tmp_path / "driver"), record=False)
    server.respond_with(lambda r: Reply(tool_arguments='{"move": "N"}'))
    settings = ModelSettings(base_url=server.openai_base_url)
    with linked(link, get=lambda ref: ref):
        first = cached(server, Path("replies.sqlite"))
        assert isinstance(first._replies, DriverReplies)
        run(first, game(settings))
        again = cached(server, Path("replies.sqlite"))
        replies = run(again, game(settings))
    assert len(server.requests) == 5 and again.stats()["hits"] == 5
    assert all(reply.cached for reply in replies)
    services.inner.close()
    assert not (worker_dir / "replies.sqlite").exists()
    with sqlite3.connect(tmp_path / "driver" / "replies.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM replies").fetchone()[0] == 5
