"""The HTTP client and the env's HTTP backend against a real uvicorn server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
import uvicorn
from gymnasium.utils.env_checker import check_env

from maze_envs.agimaze.api import (
    AgiMazeAPIError,
    AgiMazeClient,
    AgiMazeConnectionError,
    AgiMazeProtocolError,
    AgiMazeTimeoutError,
    HttpBackend,
    expected_actions,
)
from maze_envs.agimaze.api.server import create_app
from maze_envs.agimaze.backends import ordered_actions
from maze_envs.agimaze.env import AgiMazeEnv
from maze_envs.agimaze.packs import list_bundles, resolve_pack_path
from tests.agimaze.test_env import needs_packs, random_rollout
from tests.agimaze.test_server import (
    CORRIDOR,
    MAZE,
    make_service,
    offline_labyrinths,
    write_pack,
)

SERVICE = make_service()


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """A real uvicorn server (over :data:`SERVICE`) on a free loopback port."""
    config = uvicorn.Config(create_app(SERVICE), host="127.0.0.1", port=0, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            server.should_exit = True
            pytest.fail("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# -- a plain standard-library client written from the API doc ---------------------------------


def post_json(url: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:  # the body is JSON on errors too
        return exc.code, json.loads(exc.read())


def get_json(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_plain_urllib_agent(base_url: str) -> None:
    status, desc = get_json(f"{base_url}/api/description")
    assert status == 200 and "treasure" in desc["description"]
    status, start = post_json(
        f"{base_url}/api/start", {"path": CORRIDOR, "seed": None, "client": "api", "agent": "plain"}
    )
    assert status == 200 and start["actions"] == ["up", "down", "left", "right"]
    sid = start["id"]
    status, bad = post_json(f"{base_url}/api/step", {"id": sid, "action": "fly", "seq": 1})
    assert status == 400
    assert bad == {"error": "bad_action", "action": "fly", "allowed": start["actions"]}
    texts = []
    for seq in (2, 3, 4):
        status, out = post_json(f"{base_url}/api/step", {"id": sid, "action": "right", "seq": seq})
        assert status == 200
        texts.append(out["text"])
    assert texts[-1] == "You leave the labyrinth with the treasure." and out["done"] is True
    status, snap = get_json(f"{base_url}/api/session?id={sid}")
    assert status == 200 and snap["steps"] == 3 and snap["inventory"] == out["inventory"]
    status, err = post_json(f"{base_url}/api/step", {"id": "nope", "action": "up", "seq": 1})
    assert status == 404 and err["error"] == "unknown_session"
    status, err = post_json(f"{base_url}/api/start", {"path": "../../etc/passwd", "agent": "x"})
    assert status == 400 and err["error"] == "bad_path"


# -- our client -----------------------------------------------------------------------------


def test_client_round_trip(base_url: str) -> None:
    client = AgiMazeClient(base_url)
    assert "monolith" in client.description()
    start = client.start(CORRIDOR, seed=0, agent="ours")
    assert client.step(start["id"], "right", 1)["inventory"] == {"key": True}
    bad = client.step(start["id"], "dig", 2)  # returned, not raised
    assert bad["error"] == "bad_action" and bad["allowed"] == start["actions"]
    assert client.session(start["id"])["steps"] == 1
    with pytest.raises(AgiMazeAPIError, match="unknown_session") as info:
        client.session("nope")
    assert info.value.status == 404
    with pytest.raises(AgiMazeAPIError, match="bad_path"):
        client.start("../../etc/passwd")
    client.close()


def test_a_retry_after_a_lost_reply_never_steps_twice(base_url: str) -> None:
    client = AgiMazeClient(base_url, retries=2, sleep=lambda s: None)
    sid = client.start(CORRIDOR, seed=0)["id"]
    real_once = client._once
    sent: list[bytes | None] = []

    def lose_first_reply(
        method: str, path: str, data: bytes | None, deadline: float
    ) -> tuple[int, bytes]:
        sent.append(data)
        result = real_once(method, path, data, deadline)  # the server applies the step...
        if len(sent) == 1:
            raise ConnectionResetError("reply lost")  # ...but the reply never arrives
        return result

    client._once = lose_first_reply  # type: ignore[method-assign]
    reply = client.step(sid, "right", 1)
    assert len(sent) == 2 and sent[0] == sent[1]  # the same request, the same seq
    assert reply["inventory"] == {"key": True}
    client._once = real_once  # type: ignore[method-assign]
    assert client.session(sid)["steps"] == 1


def test_a_step_without_seq_is_never_retried(base_url: str) -> None:
    client = AgiMazeClient(base_url, retries=3, sleep=lambda s: None)
    sid = client.start(CORRIDOR, seed=0)["id"]
    calls: list[str] = []

    def failing(method: str, path: str, data: bytes | None, deadline: float) -> tuple[int, bytes]:
        calls.append(path)
        raise ConnectionResetError("down")

    client._once = failing  # type: ignore[method-assign]
    with pytest.raises(AgiMazeConnectionError, match="after 1 attempt"):
        client.step(sid, "right", None)
    assert calls == ["/api/step"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connection_refused_is_a_clear_error() -> None:
    client = AgiMazeClient(f"http://127.0.0.1:{free_port()}", retries=1, sleep=lambda s: None)
    with pytest.raises(AgiMazeConnectionError, match=r"cannot reach the server.*2 attempt"):
        client.description()


def test_timeout_is_a_clear_error() -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        client = AgiMazeClient(
            f"http://127.0.0.1:{port}", timeout=0.2, retries=1, sleep=lambda s: None
        )
        with pytest.raises(AgiMazeTimeoutError, match=r"no complete answer within 0\.2 s"):
            client.start(CORRIDOR)


class _Scripted(BaseHTTPRequestHandler):
    """Answers from ``replies`` in turn (the last one repeats) and records each path."""

    replies: ClassVar[list[tuple[int, bytes]]]
    hits: ClassVar[list[str]]

    def _answer(self) -> None:
        self.hits.append(self.path)
        status, body = self.replies[min(len(self.hits), len(self.replies)) - 1]
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = _answer
    do_POST = _answer

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def scripted() -> Iterator[tuple[str, type[_Scripted]]]:
    handler = type("Handler", (_Scripted,), {"replies": [], "hits": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


def test_gateway_errors_are_retried(scripted: tuple[str, type[_Scripted]]) -> None:
    url, handler = scripted
    handler.replies = [(503, b'{"error": "busy"}'), (200, b'{"description": "ok"}')]
    waits: list[float] = []
    assert AgiMazeClient(url, retries=2, backoff=0.5, sleep=waits.append).description() == "ok"
    assert len(handler.hits) == 2 and waits == [0.5]
    handler.hits.clear()
    handler.replies = [(502, b"{}")]
    with pytest.raises(AgiMazeAPIError, match="HTTP 502") as info:
        AgiMazeClient(url, retries=2, sleep=waits.append).description()
    assert info.value.status == 502 and len(handler.hits) == 3


def test_non_json_replies_are_protocol_errors(scripted: tuple[str, type[_Scripted]]) -> None:
    url, handler = scripted
    handler.replies = [(200, b"<html>hello</html>")]
    with pytest.raises(AgiMazeProtocolError, match="not JSON"):
        AgiMazeClient(url).description()
    handler.replies = [(200, b"[1]")]
    with pytest.raises(AgiMazeProtocolError, match="not a JSON object"):
        AgiMazeClient(url).session("x")


def test_client_argument_validation() -> None:
    with pytest.raises(ValueError, match="base_url"):
        AgiMazeClient("ftp://x")
    with pytest.raises(ValueError, match="timeout"):
        AgiMazeClient("http://x", timeout=0)
    with pytest.raises(ValueError, match="retries"):
        AgiMazeClient("http://x", retries=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="backoff"):
        AgiMazeClient("http://x", backoff=-1.0)


def test_a_hostile_server_cannot_push_observations_out_of_their_spaces(
    scripted: tuple[str, type[_Scripted]],
) -> None:
    url, handler = scripted
    started = {"id": "s", "actions": ["up", "down", "\u00fcber"], "text": "Game has started."}
    refused = {"error": "bad_action", "action": "up", "allowed": ["\u00fcber" * 2000]}
    handler.replies = [
        (200, json.dumps(started).encode()),  # the episode (nothing is sent at construction)
        (400, json.dumps(refused).encode()),
    ]
    env = AgiMazeEnv(path="X", backend=HttpBackend(url))
    assert handler.hits == []
    with pytest.warns(UserWarning, match="offers actions \\['\u00fcber'\\]"):
        obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    obs, _, _, _, info = env.step_name("up")
    assert info["error"]["allowed"] == refused["allowed"]
    assert "Invalid action 'up'" in obs["text"] and env.observation_space.contains(obs)


def test_a_server_without_actions_is_a_protocol_error(
    scripted: tuple[str, type[_Scripted]],
) -> None:
    url, handler = scripted
    handler.replies = [(200, b'{"id": "s", "actions": [], "text": "Game has started."}')]
    env = AgiMazeEnv(path="X", backend=HttpBackend(url))
    with pytest.raises(AgiMazeProtocolError, match="no action names"):
        env.reset(seed=0)


def test_max_steps_overrides_the_servers_budget(base_url: str) -> None:
    remote = AgiMazeEnv(path=CORRIDOR, backend=HttpBackend(base_url), max_steps=7)
    local = AgiMazeEnv(labyrinth=offline_labyrinths()[CORRIDOR], max_steps=7)
    for env in (remote, local):
        assert env.reset(seed=0)[1]["max_steps"] == 7
        for _ in range(34):
            *_, truncated, info = env.step_name("left")
        assert not truncated
        *_, truncated, info = env.step_name("left")
        assert truncated and info["budget"] == 35


# -- the env's HTTP backend -----------------------------------------------------------------


def test_http_backend_plays_like_the_local_engine(base_url: str) -> None:
    lab = offline_labyrinths()[MAZE]
    remote = AgiMazeEnv(path=MAZE, backend=HttpBackend(base_url, agent="env-test"))
    local = AgiMazeEnv(labyrinth=lab)
    assert remote.action_names == local.action_names
    assert remote.observation_space == local.observation_space
    a = random_rollout(remote, seed=5, steps=150)
    b = random_rollout(local, seed=5, steps=150)
    assert a == b
    remote.close()


def test_http_backend_win_and_info(base_url: str) -> None:
    env = AgiMazeEnv(path=CORRIDOR, backend=HttpBackend(base_url))
    obs, info = env.reset(seed=0)
    assert obs["text"] == "Game has started." and info["max_steps"] == 4
    for _ in range(3):
        obs, reward, terminated, _, info = env.step_name("right")
    assert terminated and reward == 1.0 and info["solved"]
    assert info["rhae"] == pytest.approx((0.7 * 4 / 3) ** 2)
    session = env.backend.client.session(env.backend.session_id)  # type: ignore[attr-defined]
    assert session["steps"] == 3 and session["done"]


def test_http_bad_action_becomes_an_observation(base_url: str) -> None:
    env = AgiMazeEnv(path=CORRIDOR, backend=HttpBackend(base_url))
    env.reset(seed=0)
    outcome = env.backend.step("look_up")  # a name the server does not offer here
    assert outcome.error == {
        "error": "bad_action",
        "action": "look_up",
        "allowed": ["up", "down", "left", "right"],
    }
    assert "look_up" in outcome.text and outcome.formal["status"] == "blocked"
    obs, *_ = env.step_name("right")  # the session goes on with the next seq
    assert "key" in obs["text"]


def test_http_backend_directory_draw_matches_local(base_url: str) -> None:
    names = {
        AgiMazeEnv(path="TEST", backend=HttpBackend(base_url)).reset(seed=s)[1]["name"]
        for s in range(12)
    }
    assert names == set(offline_labyrinths())
    env = AgiMazeEnv(path="TEST", backend=HttpBackend(base_url))
    assert [env.reset(seed=s)[1]["name"] for s in range(6)] == [
        env.reset(seed=s)[1]["name"] for s in range(6)
    ]


def test_the_serve_command_in_a_subprocess(tmp_path: Path) -> None:
    write_pack(tmp_path)
    port = free_port()
    command = [sys.executable, "-m", "maze_envs.cli", "agimaze", "serve", "--port", str(port)]
    server = subprocess.Popen(
        [*command, "--pack-root", str(tmp_path), "--log-level", "error"],
        stdout=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                get_json(f"{base}/api/description")
                break
            except urllib.error.URLError:
                assert time.monotonic() < deadline and server.poll() is None, "server did not start"
                time.sleep(0.1)
        status, start = post_json(
            f"{base}/api/start", {"path": "MINE/STAGE-01/0000.json", "client": "api", "agent": "x"}
        )
        assert status == 200 and start["task_meta"]["board"] == {"n": 1, "m": 3}
        status, err = post_json(f"{base}/api/start", {"path": "TRAINING/S0-keys", "agent": "x"})
        assert status == 400 and err["error"] == "bad_path"  # only the given root is served
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_check_env_over_http(base_url: str) -> None:
    check_env(AgiMazeEnv(path=MAZE, backend=HttpBackend(base_url)))


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (b"{}", "lacks the documented field 'id'"),
        (b'{"id": "s", "actions": "up", "text": "x"}', "field 'actions' (list)"),
        (b'{"id": "s", "actions": ["up"], "text": 5}', "field 'text' (str)"),
        (b'{"id": "", "actions": ["up"], "text": "x"}', "no session id"),
        (b'{"id": "s", "actions": ["up"], "text": "x", "formal": []}', "field 'formal'"),
    ],
)
def test_start_replies_without_the_documented_fields_are_protocol_errors(
    scripted: tuple[str, type[_Scripted]], reply: bytes, fragment: str
) -> None:
    url, handler = scripted
    handler.replies = [(200, reply)]
    with pytest.raises(AgiMazeProtocolError, match=re.escape(fragment)):
        AgiMazeClient(url).start(CORRIDOR)
    env = AgiMazeEnv(path="X", backend=HttpBackend(url))
    with pytest.raises(AgiMazeProtocolError):
        env.reset(seed=0)


def test_a_step_reply_of_an_empty_object_is_never_an_observation(
    scripted: tuple[str, type[_Scripted]],
) -> None:
    url, handler = scripted
    started = {"id": "s", "actions": ["up", "down", "left", "right"], "text": "Game has started."}
    handler.replies = [(200, json.dumps(started).encode()), (200, b"{}")]
    env = AgiMazeEnv(path="X", backend=HttpBackend(url, retries=0))
    env.reset(seed=0)
    with pytest.raises(AgiMazeProtocolError, match="lacks the documented field 'text'"):
        env.step_name("up")
    assert env.unwrapped._steps == 0  # nothing counted for a reply that says nothing


@needs_packs
def test_the_actions_a_path_implies_are_those_of_the_shipped_packs() -> None:
    """The HTTP env's action space (no session at construction) matches every stage's bundles."""
    stages: dict[str, set[str]] = {}
    for name in list_bundles():
        stage = name.rsplit("/", 1)[0]
        stages.setdefault(stage, set()).update(resolve_pack_path(name)[1].labyrinth.actions)
    assert len(stages) == 58
    for stage, actions in stages.items():
        assert expected_actions(stage) == ordered_actions(actions), stage
        assert expected_actions(f"{stage}/0000.json") == ordered_actions(actions), stage
