"""Making a conversation valid for a provider: every tool call answered, every output placed after its call, each
call under an id the provider accepts.

Providers reject a ``function_call`` with no output and an output with no call, and Chat Completions wants the
outputs right after the assistant message holding the calls. Interruptions leave exactly those shapes behind,
so each backend passes its items through :func:`pair_calls_with_outputs` first.

Call ids: Chat Completions and Responses (stateless, ``store=False``) require only that within one request each
call's id is distinct and its output names it; neither checks that it issued the id. Some servers do constrain
the form of an id (vLLM with Mistral models wants its own nine alphanumeric characters), so a native backend
sends back the provider's own ids when they are distinct within the request, and voxcall's (unique) ids for
every call when they are not (a server that numbers calls per reply says ``call_0`` each time):
:func:`provider_items`.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from voxcall.llm.base import ChatItem, FunctionCallItem, FunctionOutputItem

log = logging.getLogger(__name__)


def pair_calls_with_outputs(items: list[ChatItem]) -> list[ChatItem]:
    """Return ``items`` with dangling calls and orphan outputs dropped, and outputs moved after their calls.

    A run of consecutive calls is followed by the outputs of those calls, in call order; other items keep
    their order. For a repeated ``call_id`` only the first call and the first output count.
    """
    outputs: dict[str, FunctionOutputItem] = {}
    for item in items:
        if isinstance(item, FunctionOutputItem):
            outputs.setdefault(item.call_id, item)
    result: list[ChatItem] = []
    run_outputs: list[FunctionOutputItem] = []
    seen_calls: set[str] = set()
    for item in items:
        if isinstance(item, FunctionCallItem):
            if item.call_id in outputs and item.call_id not in seen_calls:
                seen_calls.add(item.call_id)
                result.append(item)
                run_outputs.append(outputs[item.call_id])
            else:
                log.info("request leaves out call %s (%s): no output yet (interrupted or pending), or a repeated id",
                         item.call_id, item.name)
            continue
        result.extend(run_outputs)
        run_outputs = []
        if not isinstance(item, FunctionOutputItem):  # outputs were placed after their calls
            result.append(item)
    result.extend(run_outputs)
    return result


def provider_items(items: list[ChatItem]) -> list[ChatItem]:
    """``items`` as a native provider is sent them: paired (:func:`pair_calls_with_outputs`), each call and its
    output under the provider's id for the call when the provider's ids are distinct within the request (calls
    without one keep voxcall's), otherwise all under voxcall's ids."""
    paired = pair_calls_with_outputs(items)
    calls = [item for item in paired if isinstance(item, FunctionCallItem)]
    theirs = [call.provider_call_id or call.call_id for call in calls]
    if len(set(theirs)) < len(theirs):
        return paired
    sent = {call.call_id: their for call, their in zip(calls, theirs, strict=True)}
    return [replace(item, call_id=sent[item.call_id]) if isinstance(item, FunctionCallItem | FunctionOutputItem)
            else item for item in paired]
