"""textual-serve's server with :mod:`replay_tui.cli.serve_guard`'s checks, and bounded sessions.

At most ``max_sessions`` app processes run at once (a socket beyond that is told so and closed, and
no process starts); each is ended when its socket closes (quit, then SIGTERM, then SIGKILL), and a
browser's terminal size is clamped, so that a ``resize`` to 20000x20000 cannot make an app draw
gigabytes.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server

from replay_tui.cli.serve_guard import MAX_HEIGHT, MAX_WIDTH, Guard, clamp_size

STOP_GRACE = 3.0
"""Seconds an app process gets to quit, then again after SIGTERM, before SIGKILL."""
FULL_CLOSE_CODE = 1013
"""WebSocket close code "try again later": every session is taken."""
GOING_AWAY = 1001
"""WebSocket close code: the server stops."""
log = logging.getLogger("textual-serve")
TOKEN_IN_URL = re.compile(r"(?<=[?&]token=)[^&\s\"]+")


class _ScrubToken(logging.Filter):
    """Keeps the token out of the access log (a request may carry it as ``?token=``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = TOKEN_IN_URL.sub("…", record.msg)
        return True


class BoundedAppService(AppService):
    """An app process whose terminal size is clamped and which is ended for sure when stopped."""

    async def start(self, width: int | str, height: int | str) -> None:
        """Start the app at the size the browser asked for, clamped (it comes as query text)."""
        await super().start(clamp_size(width, 80, MAX_WIDTH), clamp_size(height, 24, MAX_HEIGHT))

    async def set_terminal_size(self, width: int | str, height: int | str) -> None:
        await super().set_terminal_size(clamp_size(width, 80, MAX_WIDTH), clamp_size(height, 24, MAX_HEIGHT))

    async def stop(self) -> None:
        """Ask the app to quit; if it has not ended after the grace period, SIGTERM; then SIGKILL."""
        process = self._process
        if self._task is None or process is None:
            return
        await self._download_manager.cancel_app_downloads(app_service_id=self.app_service_id)
        await self.send_meta({"type": "quit"})
        for end in (None, process.terminate, process.kill):
            if end is not None:
                try:
                    end()
                except ProcessLookupError:
                    break
            try:
                await asyncio.wait_for(process.wait(), STOP_GRACE)
                break
            except TimeoutError:
                continue
        task, self._task = self._task, None
        if task is not None:
            await task


class GuardedServer(Server):
    """textual-serve's server behind a :class:`Guard`, with at most ``max_sessions`` app processes."""

    def __init__(
        self,
        command: str,
        *,
        host: str,
        port: int,
        public_url: str,
        guard: Guard,
        max_sessions: int,
        on_listening: Callable[[], None],
    ):
        super().__init__(command, host=host, port=port, title="replay-tui", public_url=public_url)
        self.guard = guard
        self.max_sessions = max_sessions
        self.sockets: set[web.WebSocketResponse] = set()
        """The sockets that have an app process: at most ``max_sessions``."""
        self.on_listening = on_listening

    def initialize_logging(self) -> None:
        super().initialize_logging()
        logging.getLogger("aiohttp.access").addFilter(_ScrubToken())

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._check)
        return app

    @web.middleware
    async def _check(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        reason = self.guard.refusal(request)
        if reason is not None:
            return web.Response(status=403, text=f"403 Forbidden: {reason}\n")
        response = await handler(request)
        if self.guard.token_ok(request.query.get("token")) and request.path == "/":
            response.set_cookie(self.guard.cookie, self.guard.token, httponly=True, samesite="Strict", path="/")
        return response

    async def on_startup(self, app: web.Application) -> None:
        self.on_listening()  # textual-serve's banner prints the command as Rich markup: ours is plain text

    async def on_shutdown(self, app: web.Application) -> None:
        """Close every socket, so each handler ends its app now rather than when aiohttp gives up on it."""
        for websocket in list(self.sockets):
            await websocket.close(code=GOING_AWAY, message=b"replay-tui serve stopped")

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """One app process per socket, while fewer than ``max_sessions`` run; ended when the socket closes."""
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        if len(self.sockets) >= self.max_sessions:
            full = self.max_sessions
            message = f"replay-tui serve: all {full} sessions are in use (--max-sessions): close one and reload"
            await websocket.send_bytes(message.encode() + b"\r\n")  # shown in the page's terminal
            await websocket.close(code=FULL_CLOSE_CODE, message=message.encode())
            return websocket
        self.sockets.add(websocket)

        async def close() -> None:
            await websocket.close()

        service = BoundedAppService(
            self.command,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=close,
            download_manager=self.download_manager,
            debug=self.debug,
        )
        try:
            await service.start(request.query.get("width", 80), request.query.get("height", 24))
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # a malformed message from the browser ends its session, not the server
            log.warning("session ended: %s", error)
        finally:
            try:
                await asyncio.shield(service.stop())
            finally:
                self.sockets.discard(websocket)
        return websocket
