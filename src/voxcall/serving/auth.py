"""Client authentication for ``/v1/realtime``: where a client's key comes from and whether it is one of ours.

Clients present a key either as ``Authorization: Bearer KEY`` (servers, the official SDKs) or, since browsers cannot
set headers on a WebSocket, as the subprotocol ``openai-insecure-api-key.KEY``. These are pure functions; the app
decides when authentication applies (whenever the server has client keys).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

REALTIME_SUBPROTOCOL = "realtime"
"""The subprotocol realtime clients offer; the server must echo it back."""

KEY_SUBPROTOCOL_PREFIX = "openai-insecure-api-key."
"""Prefix of the subprotocol a browser uses to carry its key (never echoed back)."""


def extract_client_key(headers: Mapping[str, str], subprotocols: Sequence[str]) -> str | None:
    """The key the client presented: a bearer ``Authorization`` header first, else the key subprotocol; None when
    there is neither (or it is empty). Header names and the ``Bearer`` scheme match case-insensitively."""
    return _bearer_key(headers) or _subprotocol_key(subprotocols)


def key_is_valid(presented: str | None, keys: set[str]) -> bool:
    """Whether ``presented`` is one of ``keys``. Every key is compared, in constant time over fixed-size digests,
    so neither the time taken nor an early exit tells which key matched or how long the keys are."""
    if presented is None:
        return False
    digest = _digest(presented)
    valid = False
    for key in keys:
        valid |= hmac.compare_digest(digest, _digest(key))
    return valid


def origin_allowed(origin: str | None, host: str | None, allowed: Sequence[str]) -> bool:
    """Whether a WebSocket may be opened from ``origin``: no ``Origin`` (not a browser), the server's own page (the
    origin's host is the request's ``host``), an origin in ``allowed``, or ``*`` in ``allowed``. This stops any
    web page the user visits from driving a server on their machine (cross-site WebSocket hijacking)."""
    if origin is None:
        return True
    origin = origin.strip().lower().rstrip("/")
    if "*" in allowed or origin in {a.strip().lower().rstrip("/") for a in allowed}:
        return True
    own = urlsplit(origin).netloc if origin.startswith(("http://", "https://")) else ""
    return bool(own) and own == (host or "").strip().lower()


def choose_subprotocol(offered: Sequence[str]) -> str | None:
    """The subprotocol to accept: ``realtime`` when the client offered it (it must be echoed), else None."""
    return REALTIME_SUBPROTOCOL if REALTIME_SUBPROTOCOL in offered else None


def _bearer_key(headers: Mapping[str, str]) -> str | None:
    """The key of an ``Authorization: Bearer KEY`` header, looked up case-insensitively in any mapping."""
    value = next((value for name, value in headers.items() if name.lower() == "authorization"), None)
    if value is None:
        return None
    parts = value.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != "bearer":
        return None
    return parts[1].strip()


def _subprotocol_key(subprotocols: Sequence[str]) -> str | None:
    """The key carried by the first non-empty ``openai-insecure-api-key.KEY`` subprotocol."""
    for protocol in subprotocols:
        if protocol.startswith(KEY_SUBPROTOCOL_PREFIX) and len(protocol) > len(KEY_SUBPROTOCOL_PREFIX):
            return protocol.removeprefix(KEY_SUBPROTOCOL_PREFIX)
    return None


def _digest(key: str) -> bytes:
    """A fixed-size digest of ``key``, so comparisons take the same time whatever the keys' lengths."""
    return hashlib.sha256(key.encode("utf-8")).digest()
