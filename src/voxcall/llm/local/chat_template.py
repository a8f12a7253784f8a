"""A model's chat template, rendered to prompt text with Jinja2: the local backend needs the exact text it feeds
the model, to reuse an evaluated prefix across turns and to open the reply itself (a prefilled ``<code>``).

GGUF files carry their template as ``tokenizer.chat_template`` metadata (the Hugging Face Jinja2 format); a model
without one is given ChatML, which most small instruction-tuned models were trained on. A template that declares a
tool format is given the tools and the conversation's calls and results as Hugging Face's ``apply_chat_template``
and llama-cpp-python's ``Jinja2ChatFormatter`` give them (:func:`template_turns`, ``tools=`` in Chat Completions
form), so the model reads them as it was trained to.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from voxcall.llm.base import ChatItem, FunctionCallItem, FunctionOutputItem, Message
from voxcall.llm.code_format import stored_arguments
from voxcall.llm.history import pair_calls_with_outputs

CHATML = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
"""The fallback template (ChatML)."""


def _raise(message: str) -> NoReturn:
    """``raise_exception`` for templates that reject a conversation (for example a misplaced system role)."""
    raise jinja2.TemplateError(message)


class ChatTemplate:
    """Renders a conversation the way the model was trained to read it. Templates run sandboxed: they come from
    model files, which anyone may publish."""

    def __init__(self, source: str | None = None, *, bos_token: str = "", eos_token: str = "") -> None:
        environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                    undefined=jinja2.ChainableUndefined)
        environment.filters["tojson"] = _tojson
        self.source = source or CHATML
        self._template = environment.from_string(self.source)
        self._context: dict[str, Any] = {"bos_token": bos_token, "eos_token": eos_token,
                                          "raise_exception": _raise, "strftime_now": _strftime_now}

    def render(self, messages: Sequence[Message | Mapping[str, Any]], *, add_generation_prompt: bool = True,
               tools: Sequence[Mapping[str, Any]] | None = None) -> str:
        """The prompt text for ``messages`` (plain messages, or turns as :func:`template_turns` makes them), ending
        with the opening of an assistant turn when asked; ``tools`` in Chat Completions form, for a template that
        renders them.

        Raises ``ValueError`` when the template rejects the conversation.
        """
        turns = [{"role": m.role, "content": m.text} if isinstance(m, Message) else dict(m) for m in messages]
        try:
            return self._template.render(messages=turns, add_generation_prompt=add_generation_prompt,
                                         tools=list(tools) if tools else None, **self._context)
        except jinja2.TemplateError as exc:
            raise ValueError(f"the model's chat template rejected the conversation: {exc}") from exc


def _tojson(value: Any, indent: int | None = None, **_: Any) -> str:
    """JSON as Hugging Face's templates get it: keys in their order, text unescaped (Jinja2's own sorts keys and
    escapes HTML)."""
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _strftime_now(format: str) -> str:
    """Today's date for templates that print it (Llama 3.x), as ``Jinja2ChatFormatter`` provides."""
    return datetime.datetime.now().strftime(format)


def template_turns(items: list[ChatItem]) -> list[dict[str, Any]]:
    """The conversation as a tool-aware template reads it: calls as an assistant turn's ``tool_calls`` (arguments
    as an object; consecutive calls in one turn), each output as a ``tool`` turn naming its call. Call ids are
    shortened to nine letters and digits, which Mistral's templates require and the others accept."""
    turns: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for item in pair_calls_with_outputs(items):
        if isinstance(item, FunctionCallItem):
            names[item.call_id] = item.name
            call = {"id": _short_id(item.call_id), "type": "function",
                    "function": {"name": item.name, "arguments": stored_arguments(item.arguments)}}
            last = turns[-1] if turns else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                turns.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif isinstance(item, FunctionOutputItem):
            turns.append({"role": "tool", "tool_call_id": _short_id(item.call_id), "name": names[item.call_id],
                          "content": item.output})
        else:
            turns.append({"role": item.role, "content": item.text})
    return turns


def _short_id(call_id: str) -> str:
    return hashlib.sha256(call_id.encode()).hexdigest()[:9]

