"""What a client posts to open a WebRTC call: an SDP offer, and maybe the session to start with.

``POST /v1/realtime/calls`` takes either form OpenAI's API takes:

- ``Content-Type: application/sdp``: the body is the offer (what the JS Agents SDK sends);
- ``multipart/form-data`` with an ``sdp`` field (the offer) and an optional ``session`` field (a JSON object, the
  session configuration: the same fields as ``session.update``'s ``session``).

These are pure functions over the body; every rejection says what to send instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

MAX_OFFER_BYTES = 65_536
"""The largest offer (or form) accepted; a browser's audio offer is 3-6 kB."""


class OfferError(ValueError):
    """A body that is no usable offer; the message tells the client what is wrong."""


@dataclass(frozen=True)
class Offer:
    """An SDP offer and the session configuration that came with it (empty: none)."""

    sdp: str
    session: dict[str, Any] = field(default_factory=dict)


def read_sdp(body: bytes) -> Offer:
    """The offer of an ``application/sdp`` body."""
    return Offer(_checked_sdp(_text(body, "the SDP offer")))


def read_form(sdp: object, session: object) -> Offer:
    """The offer of a multipart form's ``sdp`` and ``session`` fields (each a string, or None when absent)."""
    if not isinstance(sdp, str):
        raise OfferError("the form has no 'sdp' field: send the SDP offer in it")
    return Offer(_checked_sdp(sdp), read_session(session, "the 'session' field"))


def read_session(value: object, where: str) -> dict[str, Any]:
    """A session configuration given as JSON text (None: none); its ``type`` defaults to ``realtime``."""
    if value is None:
        return {}
    if not isinstance(value, str):
        raise OfferError(f"{where} must be a JSON object")
    try:
        session = json.loads(value)
    except json.JSONDecodeError as exc:
        raise OfferError(f"{where} is not valid JSON: {exc.msg} (at character {exc.pos})") from None
    if not isinstance(session, dict):
        raise OfferError(f"{where} must be a JSON object")
    return session_config(session, where)


def session_config(session: dict[str, Any], where: str) -> dict[str, Any]:
    """``session`` as a ``session.update`` takes it: ``type`` ``realtime`` (the only kind a call carries)."""
    kind = session.setdefault("type", "realtime")
    if kind != "realtime":
        raise OfferError(f"{where}: a call's session has type 'realtime', not {kind!r}")
    return session


def _text(body: bytes, what: str) -> str:
    if len(body) > MAX_OFFER_BYTES:
        raise OfferError(f"{what} is {len(body)} bytes, over the limit of {MAX_OFFER_BYTES}")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise OfferError(f"{what} is not UTF-8 text") from None


def _checked_sdp(sdp: str) -> str:
    if len(sdp) > MAX_OFFER_BYTES:
        raise OfferError(f"the SDP offer is {len(sdp)} characters, over the limit of {MAX_OFFER_BYTES}")
    if not sdp.startswith("v=0"):
        raise OfferError("the body is not an SDP offer (it must start with 'v=0'); send the offer from "
                         "RTCPeerConnection.createOffer() as application/sdp")
    if "m=audio" not in sdp:
        raise OfferError("the offer has no audio (m=audio) section: add the microphone's track before "
                         "creating the offer")
    if "m=application" not in sdp:
        raise OfferError("the offer has no data channel (m=application) section: create the 'oai-events' data "
                         "channel before creating the offer")
    return sdp
