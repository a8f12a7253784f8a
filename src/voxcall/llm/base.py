"""What every LLM backend shares: the events it streams, the request it takes and the protocol it follows.

A backend turns an :class:`LLMRequest` into an async stream of :data:`LLMEvent`. Whatever the path (native
tool calls from a cloud API, ``<code>`` blocks from a local model, a script), the stream has one shape:

- :class:`TextDelta` for text that may be shown and spoken;
- per tool call, :class:`ToolCallStart`, zero or more :class:`ToolCallArgumentsDelta` with the same
  ``call_id``, then the parsed :class:`ToolCall` (or a :class:`RejectedCall` when the request's tools do not
  accept it: an undeclared name, which is never announced, or unusable arguments);
- exactly one :class:`Usage`, then exactly one :class:`Done`, last.

Call ids are voxcall's own: every call a backend yields gets a fresh one
(:func:`~voxcall.tools.calls.new_call_id`), whatever the provider sent (providers that number calls per reply
send ``call_0`` in every reply; some send none). The provider's id travels alongside as ``provider_call_id``,
and a backend sends it back in later requests where that keeps each request's ids distinct
(:func:`~voxcall.llm.history.provider_items`).

A failure is raised as :class:`LLMError`, whose message is safe to show a client.

A backend may also be :class:`Warmable`: told a request ahead of time, it prepares what every continuation of
that conversation shares, so that the real request, when it comes, costs only what is new. Callers go through
:func:`warm`, which does nothing for a backend without the capability:

- the warm request is the real one as it stands before the new user words: the same instructions, tools,
  ``tool_choice`` and ``voice``, and the items so far (possibly none);
- a warm is advice, never a failure: it returns ``None`` once prepared, or once stopped early; a request it
  cannot prepare is left for the real request to report;
- it yields to real work: a :meth:`LLMBackend.stream` that arrives while it runs stops it, and cancelling the
  awaiting task stops it too.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from voxcall.tools.calls import ToolCall
from voxcall.tools.codecalls.events import RejectedCall, TextDelta
from voxcall.tools.codecalls.prompt import ToolChoice, forced_tool_name
from voxcall.tools.schema import Tool


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """The model began a call of ``name``; its arguments follow as :class:`ToolCallArgumentsDelta`.

    ``provider_call_id`` is the id the provider gave the call ("" when it gave none, or the path has no provider).
    """

    call_id: str
    name: str
    provider_call_id: str = ""


@dataclass(frozen=True, slots=True)
class ToolCallArgumentsDelta:
    """A fragment of a started call's arguments JSON, forwarded so a client can watch the call being written.

    The fragments of one call, joined, are its arguments JSON as the model wrote it.
    """

    call_id: str
    delta: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts for one request; all zero when the provider reported none (llama.cpp's server doesn't)."""

    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Done:
    """The stream ended normally; ``finish_reason`` is ``"stop"``, ``"length"``, ``"tool_calls"`` or such."""

    finish_reason: str


LLMEvent = TextDelta | ToolCallStart | ToolCallArgumentsDelta | ToolCall | RejectedCall | Usage | Done


def answers(event: LLMEvent) -> bool:
    """Whether ``event`` is part of an answer the user gets: words (not a filler said while waiting), a call, or a
    botched call the response will have the model write again (``repairable``). A reply with none is silence."""
    if isinstance(event, TextDelta):
        return not event.filler and bool(event.text.strip())
    return isinstance(event, ToolCall) or (isinstance(event, RejectedCall) and event.repairable)


Media = Literal["image", "audio"]
"""Inputs besides text that a backend may take (see :func:`media_of`)."""


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image in a user message: a ``data:image/...;base64,...`` URL, and the detail the model should see it at."""

    url: str
    detail: Literal["auto", "low", "high"] = "auto"


@dataclass(frozen=True, slots=True)
class AudioPart:
    """The user's speech itself, for a model that hears it: a WAV file, base64-encoded."""

    wav_base64: str


@dataclass(frozen=True, slots=True)
class Message:
    """A message of the conversation: its text, then any images or audio it carries (user messages only, and only
    for a backend that takes them: :func:`media_of`)."""

    role: Literal["system", "user", "assistant"]
    text: str
    media: tuple[ImagePart | AudioPart, ...] = ()


@dataclass(frozen=True, slots=True)
class FunctionCallItem:
    """A tool call the assistant made earlier; ``arguments`` is its JSON text, ``provider_call_id`` the id the
    provider gave it ("" for a call a client created, or one from a path without provider ids)."""

    call_id: str
    name: str
    arguments: str
    provider_call_id: str = ""


@dataclass(frozen=True, slots=True)
class FunctionOutputItem:
    """The output given back for the call ``call_id``."""

    call_id: str
    output: str


ChatItem = Message | FunctionCallItem | FunctionOutputItem

_TOOL_CHOICE_MODES = ("auto", "none", "required")


