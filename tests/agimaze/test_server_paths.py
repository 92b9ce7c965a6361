"""Pack paths through the server: escapes aimed at files that exist, long names, FIFOs, leaks.

Every escape here targets a real, valid bundle outside the pack root (a sibling folder, a
folder whose name starts like the root's, symbolic links), so removing the checks would serve
it: the tests fail then, instead of passing on "no such file".
"""

from __future__ import annotations

import json
import os
import random
import threading
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from starlette.testclient import TestClient

import maze_envs  # noqa: F401  (registers the environments)
import maze_envs.agimaze.packs as packs
from maze_envs.agimaze.api.server import AgiMazeService, create_app, root_resolver
from maze_envs.agimaze.bundle import save_bundle
from maze_envs.agimaze.packs import PACK_ROOT, PackPathError, list_bundles, resolve_pack_path
from maze_envs.agimaze.types import Bundle
from tests.agimaze.test_env import corridor, generated


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``packs/`` (the root) beside ``sibling/`` and ``packs-evil/``, both holding bundles."""
    base = tmp_path.resolve()
    root = base / "packs"
    save_bundle(Bundle(labyrinth=corridor()), root / "GOOD" / "0000.json")
    save_bundle(Bundle(labyrinth=generated(4)), base / "sibling" / "0000.json")
    save_bundle(Bundle(labyrinth=generated(5)), base / "packs-evil" / "0000.json")
    os.symlink(base / "sibling", root / "LINK")
    os.symlink(base / "sibling" / "0000.json", root / "GOOD" / "link.json")
    os.mkfifo(root / "GOOD" / "x.json")
    return root


def service_for(root: Path) -> AgiMazeService:
    return AgiMazeService(resolver=root_resolver(root))


def start(service: AgiMazeService, path: str) -> tuple[int, dict]:
    return service.start(json.dumps({"path": path, "agent": "probe"}).encode())


def test_the_targets_outside_the_root_really_load(tree: Path) -> None:
    """Without the checks these files would be served: the refusals below are meaningful."""
    outside = tree.parent
    assert resolve_pack_path("sibling/0000.json", root=outside)[1].labyrinth == generated(4)
    assert resolve_pack_path("packs-evil/0000.json", root=outside)[1].labyrinth == generated(5)
    assert (tree / "LINK" / "0000.json").is_file() and (tree / "GOOD" / "link.json").is_file()


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../sibling/0000.json", "has an empty, '.' or '..' part"),
        ("GOOD/../../sibling/0000.json", "has an empty, '.' or '..' part"),
        ("../packs-evil/0000.json", "has an empty, '.' or '..' part"),
        ("LINK/0000.json", "goes through a symbolic link; refused"),
        ("GOOD/link.json", "goes through a symbolic link; refused"),
        ("GOOD\\..\\..\\sibling\\0000.json", "contains a backslash"),
    ],
)
def test_escapes_to_existing_files_are_refused(tree: Path, path: str, reason: str) -> None:
    service = service_for(tree)
    status, body = start(service, path)
    assert (status, body["error"]) == (400, "bad_path")
    assert body["detail"].startswith(f"pack path {path!r} ") and reason in body["detail"]
    assert len(service.sessions) == 0


def test_absolute_paths_to_existing_files_are_refused(tree: Path) -> None:
    path = str(tree.parent / "sibling" / "0000.json")
    status, body = start(service_for(tree), path)
    assert (status, body["error"]) == (400, "bad_path") and "is absolute" in body["detail"]


def test_the_resolved_path_check_holds_alone(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Second layer: with the spelling checks gone, the resolved target still must stay inside."""
    monkeypatch.setattr(packs, "_split", lambda path, root: path.split("/"))
    with pytest.raises(PackPathError, match=r"leaves the pack root; refused$"):
        resolve_pack_path("../sibling/0000.json", root=tree)
    with pytest.raises(PackPathError, match=r"leaves the pack root; refused$"):
        resolve_pack_path("../packs-evil/0000.json", root=tree)


@pytest.mark.parametrize("part", ["a" * 256, "\u00e9" * 128, "\u00e9" * 127 + "ab"])
def test_overlong_path_parts_are_bad_path_naming_only_the_request(tree: Path, part: str) -> None:
    for path in (part, f"GOOD/{part}"):
        status, body = start(service_for(tree), path)
        assert (status, body) == (
            400,
            {
                "error": "bad_path",
                "detail": f"pack path {path!r} has a part longer than 255 bytes (UTF-8)",
            },
        )


def test_a_part_of_exactly_255_bytes_is_looked_up(tree: Path) -> None:
    status, body = start(service_for(tree), "GOOD/" + "a" * 255)
    assert status == 400 and body["detail"].startswith("no pack entry")


def test_gym_make_raises_pack_path_error_for_overlong_parts() -> None:
    root = str(PACK_ROOT.resolve())
    for path, reason in [
        ("a" * 256, "has a part longer than 255 bytes (UTF-8)"),
        ("\u00e9" * 128, "has a part longer than 255 bytes (UTF-8)"),
        ("TRAINING/" + "b" * 247, None),  # 247 bytes are allowed: simply not there
    ]:
        with pytest.raises(PackPathError) as info:
            gym.make("maze_envs/AgiMaze-v0", path=path)
        message = str(info.value)
        if reason is not None:
            assert message == f"pack path {path!r} {reason}"
        else:
            assert message.startswith(f"no pack entry {path!r}")
        assert root not in message and str(Path.cwd()) not in message


