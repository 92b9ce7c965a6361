"""The offline AGI Maze API server: endpoints, errors, seq replay, sessions, concurrency."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from starlette.testclient import TestClient

from maze_envs.agimaze.api.server import AgiMazeService, create_app, openapi_schema, root_resolver
from maze_envs.agimaze.api.server import main as serve_main
from maze_envs.agimaze.bundle import save_bundle
from maze_envs.agimaze.model_text import API_DESCRIPTION
from maze_envs.agimaze.packs import PackPathError, resolve_pack_path
from maze_envs.agimaze.types import Bundle, BundleMeta, Labyrinth
from tests.agimaze.test_env import corridor, generated, needs_packs

CORRIDOR = "TEST/corridor.json"
MAZE = "TEST/maze.json"


def offline_labyrinths() -> dict[str, Labyrinth]:
    """Pack-like names for labyrinths built in the tests (usable before packs are built)."""
    return {
        CORRIDOR: corridor(max_steps=4),
        "TEST/tutorial.json": corridor(max_steps=4, open_map=True),
        MAZE: generated(4),
    }


def resolver(path: str, rng: np.random.Generator | None) -> tuple[str, Bundle]:
    """Test labyrinths under TEST/, the real packs (and their path checks) otherwise."""
    labs = offline_labyrinths()
    if path in labs:
        return path, Bundle(labyrinth=labs[path], meta=BundleMeta(path=path))
    if path == "TEST":
        names = sorted(labs)
        name = names[0 if rng is None else int(rng.integers(len(names)))]
        return name, Bundle(labyrinth=labs[name])
    return resolve_pack_path(path, rng)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make_service(
    max_sessions: int = 1000,
    ttl_seconds: float = 3600.0,
    clock: Clock | None = None,
    idle_seconds: float = 1.0,
) -> AgiMazeService:
    return AgiMazeService(
        resolver=resolver,
        max_sessions=max_sessions,
        ttl_seconds=ttl_seconds,
        clock=clock or Clock(),
        idle_seconds=idle_seconds,
    )


def make_client(
    max_sessions: int = 1000,
    ttl_seconds: float = 3600.0,
    clock: Clock | None = None,
    idle_seconds: float = 1.0,
) -> TestClient:
    return TestClient(create_app(make_service(max_sessions, ttl_seconds, clock, idle_seconds)))


@pytest.fixture
def client() -> Iterator[TestClient]:
    with make_client() as c:
        yield c


def start(client: TestClient, path: str = CORRIDOR, seed: int | None = 0) -> dict:
    reply = client.post(
        "/api/start", json={"path": path, "seed": seed, "client": "api", "agent": "test"}
    )
    assert reply.status_code == 200, reply.text
    return reply.json()


def step(client: TestClient, sid: str, action: str, seq: int | None) -> tuple[int, dict]:
    reply = client.post("/api/step", json={"id": sid, "action": action, "seq": seq})
    return reply.status_code, reply.json()


def test_description(client: TestClient) -> None:
    reply = client.get("/api/description")
    assert reply.status_code == 200
    assert reply.json() == {"description": API_DESCRIPTION}


def test_start_reply_has_the_public_fields(client: TestClient) -> None:
    body = start(client)
    assert set(body) == {"id", "actions", "task_meta", "text", "formal", "map", "inventory", "info"}
    assert body["actions"] == ["up", "down", "left", "right"]
    assert body["task_meta"] == {
        "max_steps": 4,
        "board": {"n": 1, "m": 3},
        "start": {"row": 0, "col": 0},
    }
    assert body["text"] == "Game has started."
    assert body["formal"] == {
        "status": "success",
        "observe": "empty",
        "events": [],
        "inventory": {},
        "details": {},
    }
    assert body["inventory"] == {}
    # a hidden labyrinth shows the public map (closed frame and player), a tutorial the full map
    assert body["map"] == "+---+---+---+\n| S         |\n+---+---+---+"
    assert (
        start(client, "TEST/tutorial.json")["map"] == "+---+---+---+\n| S   K   T  \n+---+---+---+"
    )


def test_play_to_the_win_then_game_over(client: TestClient) -> None:
    sid = start(client)["id"]
    replies = [step(client, sid, "right", seq) for seq in (1, 2, 3)]
    assert [status for status, _ in replies] == [200, 200, 200]
    last = replies[-1][1]
    assert set(last) == {"text", "done", "formal", "inventory", "events", "map"}
    assert last["text"] == "You leave the labyrinth with the treasure."
    assert last["done"] is True and last["events"] == ["exited"]
    assert last["inventory"] == {"key": True, "treasure": True}
    assert [r[1]["done"] for r in replies] == [False, False, True]
    status, body = step(client, sid, "left", 4)
    assert status == 409 and body["error"] == "game_over"
    snapshot = client.get("/api/session", params={"id": sid}).json()
    assert snapshot["steps"] == 3 and snapshot["done"] is True


def test_bad_action_is_the_public_error_and_costs_no_step(client: TestClient) -> None:
    sid = start(client)["id"]
    status, body = step(client, sid, "jump", 1)
    assert status == 400
    assert body == {
        "error": "bad_action",
        "action": "jump",
        "allowed": ["up", "down", "left", "right"],
    }
    assert client.get("/api/session", params={"id": sid}).json()["steps"] == 0
    status, body = step(client, sid, "right", 2)  # agents keep counting across errors
    assert status == 200 and "key" in body["text"]


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "JSON object"),
        (b"", "not valid JSON"),
        (json.dumps({"seed": 1, "client": "api", "agent": "a"}).encode(), "path"),
        (json.dumps({"path": CORRIDOR, "client": "api"}).encode(), "agent"),
        (json.dumps({"path": CORRIDOR, "seed": "x", "agent": "a"}).encode(), "seed"),
        (json.dumps({"path": 5, "agent": "a"}).encode(), "path"),
        (json.dumps({"path": CORRIDOR, "seed": -1, "agent": "a"}).encode(), "seed"),
        (b'{"path": "x", "agent": "a", "seed": ' + b"1" * 5000 + b"}", "not valid JSON"),
        (b"[" * 5000 + b"]" * 5000, "not valid JSON"),
    ],
)
def test_malformed_start_requests(client: TestClient, raw: bytes, fragment: str) -> None:
    reply = client.post("/api/start", content=raw, headers={"Content-Type": "application/json"})
    assert reply.status_code == 400
    body = reply.json()
    assert body["error"] == "bad_request" and fragment in body["detail"]


@pytest.mark.parametrize(
    "payload",
    [
        {"action": "up"},
        {"id": "x"},
        {"id": "x", "action": 3},
        {"id": "x", "action": "up", "seq": "1"},
        {"id": "x" * 129, "action": "up"},
        {"id": "x", "action": "x" * 65},
    ],
)
def test_malformed_step_requests(client: TestClient, payload: dict) -> None:
    reply = client.post("/api/step", json=payload)
    assert reply.status_code == 400
    assert reply.json()["error"] == "bad_request" and reply.json()["detail"]


def test_unknown_session_ids(client: TestClient) -> None:
    status, body = step(client, "no-such-id", "up", 1)
    assert status == 404 and body["error"] == "unknown_session"
    reply = client.get("/api/session", params={"id": "no-such-id"})
    assert reply.status_code == 404 and reply.json()["error"] == "unknown_session"
    reply = client.get("/api/session")
    assert reply.status_code == 400 and "id" in reply.json()["detail"]
    reply = client.get("/api/session", params={"id": "x" * 5000})  # not echoed back
    assert reply.status_code == 400 and "longer than 128" in reply.json()["detail"]
    assert len(reply.text) < 200


def test_an_action_that_is_not_unicode_is_a_bad_request(client: TestClient) -> None:
    sid = start(client)["id"]
    raw = b'{"id": "' + sid.encode() + b'", "action": "\\ud800", "seq": 1}'  # lone surrogate
    reply = client.post("/api/step", content=raw)
    assert reply.status_code == 400 and reply.json()["error"] == "bad_request"
    assert step(client, sid, "right", 1) == step(client, sid, "right", 1)  # seq 1 still free


def test_a_replayed_reply_is_unchanged_by_what_a_caller_did_to_the_first() -> None:
    service = make_service()
    _, started = service.start(json.dumps({"path": CORRIDOR, "agent": "a"}).encode())
    request = json.dumps({"id": started["id"], "action": "right", "seq": 1}).encode()
    status, first = service.step(request)
    expected = json.loads(json.dumps(first))
    first["text"] = "tampered"
    first["formal"]["events"].append("tampered")
    assert service.step(request) == (status, expected)


def test_an_oversized_body_is_refused_with_413(client: TestClient) -> None:
    raw = b'{"path": "' + b"x" * 20000 + b'", "agent": "a"}'
    reply = client.post("/api/start", content=raw, headers={"Content-Type": "application/json"})
    assert reply.status_code == 413
    assert reply.json() == {
        "error": "body_too_large",
        "detail": f"request body of {len(raw)} bytes declared; at most 16384 bytes are accepted",
    }
    assert reply.headers["connection"] == "close"
    assert len(make_service().sessions) == 0


def test_a_bad_content_length_is_a_bad_request(client: TestClient) -> None:
    reply = client.post("/api/start", content=b"{}", headers={"Content-Length": "-1"})
    assert reply.status_code == 400 and "Content-Length" in reply.json()["detail"]


def test_seq_replay_returns_the_stored_reply_without_stepping(client: TestClient) -> None:
    sid = start(client)["id"]
    first = step(client, sid, "right", 1)
    again = step(client, sid, "right", 1)
    assert first == again
    snapshot = client.get("/api/session", params={"id": sid}).json()
    assert snapshot["steps"] == 1 and snapshot["inventory"] == {"key": True}
    # a replayed error reply is also stored: seq 2 stays a bad action even if resent
    assert step(client, sid, "jump", 2)[0] == 400
    assert step(client, sid, "jump", 2)[1]["error"] == "bad_action"
    assert step(client, sid, "right", 5)[0] == 200  # gaps are allowed
    status, body = step(client, sid, "right", 3)  # older than the latest, never answered
    assert status == 409 and body["error"] == "stale_seq"
    # seq null always steps
    assert step(client, sid, "left", None)[0] == 200
    assert step(client, sid, "left", None)[0] == 200
    assert client.get("/api/session", params={"id": sid}).json()["steps"] == 4


def test_a_stored_seq_with_another_action_is_refused(client: TestClient) -> None:
    sid = start(client)["id"]
    first = step(client, sid, "right", 1)
    status, body = step(client, sid, "left", 1)
    assert status == 409 and body == {
        "error": "seq_conflict",
        "detail": "seq 1 was already used for action 'right', resent with 'left'; a retry must "
        "resend the same action, and a new step needs a new seq",
    }
    assert step(client, sid, "right", 1) == first  # the same action is still replayed
    assert client.get("/api/session", params={"id": sid}).json()["steps"] == 1


def test_replay_window_boundary() -> None:
    with make_client() as client:
        sid = start(client)["id"]
        replies = {seq: step(client, sid, "up", seq) for seq in range(1, 81)}
        assert all(status == 200 for status, _ in replies.values())
        # 64 replies are kept: seqs 17..80; seq 16 is the newest one forgotten
        assert step(client, sid, "up", 17) == replies[17]
        assert step(client, sid, "up", 80) == replies[80]
        status, body = step(client, sid, "up", 16)
        assert status == 409 and body["error"] == "stale_seq"
        assert "seq 16 is older than the latest seq 80" in body["detail"]
        assert client.get("/api/session", params={"id": sid}).json()["steps"] == 80


def test_session_expiry_boundary() -> None:
    clock = Clock()
    with make_client(ttl_seconds=60.0, clock=clock) as client:
        sid = start(client)["id"]  # last used at t=0 (times chosen exact in binary)
        clock.now = 59.75
        assert client.get("/api/session", params={"id": sid}).status_code == 200  # idle 59.75 s
        clock.now = 119.5
        assert step(client, sid, "up", 1)[0] == 200  # idle 59.75 s again: still alive
        clock.now = 179.5  # idle exactly 60 s: expired
        status, body = step(client, sid, "up", 2)
        assert status == 404 and body["error"] == "unknown_session"


def test_sessions_expire_after_the_ttl() -> None:
    clock = Clock()
    with make_client(ttl_seconds=60.0, clock=clock) as client:
        old = start(client)["id"]
        clock.now = 30.0
        kept = start(client)["id"]
        assert step(client, old, "up", 1)[0] == 200  # used at t=30: its TTL restarts
        clock.now = 89.0
        assert step(client, old, "up", 2)[0] == 200
        clock.now = 95.0  # kept was last used at t=30
        assert step(client, kept, "up", 1)[1]["error"] == "unknown_session"
        assert step(client, old, "up", 3)[0] == 200


def test_a_server_full_of_sessions_in_play_refuses_new_starts_and_evicts_none() -> None:
    clock = Clock()
    with make_client(max_sessions=2, ttl_seconds=60.0, clock=clock, idle_seconds=30.0) as client:
        a = start(client)["id"]
        clock.now = 10.0
        b = start(client)["id"]
        clock.now = 20.0  # a idle 20 s: still in play (the idle limit is 30 s)
        for _ in range(5):  # anyone may try: the sessions in play stay
            reply = client.post("/api/start", json={"path": CORRIDOR, "agent": "greedy"})
            assert reply.status_code == 503
            body = reply.json()
            assert body["error"] == "server_full" and body["retry_after"] == 10
            assert reply.headers["retry-after"] == "10"
            assert "2 unfinished sessions" in body["detail"] and "10 s" in body["detail"]
            assert body["unfinished"] == 2
        assert step(client, a, "up", 1)[0] == 200 and step(client, b, "up", 1)[0] == 200
        clock.now = 50.0  # a and b last used at t=20: idle 30 s, so the oldest makes room
        c = start(client)["id"]
        assert step(client, c, "up", 1)[0] == 200 and step(client, b, "up", 2)[0] == 200
        status, body = step(client, a, "up", 2)
        assert status == 404 and body["error"] == "unknown_session"
        assert body["reason"] == "evicted_idle" and "evicted unfinished" in body["detail"]


def test_concurrent_sessions_with_threads(client: TestClient) -> None:
    ids = [start(client, MAZE)["id"] for _ in range(8)]
    errors: list[str] = []

    def play(sid: str) -> None:
        for seq in range(1, 51):
            status, body = step(client, sid, ("up", "down", "left", "right")[seq % 4], seq)
            if status != 200:
                errors.append(f"{sid} {seq}: {status} {body}")

    threads = [threading.Thread(target=play, args=(sid,)) for sid in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    snapshots = [client.get("/api/session", params={"id": sid}).json() for sid in ids]
    assert [s["steps"] for s in snapshots] == [50] * 8
    assert len({s["map"] for s in snapshots}) == 1  # same actions, same labyrinth: same end


def test_the_same_seq_from_many_threads_steps_once(client: TestClient) -> None:
    sid = start(client)["id"]
    replies: list[tuple[int, dict]] = []
    threads = [
        threading.Thread(target=lambda: replies.append(step(client, sid, "right", 1)))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(replies) == 8 and all(r == replies[0] for r in replies)
    assert client.get("/api/session", params={"id": sid}).json()["steps"] == 1


def test_unknown_routes_and_methods_are_json(client: TestClient) -> None:
    reply = client.get("/api/nothing")
    assert reply.status_code == 404 and reply.json()["error"] == "not_found"
    reply = client.get("/api/step")
    assert reply.status_code == 405 and reply.json()["error"] == "method_not_allowed"


def test_openapi_schema_describes_the_endpoints(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert schema == json.loads(json.dumps(openapi_schema()))
    assert set(schema["paths"]) == {"/api/description", "/api/start", "/api/step", "/api/session"}
    components = schema["components"]["schemas"]
    assert {
        "StartRequest",
        "StepRequest",
        "StartResponse",
        "StepResponse",
        "BadActionError",
    } <= set(components)
    assert "seq" in components["StepRequest"]["properties"]


def test_directory_paths_draw_from_the_seed(client: TestClient) -> None:
    names = {start(client, "TEST", seed)["info"]["path"] for seed in range(20)}
    assert names == set(offline_labyrinths())
    assert start(client, "TEST", 3)["info"] == start(client, "TEST", 3)["info"]


def test_resolver_errors_are_bad_path() -> None:
    def refusing(path: str, rng: np.random.Generator | None) -> tuple[str, Bundle]:
        raise PackPathError(f"no pack entry {path!r}")

    with TestClient(create_app(AgiMazeService(resolver=refusing))) as client:
        reply = client.post("/api/start", json={"path": "X/Y", "agent": "a"})
        assert reply.status_code == 400 and reply.json() == {
            "error": "bad_path",
            "detail": "no pack entry 'X/Y'",
        }


@needs_packs
def test_real_packs(client: TestClient) -> None:
    body = start(client, "TRAINING/S0-keys/STAGE-01/0005.json")
    assert body["task_meta"]["max_steps"] == 70
    assert body["task_meta"]["board"] == {"n": 3, "m": 3}
    assert start(client, "TRAINING/S0-keys/STAGE-01", 4)["info"]["path"].startswith(
        "TRAINING/S0-keys/STAGE-01/"
    )
    reply = client.post("/api/start", json={"path": "TRAINING/NOPE", "agent": "a"})
    assert reply.status_code == 400 and reply.json()["error"] == "bad_path"


def write_pack(root: Path) -> None:
    save_bundle(Bundle(labyrinth=corridor()), root / "MINE" / "STAGE-01" / "0000.json")
    save_bundle(Bundle(labyrinth=generated(4)), root / "MINE" / "STAGE-01" / "0001.json")


def test_pack_root_resolver_serves_a_custom_tree(tmp_path: Path) -> None:
    write_pack(tmp_path / "packs")
    resolve = root_resolver(tmp_path / "packs")
    name, bundle = resolve("MINE/STAGE-01/0000.json", None)
    assert name == "MINE/STAGE-01/0000.json" and bundle.labyrinth == corridor()
    drawn = {resolve("MINE/STAGE-01", np.random.default_rng(s))[0] for s in range(12)}
    assert drawn == {"MINE/STAGE-01/0000.json", "MINE/STAGE-01/0001.json"}
    (tmp_path / "secret.json").write_text("{}")
    (tmp_path / "packs" / "LINK").symlink_to(tmp_path)
    for bad in ("../secret.json", "/etc/passwd", "MINE/../../secret.json", "LINK/secret.json",
                "MINE\\STAGE-01", ".hidden", "MINE/NOPE", ""):  # fmt: skip
        with pytest.raises(PackPathError):
            resolve(bad, None)
    with pytest.raises(ValueError, match="not a directory"):
        root_resolver(tmp_path / "missing")


def test_serve_command_validates_its_options(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        serve_main(["--pack-root", str(tmp_path / "missing")])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit) as exit_info:
        serve_main(["--max-sessions", "0"])
    assert exit_info.value.code == 2
