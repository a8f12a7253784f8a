"""Images in user messages: reading an ``input_image`` part a client sends, and what a model that cannot see is
told instead.

An image arrives as a GA content part ``{"type": "input_image", "image_url": "data:image/png;base64,…",
"detail": "auto"}`` and stays in the conversation in that form. Only ``data:`` URLs of PNG, JPEG, WebP or GIF
images are taken, at most ``session.max_image_bytes`` long: voxcall never fetches an ``http(s)`` URL (that would
let a client make the server fetch any address it can reach), and passing one through to a cloud model would
work for some backends only, so it is refused for all.

For a backend that does not see images (:func:`~voxcall.llm.media_of`), the model reads :data:`UNSEEN_IMAGE`
where each image was, and the image itself is dropped from the conversation before the next response
(:func:`strip_images`): the part stays, ``image_url`` null, so a client that retrieves the item sees that an
image was there. Dropping is irreversible, so a hidden response parks it until its claim
(:meth:`~voxcall.core.responses.lifecycle.ResponseLifecycle.context`).
"""

from __future__ import annotations

import binascii
import re
from typing import Any

from voxcall.core.protocol import ProtocolError

UNSEEN_IMAGE = "[the user sent an image that this model cannot see]"
"""What a model that does not see images reads in place of each image."""

_DATA_URL = re.compile(r"data:image/(png|jpeg|webp|gif);base64,", re.IGNORECASE)


def read_image_part(part: Any, param: str, max_bytes: int) -> dict[str, Any]:
    """The stored form of a client's ``input_image`` part (an SDK content model); a ``ProtocolError`` naming
    ``param`` for a missing, remote, malformed or oversized image URL."""
    url = part.image_url
    if not isinstance(url, str) or not url:
        raise ProtocolError(f"'{param}.image_url' must be a data URL (data:image/png;base64,...)",
                            code="invalid_value", param=f"{param}.image_url")
    if len(url) > max_bytes:
        raise ProtocolError(f"the image is {len(url)} bytes as a data URL, more than the limit of {max_bytes} "
                            "(session.max_image_bytes)", code="image_too_large", param=f"{param}.image_url")
    header = _DATA_URL.match(url)
    if header is None:
        raise ProtocolError(f"'{param}.image_url' must be a base64 data URL of a PNG, JPEG, WebP or GIF image "
                            "(data:image/png;base64,...); voxcall does not fetch http(s) URLs",
                            code="invalid_value", param=f"{param}.image_url")
    try:
        binascii.a2b_base64(url[header.end():], strict_mode=True)
    except binascii.Error:
        raise ProtocolError(f"'{param}.image_url' is not valid base64 after its 'base64,'", code="invalid_value",
                            param=f"{param}.image_url") from None
    return {"type": "input_image", "image_url": url, "detail": part.detail or "auto"}  # the SDK checked detail


def holds_images(content: list[dict[str, Any]]) -> bool:
    """Whether a message's parts still hold an image's data."""
    return any(part.get("type") == "input_image" and part.get("image_url") for part in content)


def strip_images(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``content`` with each image's data dropped (its part kept, ``image_url`` null)."""
    return [{**part, "image_url": None} if part.get("type") == "input_image" else part for part in content]
