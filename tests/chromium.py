"""A headless Chromium driven over the DevTools protocol, with the standard library only.

Test support, not part of the library: used by the viewer's end-to-end tests and
``benchmarks/viewer_bench.py`` to open a page in a real browser, run script in it, press keys and
take screenshots; handy for scripted screenshots of pages too. Chromium talks the DevTools
protocol over a pipe (``--remote-debugging-pipe``: JSON messages separated by NUL bytes on file
descriptors 3 and 4), so no WebSocket client, no driver download and no open port are needed:
only the system's ``chromium`` binary (Debian: ``apt-get install chromium``).

Example (needs Chromium)::

    with Chromium() as browser:
        browser.open(Path("game.html").resolve().as_uri() + "#turn=5")
        browser.wait_for("document.body.dataset.ready === '1'")
        print(browser.evaluate("document.getElementById('turnlabel').textContent"))
        Path("shot.png").write_bytes(browser.screenshot())
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Final

#: Flags for a quiet, isolated headless browser (no sandbox: tests run as root in containers).
FLAGS: Final = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-extensions",
    "--mute-audio",
    "--remote-debugging-pipe",
)
_CANDIDATES: Final = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


class BrowserError(RuntimeError):
    """Chromium is missing, died, timed out, or the page raised an error."""


def find_chromium() -> str | None:
    """Path of a Chromium binary (``$CHROMIUM`` first, then the usual names), or None."""
    override = os.environ.get("CHROMIUM")
    if override:
        return override if os.access(override, os.X_OK) else None
    for name in _CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Chromium:
    """One headless Chromium process with one page (see the module docstring).

    ``width`` x ``height`` is the viewport in CSS pixels; ``timeout`` bounds every wait.
    """

    def __init__(
        self,
        binary: str | None = None,
        *,
        width: int = 1400,
        height: int = 1000,
        timeout: float = 30.0,
    ) -> None:
        found = binary or find_chromium()
        if found is None:
            raise BrowserError("no Chromium found: install it (Debian: apt-get install chromium)")
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="maze-envs-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire() -> None:  # in the child: the pipes on fds 3 (commands) and 4 (replies)
            a, b = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self._process = subprocess.Popen(
            [found, *FLAGS, f"--user-data-dir={self._profile}", f"--window-size={width},{height}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=wire,  # the pipes must sit on fds 3 and 4 of the child
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            attached = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})
            self._session: str | None = attached["sessionId"]
            self.command("Page.enable")
            self.command("Runtime.enable")
            self.command(
                "Emulation.setDeviceMetricsOverride",
                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            )
        except BaseException:
            self.close()
            raise

    # -- protocol --------------------------------------------------------------------------

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium did not answer within {self.timeout} s")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium exited (status {self._process.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """Send one DevTools command and return its result (events seen meanwhile are kept)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        try:
            os.write(self._to_child, json.dumps(message).encode() + b"\0")
        except OSError as exc:
            raise BrowserError(f"Chromium is gone: {exc}") from None
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error'].get('message')}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def command(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A DevTools command to the page."""
        return self.send(method, params, self._session)

    # -- page ------------------------------------------------------------------------------

    def open(self, url: str) -> None:
        """Load ``url`` afresh (a new document, even when only its ``#fragment`` differs from
        the page shown now) and wait for its load event."""
        for target in ("about:blank", url):  # a fragment-only change would load nothing
            self.events.clear()
            self.command("Page.navigate", {"url": target})
            deadline = time.monotonic() + self.timeout
            while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
                self.events.append(self._read(deadline))

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises are awaited)."""
        result = self.command(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"the page raised: {text}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float | None = None) -> Any:
        """Evaluate ``expression`` until it is truthy; return its value."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {expression!r}")
            time.sleep(0.02)

    def press(self, key: str, code: int) -> None:
        """Press and release a key (``key`` as in KeyboardEvent.key, ``code`` its key code)."""
        for kind in ("keyDown", "keyUp"):
            self.command(
                "Input.dispatchKeyEvent",
                {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code},
            )

    def screenshot(self) -> bytes:
        """A PNG of the whole page."""
        metrics = self.command("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}
        shot = self.command(
            "Page.captureScreenshot",
            {"format": "png", "clip": clip, "captureBeyondViewport": True},
        )
        return base64.b64decode(shot["data"])

    # -- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """End the browser and remove its profile directory."""
        if self._process.poll() is None:
            with contextlib.suppress(BrowserError):  # it may close the pipe before replying
                self.send("Browser.close")
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def file_url(path: Path, fragment: str = "") -> str:
    """The ``file://`` URL of a local page, with an optional ``#fragment``."""
    url = path.resolve().as_uri()
    return f"{url}#{fragment}" if fragment else url
