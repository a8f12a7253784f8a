"""Client secrets: short-lived keys a browser page may present instead of an API key.

A page must never hold a long-lived key. The app's backend, which does hold one, asks
``POST /v1/realtime/client_secrets`` for a secret (``ek_…``), hands it to the page, and the page presents it once
to open a WebRTC call (``POST /v1/realtime/calls``). A secret:

- expires ``seconds`` after it is minted (10 s to 2 h; the ``webrtc.client_secret_seconds`` default);
- opens one call: redeeming it removes it, so a copied secret is worth nothing once used;
- may carry a session configuration, which the call it opens starts with;
- lives in this process only (a replica does not know another's secrets: route a page to the replica that
  minted its secret, or keep the mint and the call on one host).

Secrets are kept by their SHA-256 digest, so the table holds nothing a memory dump could replay, and at most
:data:`MAX_OUTSTANDING` at once (expired ones are dropped first).
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PREFIX = "ek_"
"""How a client secret starts (the JS Agents SDK requires it in a browser)."""

MIN_SECONDS = 10
MAX_SECONDS = 7200
"""The lifetimes a secret may be minted with, as OpenAI's API allows."""

MAX_OUTSTANDING = 10_000
"""Secrets unredeemed and unexpired at once; minting one more is refused."""


class SecretRefused(Exception):
    """A secret that opens nothing: expired, used already, never minted, or none left to mint. The message says
    which, for the HTTP error's body."""


@dataclass(frozen=True)
class ClientSecret:
    """A minted secret: its ``value`` (given out once), when it expires (Unix seconds), the session it opens, and
    the client API key that minted it (None on a server without keys), which its call counts against."""

    value: str
    expires_at: int
    session: dict[str, Any] = field(default_factory=dict)
    owner: str | None = None


class ClientSecrets:
    """The process's outstanding client secrets. ``clock`` tells Unix time (seconds)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._outstanding: dict[bytes, ClientSecret] = {}
        self._used: dict[bytes, int] = {}  # digest -> when it would have expired: to tell "used" from "unknown"

    def mint(self, seconds: int, session: dict[str, Any], *, owner: str | None = None) -> ClientSecret:
        """A new secret valid for ``seconds`` that opens a call configured with ``session``, minted by ``owner``.
        Raises
        :class:`SecretRefused` when :data:`MAX_OUTSTANDING` are outstanding, ``ValueError`` for a lifetime outside
        :data:`MIN_SECONDS`..:data:`MAX_SECONDS`."""
        if not MIN_SECONDS <= seconds <= MAX_SECONDS:
            raise ValueError(f"expires_after.seconds must be between {MIN_SECONDS} and {MAX_SECONDS}")
        self._forget_expired()
        if len(self._outstanding) >= MAX_OUTSTANDING:
            raise SecretRefused(f"{MAX_OUTSTANDING} client secrets are outstanding; use or let some expire first")
        secret = ClientSecret(PREFIX + secrets.token_urlsafe(32), int(self._clock()) + seconds, dict(session),
                              owner)
        self._outstanding[_digest(secret.value)] = secret
        return secret

    def peek(self, value: str) -> ClientSecret:
        """The secret ``value`` names, left outstanding. Raises :class:`SecretRefused` saying why it opens
        nothing."""
        digest = _digest(value)
        secret = self._outstanding.get(digest)
        if secret is None:
            raise SecretRefused("this client secret was used already" if digest in self._used
                                else "unknown client secret")
        if secret.expires_at <= self._clock():
            raise SecretRefused("this client secret has expired")
        return secret

    def redeem(self, value: str) -> ClientSecret:
        """The secret ``value`` names (as :meth:`peek`), removed so that it opens nothing again."""
        secret = self.peek(value)
        digest = _digest(value)
        del self._outstanding[digest]
        self._used[digest] = secret.expires_at
        return secret

    def _forget_expired(self) -> None:
        now = self._clock()
        self._outstanding = {d: s for d, s in self._outstanding.items() if s.expires_at > now}
        self._used = {d: expiry for d, expiry in self._used.items() if expiry > now}


def is_client_secret(key: str | None) -> bool:
    """Whether a presented key is a client secret (by its prefix) rather than an API key."""
    return key is not None and key.startswith(PREFIX)


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode("utf-8")).digest()
