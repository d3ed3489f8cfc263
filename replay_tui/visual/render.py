"""Headless Chromium rendering: one browser per run, every network request blocked, bounded page time.

The reference metric takes each screenshot in a new Python process with a new browser (about 1.5 s each, six
per scored pair). Here one :class:`Renderer` launches Chromium once, drives it with Playwright's async API on a
private event-loop thread (so it also works when the caller runs an asyncio loop), and renders a batch of pages
concurrently on a small pool of pages (:meth:`Renderer.render_many`); the renderer is thread-safe, so several
threads (``score_pairs(jobs=N)``) can share it. The capture settings are the reference's: viewport 1280x720, device
scale factor 1, ``goto`` waits for the load event, then a full-page PNG with animations disabled.

Each page of the pool has a browser context (a window) of its own. Pages that share a context are tabs of one
window; with several of them capturing at once, ``Page.captureScreenshot`` (``captureBeyondViewport``: the page is
resized to its full height and a new compositor frame awaited) sometimes took 1-3 s, in steps of about a second,
instead of 0.1-0.3 s (issue 14: seen in the protocol log in every run of 3 concurrent pages; none with a window per
page). Every context has the same settings and the same network policy, so the pixels do not change.

Untrusted HTML (issue 15): the pages are written by models, so the renderer is a sandbox in layers, each of
which stops traffic on its own (:data:`LAYERS` names them; :attr:`Renderer.isolation` lists those active):
Chromium runs in a network namespace with only a loopback that is down (``unshare``, when the OS allows it
without root), resolves no host name, sends everything that is not a local file to a proxy that does not
exist (loopback included), keeps WebRTC and QUIC off UDP, blocks popups (the popup blocker is back on,
``window.open`` is denied, a page the context opens anyway is closed) and service workers; and the context's
request routing (which also sees popups and workers) lets through only ``file:`` URLs inside the page's own
folder and ``data:``/``blob:`` URLs. Each render has one deadline (navigation, height check, capture): a
render that misses it, a renderer that crashes and a page taller than :data:`MAX_HEIGHT` are reported
through :attr:`RenderResult.status` (never silently replaced by a blank image; the compat pipeline decides
what the reference would have done with other failures).
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar
from urllib.parse import unquote, urlparse

import cv2
import numpy as np

from replay_tui.fileio import PROCESS_START

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, CDPSession, Page, Playwright, Route, ViewportSize

T = TypeVar("T")

VIEWPORT: ViewportSize = {"width": 1280, "height": 720}
DEFAULT_TIMEOUT_MS = 30_000
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
    "--font-render-hinting=none",
]
# The network layers of the sandbox (see the module docstring), and a bound on script memory. None of them
# changes a pixel of a page that loads nothing from the network (the bundled and test-set renders are
# identical with and without them).
ISOLATION_ARGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no host name resolves, the proxy's included
    "--proxy-server=socks5://proxy.invalid:9",  # every non-file request goes to a proxy that cannot exist
    "--proxy-bypass-list=<-loopback>",  # ... loopback addresses included (Chromium bypasses them by default)
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",  # WebRTC: no UDP outside the (dead) proxy
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--disable-quic",  # no HTTP/3 or WebTransport datagrams
    "--dns-prefetch-disable",
    "--no-pings",
    "--js-flags=--max-old-space-size=512",  # bounded memory: a memory bomb crashes its renderer in a second
]
# Playwright turns Chromium's popup blocker off; the sandbox wants it on.
IGNORED_DEFAULT_ARGS = ["--disable-popup-blocking"]
# Runs before any script of every frame: no popups, no peer-to-peer or datagram transports.
INIT_SCRIPT = """(() => {
  const define = (name, value) => {
    try { Object.defineProperty(window, name, {value, writable: false, configurable: false}); } catch (e) {}
  };
  define("open", () => null);
  for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection", "RTCDataChannel", "WebTransport"]) {
    define(name, undefined);
  }
})();"""
LAYERS = {
    "netns": "network namespace: Chromium runs with only a loopback, which is down (unshare)",
    "no-dns": "no host name resolves (--host-resolver-rules)",
    "dead-proxy": "every non-file request, loopback included, goes to a proxy that does not exist",
    "no-udp": "WebRTC and QUIC kept off UDP; RTCPeerConnection and WebTransport removed",
    "no-popups": "popup blocker on, window.open denied, pages opened anyway closed; service workers blocked",
    "routing": "request routing (popups and workers included) allows only file: URLs in the page's folder",
}
MAX_HEIGHT = 16_384  # px of a full-page screenshot (Chromium's texture size; the test-set pages reach 2,324)
# How a render ended when it produced no image (RenderResult.status).
RenderStatus = Literal["timeout", "crashed", "too_tall", "error"]
_Raw = tuple[bytes | None, str | None, list[str], RenderStatus | None]  # png, error, blocked URLs, status
# Debian's package first, then the other usual names.
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/lib/chromium/chromium", "/usr/bin/chromium-browser")


class RenderError(RuntimeError):
    """The browser could not be started (a page failing to render is a :class:`RenderResult` instead)."""


class _PageState(TypedDict):
    """What a page's route handler reads and writes: the folders it may load from, the URLs it blocked; and
    whether its renderer crashed."""

    roots: tuple[str, ...]
    blocked: list[str]
    crashed: bool


@dataclass
class RenderResult:
    """One screenshot: an RGB uint8 array (H, W, 3), or the reason it failed (``error``) and how (``status``)."""

    image: np.ndarray | None
    error: str | None = None
    blocked: list[str] = field(default_factory=list)
    status: RenderStatus | None = None

    @property
    def ok(self) -> bool:
        return self.image is not None


def find_chromium(explicit: str | None = None) -> str:
    """The Chromium executable: ``explicit``, ``$REPLAY_TUI_CHROMIUM``, or a known Debian path."""
    for candidate in (explicit, os.environ.get("REPLAY_TUI_CHROMIUM"), *CHROMIUM_CANDIDATES):
        if candidate and Path(candidate).exists():
            return candidate
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    raise RenderError("no Chromium found: install Debian's `chromium` or set REPLAY_TUI_CHROMIUM")


def netns_wrapper(executable: str, folder: str) -> str | None:
    """A script in ``folder`` that starts ``executable`` in a new network namespace (a user namespace too, so no
    root is needed), or None when ``unshare`` is missing or the OS refuses. Playwright talks to Chromium over
    pipes, so the browser needs no network at all."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    try:
        probe = subprocess.run([unshare, "-rn", "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    if probe.returncode != 0:
        return None
    script = Path(folder) / "chromium-netns"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(unshare)} -rn -- {shlex.quote(executable)} "$@"\n')
    script.chmod(0o700)
    return str(script)


def decode_png(data: bytes) -> np.ndarray:
    """PNG bytes -> RGB uint8 array, decoded once (alpha dropped, as PIL's ``convert('RGB')`` does)."""
    buffer = np.frombuffer(data, dtype=np.uint8)
    bgr = cv2.imdecode(buffer, cv2.IMREAD_COLOR)
    if bgr is None:
        raise ValueError("not a decodable PNG")
    return np.ascontiguousarray(bgr[:, :, ::-1])


def blank_image(width: int = 1280, height: int = 960) -> np.ndarray:
    """The white 1280x960 image the reference writes when a screenshot fails."""
    return np.full((height, width, 3), 255, dtype=np.uint8)


class Renderer:
    """One Chromium for the whole run. Use as a context manager, or call :meth:`close`.

    ``parallel`` pages render at once (each page of a batch is independent; 2-3 suit two cores). ``timeout_ms``
    bounds each render as a whole; ``netns=False`` leaves out the network namespace (the other layers stay).
    """

    def __init__(
        self,
        executable: str | None = None,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        parallel: int = 3,
        *,
        netns: bool = True,
        max_height: int = MAX_HEIGHT,
    ) -> None:
        self.executable = find_chromium(executable)
        self.timeout_ms = int(timeout_ms)
        self.parallel = max(1, int(parallel))
        self.netns = netns
        self.max_height = int(max_height)
        self.isolation: tuple[str, ...] = ()  # the LAYERS keys active once started
        self._wrapper_dir: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pw: Playwright | None = None
        self._browser: Browser | None = None
        self._idle: list[Page] = []
        self._state: dict[Page, _PageState] = {}
        self._contexts: dict[Page, BrowserContext] = {}
        self._cdp: dict[Page, CDPSession] = {}
        self._closing: set[asyncio.Future[None]] = set()  # failed pages being closed
        self._slots: asyncio.Semaphore | None = None
        self._seconds_lock = threading.Lock()
        self.render_seconds = 0.0
        # navigation + capture of the latest pages, for benchmarks (the stall of issue 14 showed here)
        self.page_seconds: deque[float] = deque(maxlen=4096)

    # -- lifecycle -------------------------------------------------------------------------------------------
    def start(self) -> Renderer:
        if self._browser is not None:
            return self
        try:
            import playwright.async_api  # noqa: F401
        except ImportError as exc:  # pragma: no cover - playwright is a core dependency
            raise RenderError(f"playwright is not installed: {exc}") from exc
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="replay-tui-chromium", daemon=True)
        self._thread.start()
        try:
            self._call(self._astart())
        except Exception as exc:
            self.close()
            raise RenderError(f"could not start Chromium ({self.executable}): {exc}") from exc
        return self

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            coroutine.close()
            raise RenderError("the renderer is closed")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    async def _astart(self) -> None:
        from playwright.async_api import async_playwright

        executable, layers = self.executable, ["no-dns", "dead-proxy", "no-udp", "no-popups", "routing"]
        if self.netns:
            self._wrapper_dir = tempfile.mkdtemp(prefix="replay-tui-chromium-")
            wrapper = netns_wrapper(self.executable, self._wrapper_dir)
            if wrapper is not None:
                executable, layers = wrapper, ["netns", *layers]
        self._pw = pw = await async_playwright().start()
        self._browser = await pw.chromium.launch(
            executable_path=executable,
            headless=True,
            args=CHROMIUM_ARGS + ISOLATION_ARGS,
            ignore_default_args=IGNORED_DEFAULT_ARGS,
            timeout=60_000,
        )
        self.isolation = tuple(layers)
        self._slots = asyncio.Semaphore(self.parallel)
        self._idle = []
        self._state = {}
        self._contexts = {}
        self._cdp = {}

    async def _aclose(self) -> None:
        if self._closing:
            await asyncio.wait(set(self._closing), timeout=20)
        closers: list[BrowserContext | Browser | None] = [*self._contexts.values(), self._browser]
        for closer in closers:
            if closer is not None:
                try:
                    await asyncio.wait_for(closer.close(), 20)
                except Exception:
                    pass
        if self._pw is not None:
            try:
                await asyncio.wait_for(self._pw.stop(), 20)
            except Exception:
                pass

    def close(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            try:
                asyncio.run_coroutine_threadsafe(self._aclose(), self._loop).result(timeout=60)
            except Exception:
                pass
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        if self._loop is not None and not self._loop.is_running():
            self._loop.close()
        self._loop = self._thread = None
        self._pw = self._browser = None
        self._idle, self._state, self._contexts, self._cdp = [], {}, {}, {}
        if self._wrapper_dir is not None:
            shutil.rmtree(self._wrapper_dir, ignore_errors=True)
            self._wrapper_dir = None

    def __enter__(self) -> Renderer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- pages and the network policy ----------------------------------------------------------------------------
    async def _acquire(self) -> Page:
        if self._slots is None or self._browser is None:
            raise RenderError("the renderer is closed")
        await self._slots.acquire()
        if self._idle:
            return self._idle.pop()
        try:
            # A context (a window) per page: see the module docstring for why pages do not share one.
            context = await self._browser.new_context(
                viewport=VIEWPORT, device_scale_factor=1, service_workers="block", accept_downloads=False
            )
            state: _PageState = {"roots": (), "blocked": [], "crashed": False}
            # Routing on the context, so that popups and workers go through it too.
            await context.route("**/*", _route_handler(state))
            await context.add_init_script(INIT_SCRIPT)
            page = await context.new_page()
            # Registered after our own page was opened: every later page is one the page opened.
            context.on("page", _close_popup)
            page.on("crash", lambda _page: state.__setitem__("crashed", True))
            self._cdp[page] = await context.new_cdp_session(page)
        except BaseException:
            self._slots.release()
            raise
        self._state[page] = state
        self._contexts[page] = context
        return page

    async def _release(self, page: Page, healthy: bool) -> None:
        """A good page is kept for the next render (a new navigation starts from a fresh document anyway). A page
        that failed (e.g. a script that never yields) is thrown away in the background: neither the render's
        result nor the next render waits for a hung renderer to close."""
        self._free_slot()
        if healthy:
            self._idle.append(page)
            return
        self._state.pop(page, None)
        cdp = self._cdp.pop(page, None)
        context = self._contexts.pop(page, None)
        task = asyncio.ensure_future(self._discard(page, context, cdp))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _discard(self, page: Page, context: BrowserContext | None, cdp: CDPSession | None) -> None:
        if cdp is not None:  # stop a script that spins first: closing a busy renderer takes seconds of CPU
            try:
                await asyncio.wait_for(cdp.send("Runtime.terminateExecution"), 2)
            except Exception:
                pass
        for closer in (lambda: page.close(run_before_unload=False), context.close if context else None):
            if closer is not None:
                try:
                    await asyncio.wait_for(closer(), 15)
                except Exception:
                    pass

    def _free_slot(self) -> None:
        if self._slots is not None:
            self._slots.release()

    async def _render_one(self, url: str, root: Path, deadline: float | None) -> _Raw:
        if deadline is not None and deadline <= time.monotonic():
            return None, "TimeoutError: the pair's deadline passed before this render started", [], "timeout"
        queued = time.monotonic()
        page = await self._acquire()
        if deadline is not None:
            # Time spent waiting for pages that other calls' renders hold (other pairs) is not this pair's to pay;
            # the wait behind its own renders is (see _render_all).
            deadline += time.monotonic() - queued
        state = self._state[page]
        state["roots"] = (os.path.realpath(root),)
        state["blocked"] = []
        healthy = False
        png: bytes | None = None
        error: str | None = None
        status: RenderStatus | None = None
        started = time.perf_counter()
        budget = self.timeout_ms / 1000
        if deadline is not None:
            budget = min(budget, deadline - time.monotonic())
        try:
            if budget <= 0:
                raise TimeoutError("the pair's deadline passed before this render started")
            # One deadline for the whole render; Playwright's own timeouts are a second bound.
            async with asyncio.timeout(budget):
                png, status, error = await self._capture(page, url, int(budget * 1000))
            healthy = status is None
            self.page_seconds.append(time.perf_counter() - started)
        except Exception as exc:
            text = str(exc).strip()
            error = f"{type(exc).__name__}: {text.splitlines()[0] if text else type(exc).__name__}"
            status = _failure_status(exc, text, state["crashed"])
            if status == "timeout" and not text:
                error = f"TimeoutError: the render took more than {budget:.1f} s"
        finally:
            blocked = list(state["blocked"])
            await self._release(page, healthy)
        return png, error, blocked, status

    async def _capture(self, page: Page, url: str, timeout_ms: int) -> tuple[bytes | None, RenderStatus | None, str]:
        """Load ``url``, check the page's height, take the full-page screenshot."""
        await page.goto(url, timeout=timeout_ms, wait_until="load")
        # The height the full-page screenshot would have (Playwright reads the same metric), without running
        # script in the page (whose execution context a late navigation may have destroyed).
        metrics = await self._cdp[page].send("Page.getLayoutMetrics")
        height = metrics.get("cssContentSize", {}).get("height", 0)
        if isinstance(height, int | float) and height > self.max_height:
            return None, "too_tall", f"too_tall: the page is {int(height)} px high (the limit is {self.max_height})"
        png = await self._still_capture(page)
        if png is None:
            png = await page.screenshot(full_page=True, animations="disabled", timeout=timeout_ms, type="png")
        return png, None, ""

    async def _still_capture(self, page: Page) -> bytes | None:
        """The full-page PNG straight from Chromium (``Page.captureScreenshot`` with ``optimizeForSpeed``,
        the clip Playwright computes for a full page), or None when the page has something Playwright's
        screenshot would change first: a running animation or transition (``animations="disabled"``
        finishes them) or a focused editable element (its caret is hidden).

        Playwright's screenshot ends in the same CDP call; what it adds around it (injecting and removing
        its animation and caret handling, a larger zlib effort) cost 88 ms of a page's render against
        37 ms here, on the bundled pages, with the same decoded pixels (the tests compare every render's
        pixels on the test-set pages both ways). A page that lies to the check only changes its own
        picture, which it could do anyway."""
        try:
            size = await page.evaluate(_STILL_PAGE_SIZE)
        except Exception:
            return None
        if not (isinstance(size, list) and len(size) == 2 and all(isinstance(v, int) and v > 0 for v in size)):
            return None
        clip = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}
        shot = await self._cdp[page].send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "optimizeForSpeed": True, "clip": clip},
        )
        return base64.b64decode(shot["data"])

    async def _render_all(self, jobs: list[tuple[str, Path]], deadline: float | None) -> list[_Raw]:
        # At most the pool's size of one call's renders at once, so that a render waits for the pool only while
        # other calls hold it. A render queued behind its own call's renders keeps its deadline: such a wait once
        # moved it on too, and a pair of spinning pages (more renders than the pool has pages) took about twice
        # the --pair-timeout its user set.
        own = asyncio.Semaphore(self.parallel)

        async def one(url: str, root: Path) -> _Raw:
            async with own:
                return await self._render_one(url, root, deadline)

        return await asyncio.gather(*(one(url, root) for url, root in jobs))

    # -- rendering -------------------------------------------------------------------------------------------
    def render_many(self, jobs: list[tuple[str, Path]], deadline: float | None = None) -> list[RenderResult]:
        """Render ``(file URL, folder whose files it may load)`` jobs concurrently, results in job order; no render
        goes on past ``deadline`` (a ``time.monotonic()`` value), if given, plus the time it waited for pages of the
        pool that other calls held."""
        self.start()
        started = time.perf_counter()
        raw = self._call(self._render_all(list(jobs), deadline))
        results = []
        for png, error, blocked, status in raw:
            if png is not None:
                try:
                    result = RenderResult(image=decode_png(png))
                except ValueError as exc:
                    result = RenderResult(image=None, error=f"ValueError: {exc}", status="error")
            else:
                result = RenderResult(image=None, error=error, status=status or "error")
            result.blocked = blocked
            results.append(result)
        with self._seconds_lock:
            self.render_seconds += time.perf_counter() - started
        return results

    def render_html(self, html: str, base_dir: str | os.PathLike[str], stem: str = "page") -> RenderResult:
        """Screenshot HTML text as if it were a file in ``base_dir`` (relative URLs such as ``rick.jpg`` resolve)."""
        return self.render_texts([(html, base_dir, stem)])[0]

    def render_texts(
        self, items: list[tuple[str, str | os.PathLike[str], str]], deadline: float | None = None
    ) -> list[RenderResult]:
        """Render several HTML texts concurrently; each is written UTF-8 (as the reference's Python writes it) to a
        temporary file beside its original, or to a temporary folder when that folder is read-only (relative
        resources then fail to load)."""
        written: list[Path] = []
        temp_dirs: list[str] = []
        jobs: list[tuple[str, Path]] = []
        try:
            for page_folder in {Path(base_dir).resolve() for _, base_dir, _ in items}:
                remove_stale_copies(page_folder)
            for html, base_dir, stem in items:
                base = Path(base_dir).resolve()
                data = html.encode("utf-8", errors="surrogateescape")
                name = f".{stem}.visual-{uuid.uuid4().hex[:12]}.html"
                target = base / name
                written.append(target)  # before the write: a signal during it must not leave the copy behind
                try:
                    target.write_bytes(data)
                except OSError:
                    temp_dirs.append(tempfile.mkdtemp(prefix="replay-tui-visual-"))
                    target = Path(temp_dirs[-1]) / name
                    target.write_bytes(data)
                jobs.append((target.as_uri(), target.parent))
            return self.render_many(jobs, deadline)
        finally:
            for target in written:
                try:
                    target.unlink()
                except OSError:
                    pass
            for folder in temp_dirs:
                shutil.rmtree(folder, ignore_errors=True)


