"""What the two OpenAI-protocol backends share: building the client and translating its errors.

Any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama) is reached through the official ``openai``
package. Its exceptions carry provider text that may quote a key or a URL; :func:`translate_errors` replaces
them with an :class:`LLMError` whose message says only what kind of failure it was.
"""

from __future__ import annotations

import os
import re
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import openai

from voxcall.llm.base import LLMError

DEFAULT_TIMEOUT = 60.0
"""Seconds before a request, or a stalled stream, counts as failed."""

LOCAL_API_KEY = "no-key"
"""Sent to non-OpenAI servers when no key is given: the user's OpenAI key must never reach a third party."""

CONTEXT_LENGTH_ERRORS = frozenset({"context_length_exceeded", "exceed_context_size_error"})
"""Provider error codes or types saying that a request is longer than the model's context: OpenAI and
llama-cpp-python's server send the code ``context_length_exceeded``, llama.cpp's ``llama-server`` the type
``exceed_context_size_error``. Such a failure keeps the code ``context_length_exceeded``: voxcall does not know a
remote model's tokenizer, so it does not fit the request to the context (the local backend does), and the client
learns why the response failed."""

_SAFE_CODE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_STATUS_CODES = {400: "bad_request", 401: "auth", 403: "auth", 404: "not_found", 408: "timeout",
                 413: "bad_request", 422: "bad_request", 429: "rate_limited"}


def is_openai_url(base_url: str | None) -> bool:
    """Whether ``base_url`` (None: the SDK's default) is OpenAI's own API rather than a compatible server."""
    if base_url is None:
        return True
    host = urlsplit(base_url).hostname or ""
    return host == "openai.com" or host.endswith(".openai.com")


def resolve_base_url(base_url: str | None) -> str | None:
    """``base_url``, else ``OPENAI_BASE_URL`` as the SDK would read it, else None (OpenAI itself)."""
    return base_url or os.environ.get("OPENAI_BASE_URL") or None


def make_client(
    base_url: str | None, api_key: str | None, timeout: float, max_retries: int
) -> openai.AsyncOpenAI:
    """An ``AsyncOpenAI`` for ``base_url``; without ``api_key``, OpenAI reads ``OPENAI_API_KEY`` and any other
    server gets :data:`LOCAL_API_KEY`. Raises :class:`LLMError` when OpenAI is meant and no key is set."""
    if api_key is None and not is_openai_url(base_url):
        api_key = LOCAL_API_KEY
    try:
        return openai.AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout,
                                  max_retries=max_retries)
    except openai.OpenAIError as exc:
        raise LLMError("no API key: pass one or set OPENAI_API_KEY", code="auth") from exc


@contextmanager
def translate_errors() -> Iterator[None]:
    """Re-raise any ``openai`` exception inside the block as a safe :class:`LLMError` (chained, for logs)."""
    try:
        yield
    except openai.OpenAIError as exc:
        raise to_llm_error(exc) from exc


def to_llm_error(exc: openai.OpenAIError) -> LLMError:
    """The :class:`LLMError` for one ``openai`` exception; provider messages are left out (they may quote
    secrets)."""
    if isinstance(exc, openai.APITimeoutError):
        return LLMError("backend timed out", code="timeout")
    if isinstance(exc, openai.APIConnectionError):
        return LLMError(f"backend unavailable: {_connection_reason(exc)}", code="unavailable")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if exc.code in CONTEXT_LENGTH_ERRORS or exc.type in CONTEXT_LENGTH_ERRORS:
            return LLMError(f"backend returned HTTP {status} (context_length_exceeded): the conversation is "
                            "longer than the model's context", code="context_length_exceeded", status=status)
        code = _STATUS_CODES.get(status, "server_error" if status >= 500 else "backend_error")
        return LLMError(f"backend returned HTTP {status}{provider_code(exc.code)}", code=code, status=status)
    if isinstance(exc, openai.APIError):  # an error event inside an otherwise successful stream
        return LLMError(f"backend reported an error{provider_code(exc.code)}", code="backend_error")
    return LLMError("backend error", code="backend_error")


def provider_code(code: object) -> str:
    """`` (context_length_exceeded)``: the provider's error code in parentheses when it is a plain
    identifier, else an empty string. A code is safe to show; free text is not."""
    return f" ({code})" if isinstance(code, str) and _SAFE_CODE.match(code) else ""


def _connection_reason(exc: BaseException) -> str:
    """A few words for why a connection failed, read from the exception chain rather than its text."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError) or "connection refused" in str(seen).lower():
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return "host not found"
        if isinstance(seen, ssl.SSLError):
            return "TLS error"
        seen = seen.__cause__ or seen.__context__
    return "connection error"
