"""An OpenAI-compatible HTTP API (OpenAI, vLLM, text-embeddings-inference, Ollama,
llama.cpp's server, LM Studio, gateways): one JSON request, one bounded JSON answer.

Waiting is bounded: each request has `request_seconds` (connecting, each read, and the
whole answer, headers included: `_Deadline`), and 408, 409, 429, 5xx answers, timeouts
and dropped connections are retried at most `max_retries` times, after an exponential
backoff or the server's `Retry-After`, each wait at most `MAX_WAIT_SECONDS`. 401 and 403 end at once
(`endpoint_unauthorized`), any other answer but 200 too (`endpoint_failed`, with the
status and at most 200 characters of the server's message), and so do retries used up.
An answer is read in pieces and refused past `MAX_BODY_BYTES` without reading the rest.

The key is read from the environment and sent in the `Authorization` header, nothing
else: every sentence this module writes has it masked, and the endpoint is named by its
host alone. A base URL's user and password go as Basic credentials (in place of the key,
as httpx sends them) and are masked too, as written and as sent. A key that a header
cannot carry (anything but printable ASCII) is refused before any request.
"""

from __future__ import annotations

import base64
import contextlib
import email.utils
import json
import math
import os
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import orjson
from pydantic import Field, field_validator

from ..errors import ErrorCode, ExplorerError
from ..models import StrictModel

PREFIX = "openai:"  # `--embedder openai:MODEL`, `--generator openai:MODEL`
DEFAULT_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV = "OPENAI_BASE_URL"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_REQUEST_SECONDS = 60
MAX_REQUEST_SECONDS = 600
DEFAULT_RETRIES = 5
MAX_RETRIES = 10
FIRST_BACKOFF_SECONDS = 0.5
MAX_WAIT_SECONDS = 60.0  # one wait, whatever `Retry-After` asks
MAX_BODY_BYTES = 64 * 2**20
MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_MESSAGE_CHARS = 200
MAX_MODEL_CHARS = 150
RETRIED = frozenset({408, 409, 429})
MASK = "***"

if TYPE_CHECKING:  # httpx is imported where a request is made: most commands make none
    import httpx


@dataclass(frozen=True)
class EndpointOptions:
    """Where the API is and how long to wait for it (the command line's options; the
    app's secrets). `base_url` None: `OPENAI_BASE_URL` from the environment, else
    OpenAI's."""

    base_url: str | None = None
    api_key_env: str = DEFAULT_KEY_ENV
    request_seconds: float = DEFAULT_REQUEST_SECONDS
    max_retries: int = DEFAULT_RETRIES


class NamedEndpoint(StrictModel):
    """An endpoint an operator names for the app (`.streamlit/secrets.toml`,
    `[embedders.NAME]` or `[generators.NAME]`): the same settings as the command line's
    options, the key still read from the environment variable `api_key_env`."""

    base_url: str = Field(min_length=1, max_length=2000)
    model: str = Field(min_length=1, max_length=MAX_MODEL_CHARS)
    api_key_env: str = Field(default=DEFAULT_KEY_ENV, min_length=1, max_length=200)
    dimensions: int | None = Field(default=None, ge=1, le=4096)
    batch: int = Field(default=256, ge=1, le=1024)
    request_seconds: float = Field(default=DEFAULT_REQUEST_SECONDS, gt=0, le=MAX_REQUEST_SECONDS)
    max_retries: int = Field(default=DEFAULT_RETRIES, ge=0, le=MAX_RETRIES)

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str) -> str:
        if urlsplit(value).scheme not in ("http", "https"):
            raise ValueError("must be an http:// or https:// URL")
        return value

    def options(self) -> EndpointOptions:
        return EndpointOptions(
            self.base_url, self.api_key_env, self.request_seconds, self.max_retries
        )


def model_of(spec: str, code: ErrorCode, option: str) -> str:
    """MODEL of `openai:MODEL`: 1 to 150 printable characters without white space."""
    model = spec.removeprefix(PREFIX)
    if not 0 < len(model) <= MAX_MODEL_CHARS or not model.isprintable() or " " in model:
        raise ExplorerError(
            code,
            f"{option} openai:MODEL takes a model id of 1 to {MAX_MODEL_CHARS} printable "
            "characters without spaces",
        )
    return model