def test_an_os_error_is_a_pack_path_error_without_the_os_path(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(self: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "is_symlink", failing)
    with pytest.raises(PackPathError) as info:
        resolve_pack_path("GOOD/0000.json", root=tree)
    assert str(info.value) == "pack path 'GOOD/0000.json' cannot be read (permission denied)"


def test_a_fifo_named_like_a_bundle_is_skipped_and_refused(tree: Path) -> None:
    assert list_bundles(root=tree) == ["GOOD/0000.json"]
    draws = {resolve_pack_path("GOOD", np.random.default_rng(s), root=tree)[0] for s in range(20)}
    assert draws == {"GOOD/0000.json"}
    result: list[tuple[int, dict]] = []
    worker = threading.Thread(target=lambda: result.append(start(service_for(tree), "GOOD/x.json")))
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "reading a FIFO blocked"
    status, body = result[0]
    assert (status, body["error"]) == (400, "bad_path")
    assert body["detail"] == (
        "pack path 'GOOD/x.json' is not a regular file or a directory; refused"
    )
    with pytest.raises(PackPathError, match="not a regular file"):
        gym.make("maze_envs/AgiMaze-v0", path="GOOD/x.json", pack_root=tree)


def test_a_damaged_bundle_names_only_its_pack_path(tree: Path) -> None:
    (tree / "GOOD" / "0001.json").write_text('{"format_version": 1}')
    status, body = start(service_for(tree), "GOOD/0001.json")
    assert status == 400 and body["detail"].startswith("pack bundle 'GOOD/0001.json' is damaged")
    assert str(tree) not in body["detail"]


def test_pack_reads_stay_off_the_event_loop() -> None:
    """A start whose pack read hangs must not hold up other clients."""
    entered, release = threading.Event(), threading.Event()

    def slow(path: str, rng: np.random.Generator | None) -> tuple[str, Bundle]:
        entered.set()
        release.wait(timeout=60)  # generous: only reached if the description hangs
        return "SLOW/0000.json", Bundle(labyrinth=corridor())

    order: list[str] = []
    with TestClient(create_app(AgiMazeService(resolver=slow))) as client:

        def slow_start() -> None:
            client.post("/api/start", json={"path": "SLOW", "agent": "a"})
            order.append("start")

        worker = threading.Thread(target=slow_start)
        worker.start()
        assert entered.wait(timeout=60), "the start never reached the resolver"
        assert client.get("/api/description").status_code == 200
        order.append("description")
        release.set()
        worker.join(timeout=60)
    assert order == ["description", "start"]


def hostile_paths(rng: random.Random) -> list[str]:
    pieces = ["..", ".", "", "GOOD", "LINK", "x.json", "0000.json", "\x00", "%2e%2e", "~",
              "\u00e9" * 130, "a" * 300, "\\", "C:", "/", "sibling", "packs-evil", "\ud800",
              "GOOD/link.json", "\U0001f600" * 70, "NOPE"]  # fmt: skip
    paths = ["/etc/passwd", "x" * 600]  # (a reply may echo the request: no server path in it)
    for _ in range(300):
        paths.append("/".join(rng.choice(pieces) for _ in range(rng.randint(1, 5))))
    return paths


def test_no_reply_of_a_fuzz_set_names_a_path_of_the_server(tree: Path) -> None:
    """Every error reply, for hostile paths and bodies, is free of the server's own paths."""
    rng = random.Random(6)
    secrets = {str(tree), str(tree.parent), str(PACK_ROOT), str(PACK_ROOT.parent), os.getcwd()}
    replies: list[str] = []

    def boom(path: str, rng_: np.random.Generator | None) -> tuple[str, Bundle]:
        raise RuntimeError(f"cannot open {tree / path}")  # a bug: must not reach the client

    with (
        TestClient(create_app(service_for(tree))) as client,
        TestClient(create_app(AgiMazeService()), raise_server_exceptions=False) as shipped,
        TestClient(create_app(AgiMazeService(resolver=boom)), raise_server_exceptions=False) as bug,
    ):
        for path in hostile_paths(rng):
            for target in (client, shipped):
                raw = json.dumps({"path": path, "agent": "fuzz"})
                reply = target.post("/api/start", content=raw.encode())
                assert reply.status_code in (200, 400, 413), (path, reply.text)
                replies.append(reply.text)
        for body in (b"\xff\xfe", b"{" * 3000, b'{"path": 1}', b"[]", b'{"id": "..", "action": 5}'):
            for endpoint in ("/api/start", "/api/step"):
                replies.append(client.post(endpoint, content=body).text)
        for query in ("../../etc", "\u00e9" * 200):
            replies.append(client.get("/api/session", params={"id": query}).text)
        replies.append(client.get("/api/../../etc/passwd").text)
        crashed = bug.post("/api/start", json={"path": "GOOD", "agent": "a"})
        assert crashed.status_code == 500 and crashed.json()["error"] == "internal_error"
        replies.append(crashed.text)
    assert len(replies) > 600
    for text in replies:
        for secret in secrets:
            assert secret not in text, (secret, text[:300])
