"""Shared by the book's tests (tests/book): one smoke build of the book per session,
the chapters listed in the toc, and a minimal headless-Chromium driver.

The build happens in a temporary copy of the book's sources (config, toc, book/) so the
tests never touch the working tree's _build; the engine's run cache is the session's
temporary one (ITL_CACHE_DIR, set by tests/conftest.py), shared with the engine fixtures, so
the control runs are measured once and the user's cache is never read or written.
Every build has a timeout, so a hang fails the test instead of the whole session.
"""
from __future__ import annotations

import functools
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

from .paths import REPO

# the console script installed next to this interpreter (jupyter_book has no __main__)
JUPYTER_BOOK = [str(Path(sys.executable).with_name("jupyter-book"))
                if Path(sys.executable).with_name("jupyter-book").exists() else shutil.which("jupyter-book")]


@dataclass
class Build:
    root: Path            # the temporary copy
    html: Path            # its _build/html
    returncode: int
    output: str           # stdout + stderr of `jupyter-book build`
    seconds: float


def copy_book_sources(dest: Path) -> Path:
    """Config, toc (and the book/_toc.yml symlink) and book/, without build products."""
    shutil.copy2(REPO / "_config.yml", dest / "_config.yml")
    shutil.copy2(REPO / "_toc.yml", dest / "_toc.yml")
    shutil.copytree(REPO / "book", dest / "book", symlinks=True,
                    ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints", "__pycache__"))
    return dest


BUILD_TIMEOUT_S = 1800     # a cold smoke build (calibration, every run) takes about 4 min


def run_build(root: Path, env: dict | None = None, timeout: float = BUILD_TIMEOUT_S, preexec_fn=None) -> Build:
    t0 = time.time()
    try:
        proc = subprocess.run(JUPYTER_BOOK + ["build", "book"], cwd=root, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              timeout=timeout, preexec_fn=preexec_fn)
        code, output = proc.returncode, proc.stdout
    except subprocess.TimeoutExpired as e:
        out = e.output.decode(errors="replace") if isinstance(e.output, bytes) else (e.output or "")
        code, output = -1, f"{out}\n[test] jupyter-book build timed out after {timeout:.0f} s"
    return Build(root, root / "_build" / "html", code, output, time.time() - t0)


@functools.cache
def smoke_build() -> Build:
    """The book built once per test session in the smoke profile."""
    root = Path(tempfile.mkdtemp(prefix="book-smoke-"))
    copy_book_sources(root)
    env = {**os.environ, "BOOK_PROFILE": "smoke"}
    return run_build(root, env)


def toc_docnames(toc: Path = REPO / "_toc.yml") -> list[str]:
    """Every document the toc lists (root first), as paths relative to book/ without suffix."""
    data = yaml.safe_load(toc.read_text())
    names = [data["root"]]

    def walk(node):
        for key in ("parts", "chapters", "sections"):
            for item in node.get(key, []) or []:
                if "file" in item:
                    names.append(item["file"])
                walk(item)
    walk(data)
    return names


def chapter_notebooks() -> list[Path]:
    return [REPO / "book" / f"{n}.ipynb" for n in toc_docnames() if (REPO / "book" / f"{n}.ipynb").exists()]


# ---------------------------------------------------------------- serving and Chromium
class StaticServer:
    """Serve a folder on 127.0.0.1 (a free port) from a background thread."""

    def __init__(self, folder: Path):
        class Quiet(SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(folder)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if path := shutil.which(name):
            return path
    return None


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--remote-debugging-pipe"]


class Chromium:
    """Headless Chromium driven over the DevTools protocol on a pipe (fds 3 and 4:
    NUL-terminated JSON messages), so no websocket library is needed."""

    def __init__(self, binary: str):
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire_fds():                          # in the child: its fd 3 reads, fd 4 writes
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen([binary, *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}",
                                      "about:blank"], preexec_fn=wire_fds, pass_fds=(3, 4),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no message from Chromium in time")
            ready, _, _ = select.select([self._from_chrome], [], [], left)
            if ready:
                chunk = os.read(self._from_chrome, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 30.0) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method: str, session: str, timeout: float = 30.0) -> dict:
        deadline = time.time() + timeout
        for i, e in enumerate(self.events):
            if e.get("method") == method and e.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method and m.get("sessionId") == session:
                return m
            self.events.append(m)

    def drain(self, seconds: float) -> None:
        """Collect events for a while (late console messages, failed loads)."""
        deadline = time.time() + seconds
        try:
            while True:
                self.events.append(self._read_message(deadline))
        except TimeoutError:
            pass

    def open_page(self, url: str) -> str:
        """A fresh tab with console, log and network reporting on, navigated to url."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session, timeout=60)
        return session

    def evaluate(self, expression: str, session: str):
        res = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                             "awaitPromise": True}, session=session)
        if "exceptionDetails" in res:
            raise RuntimeError(f"page script failed: {res['exceptionDetails']}")
        return res["result"].get("value")

    def requests(self, session: str) -> list[dict]:
        """Every request one tab made: url, and the HTTP status or the network error."""
        out = {}
        for e in self.events:
            if e.get("sessionId") != session:
                continue
            m, p = e.get("method"), e.get("params", {})
            if m == "Network.requestWillBeSent":
                out.setdefault(p["requestId"], {"url": p["request"]["url"], "status": None, "error": None})
            elif m == "Network.responseReceived" and p.get("requestId") in out:
                out[p["requestId"]]["status"] = p["response"].get("status")
            elif m == "Network.loadingFailed" and p.get("requestId") in out:
                out[p["requestId"]]["error"] = p.get("errorText")
        return list(out.values())

    def problems(self, session: str) -> list[dict]:
        """Console errors, uncaught exceptions and failed loads seen by one tab."""
        out = []
        urls = {e["params"]["requestId"]: e["params"]["request"]["url"] for e in self.events
                if e.get("sessionId") == session and e.get("method") == "Network.requestWillBeSent"}
        for e in self.events:
            if e.get("sessionId") != session:
                continue
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append({"kind": "exception", "text": json.dumps(p.get("exceptionDetails"))[:500]})
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append({"kind": "console", "text": json.dumps(p.get("args"))[:500]})
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append({"kind": "log", "text": p["entry"].get("text", ""),
                            "url": p["entry"].get("url", "")})
            elif m == "Network.loadingFailed" and not p.get("canceled"):
                out.append({"kind": "network", "text": p.get("errorText", ""),
                            "url": urls.get(p.get("requestId"), "?")})
        return out
