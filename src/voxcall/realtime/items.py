"""Items a Realtime client sends (``conversation.item.create``, ``response.create``'s input) read into the
session's items (:mod:`voxcall.core.conversation.items`): the SDK's models checked for what voxcall takes
(supported parts and types, id length, images) with voxcall's defaults filled in.

An image arrives as a GA content part ``{"type": "input_image", "image_url": "data:image/png;base64,…",
"detail": "auto"}`` and stays in the conversation in that form. Only ``data:`` URLs of PNG, JPEG, WebP or GIF
images are taken, at most ``session.max_image_bytes`` long: voxcall never fetches an ``http(s)`` URL (that would
let a client make the server fetch any address it can reach), and passing one through to a cloud model would
work for some backends only, so it is refused for all.
"""

from __future__ import annotations

import binascii
import re
from typing import Any

from openai.types.realtime import (
    RealtimeConversationItemAssistantMessage,
    RealtimeConversationItemFunctionCall,
    RealtimeConversationItemFunctionCallOutput,
    RealtimeConversationItemSystemMessage,
    RealtimeConversationItemUserMessage,
    RealtimeMcpApprovalResponse,
)

from voxcall.core.conversation.items import (
    ApprovalResponseItem,
    CallItem,
    CallOutputItem,
    Item,
    MessageItem,
    Role,
)
from voxcall.core.errors import SessionError
from voxcall.core.ids import new_id
from voxcall.tools.calls import new_call_id

__all__ = ["item_from_client", "read_image_part"]

_TEXT_PART = {"user": "input_text", "system": "input_text", "assistant": "output_text"}
_MAX_ID = 64
_DATA_URL = re.compile(r"data:image/(png|jpeg|webp|gif);base64,", re.IGNORECASE)

_MESSAGES = (RealtimeConversationItemSystemMessage, RealtimeConversationItemUserMessage,
             RealtimeConversationItemAssistantMessage)


def item_from_client(model: Any, *, max_image_bytes: int, where: str = "item.") -> Item:
    """The item for a client's item (an SDK model from ``conversation.item.create`` or ``response.create``
    input); a ``SessionError`` for what voxcall does not take. Images longer than ``max_image_bytes`` (as data
    URLs) are refused (:mod:`voxcall.core.conversation.images`)."""
    item_id = model.id or new_id("item")
    if len(item_id) > _MAX_ID:
        raise SessionError(f"'{where}id' must be at most {_MAX_ID} characters", code="invalid_value",
                            param=f"{where}id")
    if isinstance(model, _MESSAGES):
        return _message(item_id, model, where, max_image_bytes)
    if isinstance(model, RealtimeConversationItemFunctionCall):
        return CallItem(item_id, model.call_id or new_call_id(), _non_empty(model.name, f"{where}name"),
                        model.arguments or "{}")
    if isinstance(model, RealtimeConversationItemFunctionCallOutput):
        return CallOutputItem(item_id, _non_empty(model.call_id, f"{where}call_id"), model.output)
    if isinstance(model, RealtimeMcpApprovalResponse):
        return ApprovalResponseItem(item_id, _non_empty(model.approval_request_id, f"{where}approval_request_id"),
                                    model.approve, model.reason)
    raise SessionError(f"unsupported item type {model.type!r}; expected message, function_call, "
                        "function_call_output or mcp_approval_response", code="invalid_value", param=f"{where}type")


def _non_empty(value: str, param: str) -> str:
    if not value:
        raise SessionError(f"'{param}' must be a non-empty string", code="invalid_value", param=param)
    return value


def _message(item_id: str, model: Any, where: str, max_image_bytes: int) -> MessageItem:
    """A message of text parts, and for a user message images too (audio in items is not supported yet)."""
    role: Role = model.role
    allowed = _TEXT_PART[role]
    parts: list[dict[str, Any]] = []
    for n, part in enumerate(model.content):
        param = f"{where}content[{n}]"
        if role == "user" and part.type == "input_image":
            parts.append(read_image_part(part, param, max_image_bytes))
            continue
        if part.type != allowed:
            images = " or input_image" if role == "user" else ""
            raise SessionError(f"'{param}.type' must be {allowed}{images} (audio is not supported in items yet)",
                                code="invalid_value", param=f"{param}.type")
        if part.text is None:
            raise SessionError(f"'{param}.text' must be a string", code="invalid_type", param=f"{param}.text")
        parts.append({"type": allowed, "text": part.text})
    return MessageItem(item_id, role, parts)


def read_image_part(part: Any, param: str, max_bytes: int) -> dict[str, Any]:
    """The stored form of a client's ``input_image`` part (an SDK content model); a ``SessionError`` naming
    ``param`` for a missing, remote, malformed or oversized image URL."""
    url = part.image_url
    if not isinstance(url, str) or not url:
        raise SessionError(f"'{param}.image_url' must be a data URL (data:image/png;base64,...)",
                            code="invalid_value", param=f"{param}.image_url")
    if len(url) > max_bytes:
        raise SessionError(f"the image is {len(url)} bytes as a data URL, more than the limit of {max_bytes} "
                            "(session.max_image_bytes)", code="image_too_large", param=f"{param}.image_url")
    header = _DATA_URL.match(url)
    if header is None:
        raise SessionError(f"'{param}.image_url' must be a base64 data URL of a PNG, JPEG, WebP or GIF image "
                            "(data:image/png;base64,...); voxcall does not fetch http(s) URLs",
                            code="invalid_value", param=f"{param}.image_url")
    try:
        binascii.a2b_base64(url[header.end():], strict_mode=True)
    except binascii.Error:
        raise SessionError(f"'{param}.image_url' is not valid base64 after its 'base64,'", code="invalid_value",
                            param=f"{param}.image_url") from None
    return {"type": "input_image", "image_url": url, "detail": part.detail or "auto"}  # the SDK checked detail
