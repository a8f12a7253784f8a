"""Making a conversation valid for a provider: every tool call answered, every output placed after its call.

Providers reject a ``function_call`` with no output and an output with no call, and Chat Completions wants the
outputs right after the assistant message holding the calls. Interruptions leave exactly those shapes behind,
so each backend passes its items through :func:`pair_calls_with_outputs` first.
"""

from __future__ import annotations

import logging

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
