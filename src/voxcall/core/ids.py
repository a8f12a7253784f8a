"""Ids and text the session makes: fresh ids for its objects, and text that is always valid Unicode."""

from __future__ import annotations

import re
import secrets


def new_id(prefix: str) -> str:
    """A fresh id such as ``item_…``, ``resp_…`` or ``event_…`` (20 random URL-safe characters)."""
    return f"{prefix}_{secrets.token_urlsafe(15)}"


LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""Half a UTF-16 surrogate pair: text that cannot be encoded as UTF-8."""


def unicode_text(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate (half a pair, which a provider's JSON ``\\ud800`` escape or a
    tool's output can carry) replaced by U+FFFD: such text cannot be encoded as UTF-8, so kept as is it would fail
    the socket and every later request that carries the conversation."""
    return text if text.isascii() else LONE_SURROGATE.sub("\ufffd", text)