def new_renderer(timeout_ms: int | None = None) -> tuple[Renderer, bool]:
    """A renderer for a scorer or command given none, and whether it closes the renderer when done."""
    return (Renderer(timeout_ms=timeout_ms) if timeout_ms else Renderer()), True


# Where every scorer and command given no renderer gets one: (timeout_ms) -> (renderer, close it when done).
# The tests swap in a browser kept for their whole session (starting Chromium costs seconds of CPU).
renderer_factory: Callable[[int | None], tuple[Renderer, bool]] = new_renderer


_COPY = re.compile(r"\..+\.visual-[0-9a-f]{12}\.html")


def remove_stale_copies(folder: Path) -> int:
    """Remove the page copies (``.NAME.visual-<hex>.html``) an earlier process left in ``folder`` when
    it was killed before its ``finally`` ran; only copies older than this process, so a concurrent
    renderer's are kept. Returns how many went; never raises."""
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        if not _COPY.fullmatch(entry.name):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < PROCESS_START:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


def _failure_status(exc: BaseException, text: str, crashed: bool) -> RenderStatus:
    """How a render that raised ended: Playwright's and asyncio's timeouts are ``timeout``, a renderer that died
    (the ``crash`` event, or Playwright's "crashed" errors) is ``crashed``."""
    if crashed or "crash" in text.lower():
        return "crashed"
    if isinstance(exc, TimeoutError) or type(exc).__name__ == "TimeoutError":
        return "timeout"
    return "error"