class BadAnswer(Exception):
    """A 200 answer that is not what was asked for: the caller says what that means."""


class EndpointError(ExplorerError):
    """`endpoint_unauthorized` or `endpoint_failed`, with the HTTP status (0: none) and
    the server's message (masked, at most 200 characters)."""

    def __init__(self, code: ErrorCode, detail: str, status: int = 0, message: str = "") -> None:
        super().__init__(code, detail)
        self.status = status
        self.message = message


class Endpoint:
    """One API, its key read once from the environment; counts the requests it sent."""

    def __init__(
        self,
        options: EndpointOptions,
        code: ErrorCode,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        base = options.base_url or environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
        try:  # urllib refuses an unclosed or unreadable [IPv6] host and a port past 65535
            parts = urlsplit(base)
            port = parts.port
        except ValueError:
            parts, port = urlsplit(""), -1
        if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
            raise ExplorerError(code, "the base URL must be an http:// or https:// URL with a host")
        self.host = parts.hostname + (f":{port}" if port else "")
        self.options = options
        self._url = base.rstrip("/")
        self._key = environ.get(options.api_key_env, "")
        if not all(" " <= c <= "~" for c in self._key):
            raise ExplorerError(
                ErrorCode.ENDPOINT_UNAUTHORIZED,
                f"the key in ${options.api_key_env} holds characters a request header cannot "
                "carry (only printable ASCII)",
            )
        self._secrets = _secrets(self._key, parts.username, parts.password)
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        import httpx

        self._client = httpx.Client(
            headers=headers,
            timeout=options.request_seconds,
            follow_redirects=False,
            limits=httpx.Limits(max_keepalive_connections=0),  # one connection a request
        )
        self.requests = 0

    def masked(self, text: str) -> str:
        """`text` with the key and the base URL's credentials (if any) replaced by `***`."""
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    def close(self) -> None:
        self._client.close()

    def post(self, path: str, payload: Mapping[str, Any]) -> Any:
        """The JSON answer of POST `path`, after at most `max_retries` retries; `BadAnswer`
        when a 200 answer is too large or not JSON."""
        import httpx

        body = json.dumps(payload).encode("utf-8")
        retries = self.options.max_retries
        for attempt in range(retries + 1):
            last = attempt == retries
            try:
                status, headers, data = self._send(path, body)
            except httpx.TimeoutException:
                problem, wait = f"no answer within {self.options.request_seconds:g} s", None
            except httpx.TransportError as error:  # refused, dropped, cut off mid-answer
                problem, wait = f"the connection failed ({type(error).__name__})", None
            else:
                if status == 200:
                    return _json(data)
                message = self._message(data)
                if status in (401, 403):
                    raise EndpointError(
                        ErrorCode.ENDPOINT_UNAUTHORIZED,
                        f"{self.host} answered {status}{message}: check the key in "
                        f"${self.options.api_key_env}" + ("" if self._key else " (it is not set)"),
                        status,
                    )
                if status not in RETRIED and status < 500:
                    raise EndpointError(
                        ErrorCode.ENDPOINT_FAILED,
                        f"{self.host} answered {status}{message}",
                        status,
                        message,
                    )
                problem, wait = f"it answered {status}{message}", _retry_after(headers)
            if last:
                break
            time.sleep(min(wait if wait is not None else backoff(attempt), MAX_WAIT_SECONDS))
        raise EndpointError(
            ErrorCode.ENDPOINT_FAILED,
            f"{self.host} failed {retries + 1} time(s) (--max-retries {retries}): {problem}",
        )

    def _send(self, path: str, body: bytes) -> tuple[int, httpx.Headers, bytearray | None]:
        """Status, headers and body (None: larger than the bound) of one request, read
        in pieces within `request_seconds` overall (`_Deadline`)."""
        import httpx

        self.requests += 1
        deadline = _Deadline(self.options.request_seconds)
        request = self._client.build_request(
            "POST",
            self._url + path,
            content=body,
            headers={"Content-Type": "application/json"},
            extensions={"trace": deadline.trace},
        )
        with deadline:
            try:
                answer = self._read(request)
            except httpx.TransportError:
                if deadline.passed:
                    raise httpx.ReadTimeout("the answer took too long") from None
                raise
            if deadline.passed:  # the cut ended an answer that runs to the connection's end
                raise httpx.ReadTimeout("the answer took too long")
            return answer

    def _read(self, request: httpx.Request) -> tuple[int, httpx.Headers, bytearray | None]:
        response = self._client.send(request, stream=True)
        try:
            limit = MAX_BODY_BYTES if response.status_code == 200 else MAX_ERROR_BODY_BYTES
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                return response.status_code, response.headers, None
            answer = bytearray()  # grown in place: no second copy of a large answer
            for piece in response.iter_bytes():
                if len(answer) + len(piece) > limit:
                    return response.status_code, response.headers, None
                answer += piece
            return response.status_code, response.headers, answer
        finally:
            response.close()

    def _message(self, data: bytearray | None) -> str:
        """`: ` and the server's message, at most 200 characters, key masked."""
        if not data:
            return ""
        text = data.decode("utf-8", "replace")
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = text
        if isinstance(parsed, dict):
            inner = parsed.get("error", parsed.get("detail", parsed.get("message", parsed)))
            if isinstance(inner, dict):
                inner = inner.get("message", inner)
            parsed = inner
        words = " ".join(self.masked(str(parsed)).split())
        if not words:
            return ""
        cut = words[:MAX_MESSAGE_CHARS]
        return f": {cut!r}" if len(cut) == len(words) else f": {cut + '…'!r}"


class _Deadline:
    """Cuts one request's connection when `seconds` have passed since it began. httpx
    bounds each read, not the whole: a server that sends a byte of its TLS handshake,
    headers or body now and then would otherwise hold a request for hours. The request's
    own connection (keep-alive is off, so each request opens one) is shut down from a
    timer thread, which ends any read blocked on it. The shutdown goes through a
    duplicate of the connected socket's descriptor, taken as it connects: it acts on the
    connection whatever wraps the socket afterwards (TLS detaches the first object)."""

    def __init__(self, seconds: float) -> None:
        self.passed = False
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True

    def trace(self, event: str, info: Mapping[str, Any]) -> None:
        """httpcore's `trace` extension: the socket, once connected."""
        if event == "connection.connect_tcp.complete":
            connected = info["return_value"].get_extra_info("socket")
            with self._lock:
                self._socket = socket.fromfd(connected.fileno(), connected.family, connected.type)
                if self.passed:
                    self._shut()

    def _cut(self) -> None:
        with self._lock:
            self.passed = True
            self._shut()

    def _shut(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(OSError):  # already closed by its end
                self._socket.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            if self._socket is not None:
                self._socket.close()
                self._socket = None


def _secrets(key: str, username: str | None, password: str | None) -> list[str]:
    """What a sentence must never show, longest first: the key and a base URL's user and
    password, as written, decoded and as the Basic credentials sent for them."""
    found = {key} if key else set()
    if username or password:
        user, word = unquote(username or ""), unquote(password or "")
        basic = base64.b64encode(f"{user}:{word}".encode()).decode("ascii")
        found |= {basic, f"{user}:{word}", f"{username or ''}:{password or ''}"}
        found |= {secret for secret in (password, word) if secret}
    return sorted(found, key=len, reverse=True)


def backoff(attempt: int) -> float:
    """Seconds before retry `attempt + 1`: 0.5, 1, 2, 4, … (at most `MAX_WAIT_SECONDS`)."""
    return min(FIRST_BACKOFF_SECONDS * 2.0**attempt, MAX_WAIT_SECONDS)


def _retry_after(headers: httpx.Headers) -> float | None:
    """`Retry-After` in seconds (a number or an HTTP date), None when absent or unreadable."""
    value = headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = (when - datetime.now(UTC)).total_seconds() if when.tzinfo else 0.0
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def _refuse_constant(name: str) -> float:
    raise BadAnswer(f"a {name} value")


def _json(data: bytearray | None) -> Any:
    """orjson's reading (several times faster on vectors); when it refuses, the standard
    library's says why (a NaN is a value it reads, and we refuse by name)."""
    if data is None:
        raise BadAnswer(f"an answer larger than {MAX_BODY_BYTES // 2**20} MiB")
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(data, parse_constant=_refuse_constant)
    except ValueError as error:
        raise BadAnswer(f"an answer that is not JSON ({error})") from None
    except RecursionError:  # past orjson's 1,024 levels, as deep as Python's stack
        raise BadAnswer("an answer nested too deeply to be the API's JSON") from None