def normalize_tool_choice(tool_choice: ToolChoice) -> str | dict[str, Any]:
    """``tool_choice`` in canonical form: a mode string, or ``{"type": "function", "name": NAME}`` (the nested
    Chat Completions form is accepted too). Raises ``ValueError`` for anything else."""
    name = forced_tool_name(tool_choice)
    if name is not None:
        return {"type": "function", "name": name}
    if isinstance(tool_choice, str) and tool_choice in _TOOL_CHOICE_MODES:
        return tool_choice
    raise ValueError(f"tool_choice must be one of {', '.join(_TOOL_CHOICE_MODES)} or "
                     '{"type": "function", "name": NAME}')


@dataclass
class LLMRequest:
    """One generation: the conversation so far, the system instructions and the tools the model may call."""

    items: list[ChatItem]
    instructions: str = ""
    tools: list[Tool] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    """``"auto"``, ``"none"``, ``"required"`` or ``{"type": "function", "name": NAME}``."""
    max_output_tokens: int | None = None
    temperature: float | None = None
    voice: bool = False
    parallel_tool_calls: bool = True
    """Whether the model may make several tool calls in one reply; False: at most one."""
    heard_at: float | None = None
    """When the user's words this answers were spoken, the end of their speech (``time.monotonic()``); None for a
    request no speech ended (a typed message, a ``response.create``). A voice's waits are the user's from there."""

    def __post_init__(self) -> None:
        self.tool_choice = normalize_tool_choice(self.tool_choice)  # fail here, where the caller can fix it

    @property
    def last_user_text(self) -> str:
        """The words of the conversation's last user message ("" when there is none)."""
        return next((item.text for item in reversed(self.items)
                     if isinstance(item, Message) and item.role == "user"), "")


class LLMError(Exception):
    """A backend failure, with a message safe to show a client (no secrets, no provider internals).

    ``code`` is a short machine-readable reason (``"unavailable"``, ``"auth"``, ``"timeout"`` …);
    ``status`` the HTTP status when the provider answered with one.
    """

    def __init__(self, message: str, *, code: str = "backend_error", status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status


class LLMBackend(Protocol):
    """A source of model replies. ``stream`` is an async generator; ``aclose()`` on it aborts the provider."""

    name: str

    def stream(self, request: LLMRequest) -> AsyncGenerator[LLMEvent, None]:
        """Generate a reply to ``request`` as events, ending with :class:`Usage` and :class:`Done`."""
        ...

    async def aclose(self) -> None:
        """Release the backend's connections; the backend is not used afterwards."""
        ...


@runtime_checkable
class Warmable(Protocol):
    """A backend that can prepare a request before it is asked for it (see :func:`warm`)."""

    async def warm(self, request: LLMRequest) -> None:
        """Prepare what every continuation of ``request``'s conversation shares; return when it is ready, or
        as soon as real work needs the backend."""
        ...


def computes_here(backend: LLMBackend) -> bool:
    """Whether ``backend`` computes on this machine's CPU, beside the speech models (its ``computes_here``
    attribute; False when it has none: a server elsewhere). Speech work that can wait (live partial transcripts)
    then waits while it prepares a prompt: on two cores the two would slow each other, and the answer waits for the
    prompt."""
    return bool(getattr(backend, "computes_here", False))


def media_of(backend: LLMBackend) -> frozenset[Media]:
    """What ``backend`` takes besides text: its ``media`` attribute; a backend without one takes text only."""
    media: frozenset[Media] = getattr(backend, "media", frozenset())
    return media


def model_of(backend: LLMBackend) -> str:
    """The model ``backend`` asks (its ``model`` attribute: an OpenAI kind's model name), else the backend's kind:
    what a trace names the model of a request."""
    model: str | None = getattr(backend, "model", None)
    return model or backend.name


def check_media(kind: str, wanted: frozenset[Media], able: frozenset[Media]) -> frozenset[Media]:
    """``wanted`` when the backend ``kind`` can take all of it (``able``); otherwise a ``ValueError`` naming what
    it cannot take."""
    missing = sorted(wanted - able)
    if missing:
        takes = f"takes {' and '.join(sorted(able))} besides text" if able else "takes text only"
        raise ValueError(f"the {kind} backend {takes}; it cannot be given {' or '.join(missing)} (asked for by the "
                         "settings model_inputs, or session.audio_input: direct)")
    return wanted


async def warm(backend: LLMBackend, request: LLMRequest) -> None:
    """Let ``backend`` prepare ``request`` ahead of time when it can (:class:`Warmable`); otherwise do nothing."""
    if isinstance(backend, Warmable):
        await backend.warm(request)


async def warm_shared(backend: LLMBackend, request: LLMRequest) -> None:
    """Let ``backend`` prepare what every request with ``request``'s settings shares whatever tools a session
    declares, when it can (a ``warm_shared`` method: the local models); otherwise do nothing. A server does it
    once at start."""
    method: Callable[[LLMRequest], Awaitable[None]] | None = getattr(backend, "warm_shared", None)
    if method is not None:
        await method(request)