async def _close_popup(page: Page) -> None:
    """A page the context opened (a popup the blocker and the ``window.open`` override both missed): closed."""
    try:
        await asyncio.wait_for(page.close(run_before_unload=False), 10)
    except Exception:
        pass


_STILL_PAGE_SIZE = """() => {
    const body = document.body, root = document.documentElement;
    if (!body || !root || document.getAnimations().length) return null;
    const focused = document.activeElement;
    if (focused && (focused.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(focused.tagName))) return null;
    const most = (key) => Math.max(body["scroll" + key], root["scroll" + key], body["offset" + key],
        root["offset" + key], body["client" + key], root["client" + key]);
    return [most("Width"), most("Height")];
}"""
"""A still page's full size as Playwright measures it for ``full_page`` (null when it is not still)."""


def _route_handler(state: _PageState) -> Callable[[Route], Awaitable[None]]:
    # One parameter only: Playwright passes (route, request) to handlers that take two.
    async def handle(route: Route) -> None:
        url = route.request.url
        if _allowed(url, state["roots"]):
            await route.continue_()
        else:
            state["blocked"].append(url)
            await route.abort("blockedbyclient")

    return handle


def _allowed(url: str, roots: tuple[str, ...]) -> bool:
    scheme = url.split(":", 1)[0].lower()
    if scheme in ("data", "blob", "about"):
        return True
    if scheme != "file":
        return False
    try:
        path = os.path.realpath(unquote(urlparse(url).path))
    except ValueError:
        return False
    return any(path == root or path.startswith(root + os.sep) for root in roots)
