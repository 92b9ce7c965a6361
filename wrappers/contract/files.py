"""The workspace of a contract session: where the files are, and how they are written.

Layout of a workspace ``W``::

    W/CONTRACT.md                               how to play through the files (every env)
    W/observations/environment_description.md   the environment description
    W/observations/state.txt                    the latest response's files ...
    W/observations/map.txt                      ... (only those the response holds)
    W/observations/message.md
    W/observations/labyrinth_description.md
    W/observations/status.json                  terminal flag, steps, budget, solved, ...
    W/history/0000/ ...                         every response, never changed (+ action.json)
    W/.contract/session.json                    the spec and the actions accepted so far

:func:`start_session` and :func:`move` compute the whole response in memory first (the game is
rebuilt by replaying the stored actions), so a request that fails leaves the workspace exactly as
it was. Files are written to a temporary name and renamed into place.

Example:
    >>> import json, tempfile
    >>> from wrappers.contract.session import SessionSpec
    >>> workspace = tempfile.mkdtemp()
    >>> spec = SessionSpec(env="agimaze", path="TUTORIAL/STAGE-01/0000.json")
    >>> status = start_session(workspace, spec)
    >>> status["terminal"], status["steps"]
    (False, 0)
    >>> move(workspace, '{"id": "left"}')["steps"]
    1
    >>> read_status(workspace)["steps"]
    1
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Final

from wrappers.contract.description import INTERFACE
from wrappers.contract.session import (
    OBSERVATION_FILES,
    ContractError,
    Response,
    SessionSpec,
    jsonable,
    replay,
)

#: Format version of ``.contract/session.json``.
SESSION_FORMAT: Final = 1
OBSERVATIONS: Final = "observations"
HISTORY: Final = "history"
SESSION: Final = Path(".contract") / "session.json"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _status_text(status: dict[str, Any]) -> str:
    return json.dumps(jsonable(status), indent=2, sort_keys=True) + "\n"


def _publish(root: Path, response: Response, step: int, action: Any) -> dict[str, Any]:
    status = {**response.status, "step_index": step, "files": sorted(response.files)}
    observations = root / OBSERVATIONS
    for name, text in response.files.items():
        _write(observations / name, text)
    for name in OBSERVATION_FILES:
        if name not in response.files:
            (observations / name).unlink(missing_ok=True)
    record = root / HISTORY / f"{step:04d}"
    for name, text in response.files.items():
        _write(record / name, text)
    if action is not None:
        _write(record / "action.json", json.dumps(action, sort_keys=True) + "\n")
    _write(record / "status.json", _status_text(status))
    _write(observations / "status.json", _status_text(status))  # last: the step is complete
    return status


def load_session(workspace: str | os.PathLike[str]) -> tuple[SessionSpec, list[Any]]:
    """The spec and the accepted actions stored in ``workspace``; ContractError when absent."""
    path = Path(workspace) / SESSION
    if not path.is_file():
        raise ContractError(
            f"no contract session in {workspace}: start one with "
            "`maze-envs contract start --workspace W --env ...`"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != SESSION_FORMAT:
            raise ContractError(f"{path} has format {data.get('format')!r}; expected 1")
        return SessionSpec.model_validate(data["spec"]), list(data["actions"])
    except (ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, ContractError):
            raise
        raise ContractError(f"{path} is not a readable session file: {exc}") from exc


def _save_session(root: Path, spec: SessionSpec, actions: list[Any]) -> None:
    data = {"format": SESSION_FORMAT, "spec": spec.model_dump(mode="json"), "actions": actions}
    _write(root / SESSION, json.dumps(data, indent=1) + "\n")


def start_session(
    workspace: str | os.PathLike[str], spec: SessionSpec, *, force: bool = False
) -> dict[str, Any]:
    """Start ``spec`` in ``workspace`` (created if missing); return the first status.

    A workspace that already holds a session is refused unless ``force`` (which removes the old
    session's files first).
    """
    root = Path(workspace)
    if (root / SESSION).exists() and not force:
        raise ContractError(
            f"{root} already holds a contract session; use another workspace or --force"
        )
    game = replay(spec, [])  # fails before anything is written
    if force:
        for name in (OBSERVATIONS, HISTORY, ".contract"):
            shutil.rmtree(root / name, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    _write(root / "CONTRACT.md", INTERFACE)
    _write(root / OBSERVATIONS / "environment_description.md", game.response.description)
    _save_session(root, spec, [])
    return _publish(root, game.response, 0, None)


def parse_request(text: str) -> Any:
    """The JSON value of an action request; ContractError naming the problem otherwise."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ContractError(f"the action is not valid JSON ({exc}): {text!r}") from None


def move(workspace: str | os.PathLike[str], request: str | Any) -> dict[str, Any]:
    """Apply one action (JSON text or its value) in ``workspace``; return the new status."""
    root = Path(workspace)
    spec, actions = load_session(root)
    value = parse_request(request) if isinstance(request, str) else request
    game = replay(spec, actions)
    action = game.parse(value)  # ContractError: nothing written
    response = game.apply(action)
    actions.append(action)
    _save_session(root, spec, actions)
    return _publish(root, response, len(actions), value)


def read_status(workspace: str | os.PathLike[str]) -> dict[str, Any]:
    """The status of the session in ``workspace`` (``observations/status.json``)."""
    load_session(workspace)
    path = Path(workspace) / OBSERVATIONS / "status.json"
    try:
        status: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ContractError(f"cannot read {path}: {exc}") from exc
    return status
