"""``PromptBuilder``: a request's prompt for a local model, rendered and fitted to its context.

The prompt text is rendered here, by the model's chat template, so that the system prompt, the tools and the
demonstrations form a stable prefix: an engine keeps the evaluated tokens, and a new turn evaluates only what
follows the longest prefix it shares with the last prompt.

Tools take the ``<code>`` path (:mod:`voxcall.tools.codecalls`): the tools' stubs go into the system prompt,
demonstrations generated from the schemas (:mod:`voxcall.llm.local.demos`) open the conversation, and earlier
calls and results are shown as :func:`~voxcall.llm.code_format.code_items` shows them. A model whose chat template
declares a tool format of its own renders the tools and the earlier calls and results itself
(:func:`~voxcall.llm.local.chat_template.template_turns`), without demonstrations.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from voxcall.llm.base import ChatItem, LLMError, LLMRequest, Message
from voxcall.llm.code_format import code_items
from voxcall.llm.local.chat_template import template_turns
from voxcall.llm.local.context_fit import first_kept, split_turns
from voxcall.llm.local.demos import demo_messages
from voxcall.llm.local.vocabulary import Vocabulary
from voxcall.tools.codecalls import render_tools_prompt
from voxcall.tools.codecalls.formats import ToolFormat
from voxcall.tools.schema import Tool

Turn = Message | dict[str, Any]
"""A message of the prompt: voxcall's, or a turn as a tool format's template reads it (:func:`template_turns`)."""


@dataclass(frozen=True, slots=True)
class Fitted:
    """A request's prompt fitted to the context: the messages the model reads, the prompt's tokens (a reply
    opened, the prefill included), and what was left out to fit."""

    messages: list[Turn]
    tokens: list[int]
    dropped_turns: int  # the oldest turns left out
    turns: int  # the conversation's turns
    dropped_demos: bool = False


class PromptBuilder:
    """Renders and fits prompts for ``vocabulary``'s model, in ``n_ctx`` tokens of context: with ``tool_format``
    (the model's own; None: ``<code>``
    calls), ``demos`` (the schema-generated demonstrations, ``follow_up_demo`` ending them with a relayed result)
    and room for ``max_output_tokens`` of reply when a request sets no limit."""

    def __init__(self, vocabulary: Vocabulary, n_ctx: int, tool_format: ToolFormat | None, *, demos: bool,
                 follow_up_demo: bool, max_output_tokens: int) -> None:
        self.vocabulary = vocabulary
        self.n_ctx = n_ctx
        self.tool_format = tool_format
        self.demos = demos
        self.follow_up_demo = follow_up_demo
        self.max_output_tokens = max_output_tokens

    def fit(self, request: LLMRequest, offered: list[Tool], prefill: str) -> Fitted:
        """The prompt for ``request`` (its reply opened with ``prefill``), fitted to the model's context with room
        left for the reply (its ``max_output_tokens``, at most half the context): the oldest turns are left out
        first (:mod:`voxcall.llm.local.context_fit`), then, when the latest turn alone is too long, the
        demonstrations (and the earlier turns that then fit stay). The instructions and the tools' prompt are never
        cut: when they and the latest turn leave no room for even one token of reply, this raises ``LLMError``
        (``context_length_exceeded``); with less room than asked, the reply is shorter."""
        system, demos = self._head(request, offered)
        turns = [self._turn_messages(turn, request) for turn in split_turns(request.items)]
        sizes = [sum(self._message_tokens(message) for message in turn) for turn in turns]
        n_ctx = self.n_ctx
        limit = n_ctx - min(request.max_output_tokens or self.max_output_tokens, n_ctx // 2)
        fitted = self._fit_turns([*system, *demos], turns, sizes, limit, prefill, offered)
        if len(fitted.tokens) > limit and demos:
            fitted = replace(self._fit_turns(system, turns, sizes, limit, prefill, offered), dropped_demos=True)
        if len(fitted.tokens) >= n_ctx:
            raise LLMError(f"the instructions, the tools and the latest turn take {len(fitted.tokens)} tokens, "
                           f"more than the model's context ({n_ctx} tokens)", code="context_length_exceeded")
        return fitted

    def prefix(self, request: LLMRequest, offered: list[Tool], prefill: str) -> list[int]:
        """The tokens every prompt continuing ``request``'s conversation begins with: its messages, fitted as
        :meth:`fit` fits them, without the opening of a reply. Raises ``LLMError`` as :meth:`fit` does."""
        fitted = self.fit(request, offered, prefill)
        text = self.render(fitted.messages, add_generation_prompt=False, offered=offered)
        return self.vocabulary.tokenize(text, prompt_start=True)

    def render(self, messages: list[Turn], *, add_generation_prompt: bool, offered: list[Tool] | None = None) -> str:
        """The prompt text of ``messages`` (with ``offered`` tools for a template of a tool format); raises
        ``LLMError`` when the chat template rejects them."""
        tools = [t.to_chat() for t in offered] if offered and self.tool_format else None
        try:
            return self.vocabulary.template.render(messages, add_generation_prompt=add_generation_prompt,
                                                   tools=tools)
        except ValueError as exc:
            raise LLMError(str(exc), code="invalid_request") from exc

    def _fit_turns(self, head: list[Turn], turns: list[list[Turn]], sizes: list[int], limit: int,
                   prefill: str, offered: list[Tool]) -> Fitted:
        """``head`` and as many of the latest ``turns`` (of about ``sizes`` tokens) as keep the prompt within
        ``limit`` tokens, chosen by :func:`~voxcall.llm.local.context_fit.first_kept`; the latest turn always stays.

        The sizes leave out what the template adds once per prompt (a BOS token, a default system prompt, the
        reply's opening, a tool format's tool list): measured on the head with the latest turn, it is set apart
        from the turns' budget. The sizes being estimates, the exact prompt is checked, and should it still be too
        long, one more turn goes. Only what may go into the prompt is tokenized here, never the whole of a long
        conversation: the sizes are remembered per message
        (:meth:`~voxcall.llm.local.vocabulary.Vocabulary.message_tokens`).
        """
        if not turns:
            return Fitted(head, self._tokens(head, prefill, offered), 0, 0)
        alone = [*head, *turns[-1]]
        alone_tokens = self._tokens(alone, prefill, offered)
        start = first_kept(sizes, limit - (len(alone_tokens) - sizes[-1]))
        while start < len(turns) - 1:
            messages = [*head, *(message for turn in turns[start:] for message in turn)]
            tokens = self._tokens(messages, prefill, offered)
            if len(tokens) <= limit:
                return Fitted(messages, tokens, start, len(turns))
            start += 1
        return Fitted(alone, alone_tokens, start, len(turns))

    def _tokens(self, messages: list[Turn], prefill: str, offered: list[Tool]) -> list[int]:
        """The prompt's tokens: ``messages`` rendered with a reply opened, then ``prefill``."""
        text = self.render(messages, add_generation_prompt=True, offered=offered)
        return self.vocabulary.tokenize(text, prompt_start=True) + self.vocabulary.tokenize(prefill)

    def _head(self, request: LLMRequest, offered: list[Tool]) -> tuple[list[Turn], list[Turn]]:
        """What the model reads before the conversation: the system prompt (instructions and the stubs of the
        ``offered`` tools; with a format of its own, the instructions alone: its template renders the tools),
        and the demonstrations (none with a format of its own)."""
        if self.tool_format is not None:
            instructions = request.instructions.strip()
            return [Message(role="system", text=instructions)] if instructions else [], []
        tools_prompt = render_tools_prompt(offered, voice=request.voice, tool_choice=request.tool_choice)
        system = "\n\n".join(part for part in (request.instructions.strip(), tools_prompt) if part)
        demos = (demo_messages(offered, with_plain=not must_call(request, offered),
                               with_follow_up=self.follow_up_demo) if offered and self.demos else [])
        return [Message(role="system", text=system)] if system else [], list(demos)

    def _turn_messages(self, turn: list[ChatItem], request: LLMRequest) -> list[Turn]:
        """One turn of the conversation as the model reads it: calls and results as ``<code>`` text, or, with a
        format of its own, as its template reads them."""
        if self.tool_format is not None:
            return list(template_turns(turn))
        return [item for item in code_items(turn, request.tools) if isinstance(item, Message)]

    def _message_tokens(self, message: Turn) -> int:
        """About how many tokens ``message`` takes in the prompt (a template's own turn: its JSON's tokens)."""
        if isinstance(message, Message):
            return self.vocabulary.message_tokens(message)
        return len(self.vocabulary.tokenize(json.dumps(message, ensure_ascii=False)))


def must_call(request: LLMRequest, offered: list[Tool]) -> bool:
    """Whether the reply must be calls (``tool_choice`` ``"required"`` or a named tool): it is then opened with
    the format's opener."""
    return bool(offered) and request.tool_choice != "auto"
