"""A device's tools as its session's tools: offered to the model beside the agent's server tools, run through the
session's tool ledger like them.

Each tool gets a function name the model APIs accept (``^[a-zA-Z0-9_-]{1,64}$``): ``self.audio_speaker.set_volume``
becomes ``self_audio_speaker_set_volume``; a name another tool of the session has already gets ``_2`` (``_3`` …); a
longer one is cut, with a short hash of the device's name. Descriptions that name another device tool get its
function name too. The name the model calls is mapped back to the device's when the call is made.

The tools join the session's own toolbox (:meth:`~voxcall.core.tools.toolbox.Toolbox.joined` the agent's server tools,
made when the session opened), so a call is what any server tool call is: arguments checked against the device's
schema, a deadline (``xiaozhi.tool_timeout``, else ``tools.timeout``; ``tools.timeouts`` may name a device tool by
either name), the acknowledgement when it is slow and the result spoken when it lands, and a result kept at a
barge-in: a device tool is taken to change something, so it is never cut off half done. Its call items are labelled
:data:`DEVICE_LABEL`.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import Any

from jsonschema import exceptions as js_exceptions
from jsonschema import validators

from voxcall.core.tools.toolbox import ServerTool, Toolbox
from voxcall.tools import Tool
from voxcall.tools.effects import ToolEffects
from voxcall.xiaozhi.device_mcp import DeviceTool

log = logging.getLogger(__name__)

DEVICE_LABEL = "device"
"""The ``server_label`` of a device tool's calls."""

MAX_NAME = 64
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")

CallDevice = Callable[[str, Mapping[str, Any]], Awaitable[str]]
"""Calls a tool by its name on the device, with its arguments; the result's text."""


def function_name(device_name: str, taken: Collection[str]) -> str:
    """The name the model calls ``device_name`` by: a valid function name not in ``taken``."""
    base = _UNSAFE.sub("_", device_name) or "tool"
    if len(base) > MAX_NAME - 4:  # room for a suffix
        base = f"{base[:MAX_NAME - 13]}_{hashlib.sha256(device_name.encode()).hexdigest()[:8]}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def offer(box: Toolbox, tools: list[DeviceTool], call: CallDevice, *, timeout: float,
          timeouts: Mapping[str, float], hidden: Collection[str]) -> dict[str, str]:
    """Register the device's ``tools`` in ``box`` (the session's own toolbox), each run with ``call``; those in
    ``hidden`` and those whose schema is no JSON Schema object are left out (logged). The function names given,
    each with the device's name."""
    names: dict[str, str] = {}  # device name -> function name
    usable = []
    for tool in tools:
        if tool.name in hidden or tool.name in names:
            continue
        problem = _schema_problem(tool.parameters)
        if problem is not None:
            log.warning("device tool %s left out: its inputSchema %s", tool.name, problem)
            continue
        names[tool.name] = function_name(tool.name, {known.name for known in box.tools} | set(names.values()))
        usable.append(tool)
    for tool in usable:
        name = names[tool.name]
        seconds = timeouts.get(tool.name, timeouts.get(name, timeout))
        box.registry.add(Tool(name, _renamed(tool.description, names), tool.parameters), _runner(call, tool.name),
                         timeout=seconds, effects=ToolEffects(changes=True))
        box.details[name] = ServerTool(DEVICE_LABEL, tool.name)
    return {name: device for device, name in names.items()}


def _runner(call: CallDevice, device_name: str) -> Callable[..., Awaitable[str]]:
    async def run_device_tool(**arguments: Any) -> str:
        return await call(device_name, arguments)

    return run_device_tool


def _renamed(description: str, names: Mapping[str, str]) -> str:
    """``description`` with each device tool it names called by its function name (longest names first, so that
    ``self.light.set`` does not eat into ``self.light.set_rgb``)."""
    for device in sorted(names, key=len, reverse=True):
        if device != names[device]:
            description = re.sub(rf"(?<![\w.]){re.escape(device)}(?![\w])", names[device], description)
    return description


def _schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` cannot be a tool's parameters (None: it can)."""
    if schema.get("type", "object") != "object":
        return "is not of type object"
    try:
        validators.validator_for(schema).check_schema(schema)
    except js_exceptions.SchemaError as exc:
        return f"is no valid JSON Schema ({exc.message})"
    except (TypeError, AttributeError, KeyError, ValueError, RecursionError) as exc:
        return f"could not be checked ({type(exc).__name__})"
    return None
