"""Twilio's request signature, ``X-Twilio-Signature``: proof that a Media Stream was opened by Twilio for this
account and not by anyone who found the URL.

Twilio signs each request with the account's auth token: base64 of HMAC-SHA1 over the full URL it requested (for
a POST, followed by each form parameter's name and value, sorted by name; a stream's WebSocket upgrade is a GET, so
the URL alone). Behind a proxy that terminates TLS the server sees another scheme, and perhaps another host, than
the URL Twilio signed: the operator names the public origin (``twilio.public_url``) and the URL is rebuilt on it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

SIGNATURE_HEADER = "x-twilio-signature"


def signature(auth_token: str, url: str, params: Mapping[str, str] | None = None) -> str:
    """The signature Twilio sends for a request to ``url`` (with form ``params``, for a POST)."""
    form = params or {}
    signed = url + "".join(name + form[name] for name in sorted(form))
    digest = hmac.new(auth_token.encode("utf-8"), signed.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def signature_valid(auth_token: str, url: str, presented: str | None) -> bool:
    """Whether ``presented`` is Twilio's signature of a GET of ``url``, with or without its default port (Twilio
    signs either, as its own validator knows), compared in constant time."""
    if not presented:
        return False
    given = presented.strip().encode("ascii", "replace")
    valid = False
    for variant in _port_variants(url):
        valid |= hmac.compare_digest(signature(auth_token, variant).encode("ascii"), given)
    return valid


def signed_url(public_url: str | None, request_url: str) -> str:
    """The URL Twilio requested: ``request_url`` as the server saw it, or its path and query on ``public_url``
    (``wss://voice.example.com``) when a proxy in front changes the scheme or host."""
    if public_url is None:
        return request_url
    parts = urlsplit(request_url)
    return public_url + parts.path + (f"?{parts.query}" if parts.query else "")


def _port_variants(url: str) -> list[str]:
    """``url`` without an explicit port and with its scheme's default one (443 for ``wss``/``https``, else 80)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    default = 443 if parts.scheme in ("wss", "https") else 80
    netloc = parts.netloc.rpartition("@")[0] + "@" if "@" in parts.netloc else ""
    bare = urlunsplit(parts._replace(netloc=netloc + host))
    ported = urlunsplit(parts._replace(netloc=f"{netloc}{host}:{parts.port or default}"))
    return [url, bare, ported]
