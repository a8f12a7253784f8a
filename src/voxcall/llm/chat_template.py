"""A model's chat template, rendered to prompt text with Jinja2: the local backend needs the exact text it feeds
the model, to reuse an evaluated prefix across turns and to open the reply itself (a prefilled ``<code>``).

GGUF files carry their template as ``tokenizer.chat_template`` metadata (the Hugging Face Jinja2 format); a model
without one is given ChatML, which most small instruction-tuned models were trained on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from voxcall.llm.base import Message

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
        self._template = environment.from_string(source or CHATML)
        self._context: dict[str, Any] = {"bos_token": bos_token, "eos_token": eos_token,
                                          "raise_exception": _raise}

    def render(self, messages: Sequence[Message], *, add_generation_prompt: bool = True) -> str:
        """The prompt text for ``messages``, ending with the opening of an assistant turn when asked.

        Raises ``ValueError`` when the template rejects the conversation.
        """
        turns = [{"role": m.role, "content": m.text} for m in messages]
        try:
            return self._template.render(messages=turns, add_generation_prompt=add_generation_prompt,
                                         **self._context)
        except jinja2.TemplateError as exc:
            raise ValueError(f"the model's chat template rejected the conversation: {exc}") from exc
