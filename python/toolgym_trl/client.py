"""A small keep-alive JSON client for `toolgym serve` (standard library only)."""

from __future__ import annotations

import http.client
import json
import socket
from urllib.parse import urlsplit


class ToolgymServerError(RuntimeError):
    """The server answered with an error (4xx): `code` is stable, the message says how to fix it."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"toolgym server {status} {code}: {message}")
        self.status = status
        self.code = code


class ToolgymConnectionError(ConnectionError):
    """The server could not be reached."""


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

    def request(self, method: str, path: str, body: object | None = None) -> object:
        data = None if body is None else json.dumps(body).encode("utf-8")
        for attempt in range(2):
            connection = self._connect()
            try:
                connection.request(method, self._prefix + path, body=data, headers=self._headers)
                response = connection.getresponse()
                payload = response.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, http.client.CannotSendRequest) as error:
                # The server closes idle keep-alive connections; the request was not processed, retry once.
                self.close()
                if attempt == 1:
                    raise ToolgymConnectionError(f"lost the connection to the toolgym server at {self.base_url}: {error}") from error
            except (ConnectionRefusedError, socket.gaierror, socket.timeout, OSError) as error:
                self.close()
                raise ToolgymConnectionError(
                    f"cannot reach the toolgym server at {self.base_url} ({error}); start it with "
                    f"`npx toolgym serve --port {self._port}` or pass the right base_url"
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
