"""A small keep-alive JSON client for `toolgym serve` (standard library only)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import zlib
from urllib.parse import urlsplit


class ToolgymServerError(RuntimeError):
    """The server answered with an error (4xx): `code` is stable, the message says how to fix it."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"toolgym server {status} {code}: {message}")
        self.status = status
        self.code = code


class ToolgymSessionLost(ToolgymServerError):
    """The server no longer holds the episode's session: it (or its worker) restarted, or closed the session as
    idle. The episode cannot go on; its reward is None. The next `reset()` starts a new session."""

    def __init__(self, session_id: str, server: str, message: str):
        super().__init__(
            404,
            "SESSION_UNKNOWN",
            f"the server {server} no longer holds session {session_id} (it restarted, or closed the session as idle: "
            f"raise `toolgym serve --idle-seconds` for slow steps); this episode gets no reward and the next reset() "
            f"starts a new session ({message})",
        )
        self.session_id = session_id


class ToolgymConnectionError(ConnectionError):
    """The server could not be reached, or the connection was lost before its answer came.

    `may_have_run` is False when the request certainly did not reach the server (connection refused, no
    such host) and True when it was sent and its answer lost: the server may have acted on it.
    """

    def __init__(self, message: str, may_have_run: bool = False):
        super().__init__(message)
        self.may_have_run = may_have_run


_LOST = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, http.client.CannotSendRequest, http.client.BadStatusLine)


class ServerClient:
    """One keep-alive HTTP connection to the server; reconnects once when the server closed it."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 60.0):
        parts = urlsplit(base_url if "://" in base_url else f"http://{base_url}")
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"base_url must be http(s)://host:port, got {base_url!r}")
        self.base_url = f"{parts.scheme}://{parts.netloc}"
        self._prefix = parts.path.rstrip("/")
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._https = parts.scheme == "https"
        self._timeout = timeout
        self._headers = {"Content-Type": "application/json", "Connection": "keep-alive"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._connection: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self._connection is None:
            factory = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._connection = factory(self._host, self._port, timeout=self._timeout)
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def request(self, method: str, path: str, body: object | None = None, resend: bool = True) -> object:
        """Sends one request and returns the decoded JSON answer.

        When the connection is lost after the request went out (the server closed an idle keep-alive
        connection, or died), the request is sent once more on a new connection only if `resend`: pass
        False for anything that must not run twice (a tool call without a sequence number); such a loss
        raises `ToolgymConnectionError` with `may_have_run=True`.
        """
        data = None if body is None else json.dumps(body).encode("utf-8")
        sent = False
        attempts = 3 if resend else 1
        for attempt in range(attempts):
            connection = self._connect()
            try:
                connection.request(method, self._prefix + path, body=data, headers=self._headers)
                sent = True
                response = connection.getresponse()
                payload = response.read()
                break
            except _LOST as error:
                self.close()
                if attempt == attempts - 1:
                    raise ToolgymConnectionError(
                        f"lost the connection to the toolgym server at {self.base_url} before its answer to {method} {path}: {error}",
                        may_have_run=sent,
                    ) from error
            except (ConnectionRefusedError, socket.gaierror, socket.timeout, OSError) as error:
                self.close()
                raise ToolgymConnectionError(
                    f"cannot reach the toolgym server at {self.base_url} ({error}); start it with "
                    f"`npx toolgym serve --port {self._port}` or pass the right base_url",
                    may_have_run=sent,
                ) from error
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        try:
            value = json.loads(payload.decode("utf-8")) if payload else None
        except ValueError as error:
            raise ToolgymServerError(response.status, "INVALID_RESPONSE", f"not JSON: {payload[:200]!r}") from error
        if response.status >= 400:
            detail = value.get("error", {}) if isinstance(value, dict) else {}
            raise ToolgymServerError(response.status, str(detail.get("code", "HTTP_ERROR")), str(detail.get("message", payload[:200])))
        return value


def split_urls(urls: str | list[str] | tuple[str, ...]) -> list[str]:
    """One URL, a comma-separated list, or a list of URLs, as a list without repeats (order kept)."""
    items = urls.split(",") if isinstance(urls, str) else list(urls)
    kept = list(dict.fromkeys(item.strip().rstrip("/") for item in items if item and item.strip()))
    if not kept:
        raise ValueError("give at least one toolgym server URL, e.g. http://127.0.0.1:8765")
    return kept


class ServerPool:
    """The servers a factory's environments share. A new session goes to the server its task's address picks
    (a hash of it, so a GRPO group's sessions, one row repeated, meet on one server and share its task there)
    or, without an address, to the next server in turn; a server that could not be reached is skipped for
    `retry_after` seconds (it is tried again after that, or when every server is marked down). Thread-safe:
    TRL creates and resets environments from several threads."""

    def __init__(self, urls: str | list[str], retry_after: float = 10.0):
        self.urls = split_urls(urls)
        self._retry_after = retry_after
        self._lock = threading.Lock()
        self._turn = 0
        self._down_until: dict[str, float] = {}

    def order(self, address: str | None = None) -> list[str]:
        """The servers to try for a session, best first: the one `address` picks (else the next in turn), then
        the rest in order; down ones last."""
        with self._lock:
            if address is None:
                start = self._turn % len(self.urls)
                self._turn += 1
            else:
                start = zlib.crc32(address.encode("utf-8")) % len(self.urls)
            now = time.monotonic()
            rotated = self.urls[start:] + self.urls[:start]
            up = [url for url in rotated if self._down_until.get(url, 0.0) <= now]
            return up + [url for url in rotated if url not in up]

    def mark_down(self, url: str) -> None:
        with self._lock:
            self._down_until[url] = time.monotonic() + self._retry_after

    def mark_up(self, url: str) -> None:
        with self._lock:
            self._down_until.pop(url, None)
