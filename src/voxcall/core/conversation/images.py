"""Images in user messages, as the conversation keeps them (GA ``input_image`` parts, read by
:mod:`voxcall.realtime.items`), and what a model that cannot see is told instead.

For a backend that does not see images (:func:`~voxcall.llm.media_of`), the model reads :data:`UNSEEN_IMAGE`
where each image was, and the image itself is dropped from the conversation before the next response
(:func:`strip_images`): the part stays, ``image_url`` null, so a client that retrieves the item sees that an
image was there. Dropping is irreversible, so a hidden response parks it until its claim
(:meth:`~voxcall.core.responses.lifecycle.ResponseLifecycle.context`).
"""

from __future__ import annotations

from typing import Any

UNSEEN_IMAGE = "[the user sent an image that this model cannot see]"
"""What a model that does not see images reads in place of each image."""



def holds_images(content: list[dict[str, Any]]) -> bool:
    """Whether a message's parts still hold an image's data."""
    return any(part.get("type") == "input_image" and part.get("image_url") for part in content)


def strip_images(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``content`` with each image's data dropped (its part kept, ``image_url`` null)."""
    return [{**part, "image_url": None} if part.get("type") == "input_image" else part for part in content]
