"""``Planner``: what a local reply will be, decided on the event loop before any engine runs.

A :class:`Plan` holds the prompt (:class:`~voxcall.llm.local.prompt.PromptBuilder`), the grammars, the call
threshold and what the reply may say; :func:`~voxcall.llm.local.driver.reply_steps` follows it, whichever engine
runs the model. A call is always written under a grammar (:mod:`voxcall.llm.local.grammar`), so it is a
well-formed call to a declared tool:

- ``tool_choice`` ``"required"`` or a named tool: the reply is opened with ``<code>`` and must be calls;
- ``"auto"``: the first token decides, against ``call_threshold`` (plain sampling weighs the call opener against each
  word alone, so a tiny model calls tools on small talk: 29 % of requests needing no tool in
  ``benchmarks/bench_local_tools.py``, against 4 % with the threshold); a request that plainly names a tool and holds
  its values is a call to it (:meth:`Planner._evident_tools`), unless a model whose probabilities weigh gives a call all
  but no chance ("What instrument did Mozart play?": :data:`EVIDENT_CALL_FLOOR`), and words that ask nothing need the
  model sure of a call (:mod:`~voxcall.llm.local.statements`); a tool whose values the words do not hold cannot be
  called (:meth:`~voxcall.llm.local.said.Said.holds`), and a request whose likeliest tool is one of those ("What's the
  weather?" holds no city, "Set a timer." no minutes), where it would open a call, asks for what it left out ("Could you
  tell me the city?": :meth:`Planner._callable`) in words not generated: the 0.5B model answered "The weather is sunny."
  or wrote the call as text, with no call allowed;
- ``"none"``: no tools in the prompt, no grammar.

A model whose chat template declares a tool format of its own (:func:`~voxcall.tools.codecalls.formats.detect_format`:
Hermes ``<tool_call>``, Llama 3 JSON, Mistral ``[TOOL_CALLS]``, FunctionGemma) takes that format: its opener takes
``<code>``'s place in the decision and the prefill, :func:`~voxcall.llm.local.grammar.format_grammar` constrains the
calls, and :class:`~voxcall.tools.codecalls.format_stream.FormatCallStream` reads them (SmolLM2 declares none).

Right after tool results the reply is the results in words (:mod:`voxcall.llm.local.relay`), not generated; so is the
answer to arithmetic the user asks for when no tool is evident for it (:mod:`voxcall.llm.local.arithmetic`). With more
than ``max_prompt_tools`` tools, only the most relevant to the user's last words are shown
(:mod:`voxcall.llm.local.relevance`).
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace

from voxcall.config import LocalModelSettings
from voxcall.language import asking, language_of
from voxcall.llm.base import FunctionOutputItem, LLMError, LLMRequest, Message
from voxcall.llm.local.arithmetic import computed
from voxcall.llm.local.driver import Mask
from voxcall.llm.local.grammar import calls_grammar, format_grammar
from voxcall.llm.local.lift import Lift, UnaskedPrompts
from voxcall.llm.local.lookup import looked_up
from voxcall.llm.local.meanings import word_for
from voxcall.llm.local.optional import CLOSE, COMMA, OPTIONAL_SHARE, OptionalChoice
from voxcall.llm.local.places import asks_of_place
from voxcall.llm.local.prompt import PromptBuilder, must_call
from voxcall.llm.local.relay import relayed_reply
from voxcall.llm.local.relevance import most_relevant, readable, relevance, unrivalled, words
from voxcall.llm.local.said import Said
from voxcall.llm.local.statements import states
from voxcall.llm.local.vocabulary import Vocabulary
from voxcall.tools.codecalls import CodeCallStream
from voxcall.tools.codecalls.format_stream import FormatCallStream
from voxcall.tools.codecalls.formats import GEMMA_ESCAPE, ToolFormat, detect_format
from voxcall.tools.codecalls.prompt import forced_tool_name
from voxcall.tools.codecalls.stream import OPEN_TAG
from voxcall.tools.schema import Tool

log = logging.getLogger(__name__)

SPOKEN_NAME_WORDS = 4
"""The most words a parameter's description may have to name it in a question ("The first number.")."""
EVIDENT_CALL_THRESHOLD = 0.0  # "auto": the threshold when the request names a tool and holds its values (a call)
EVIDENT_CALL_FLOOR = 0.005
"""``"auto"``: the threshold of an evident request for a model whose probabilities weigh: a call unless the model
gives opening one all but no chance. The 0.5B thinker on the everyday development set's evident requests: at least
0.038 where it should call (a place named calls: :func:`~voxcall.llm.local.places.asks_of_place`), at most 0.00086
for questions it should not ("What does a light year measure?" 0.00013; none for "What instrument did Mozart
play?"); statements it calls for at 0.81 no floor parts (:data:`UNRELATED_CALL_THRESHOLD` is theirs)."""
UNRELATED_CALL_THRESHOLD = 0.9
"""``"auto"``: the least threshold when the user's words share no content word with any tool shown (see
:meth:`Planner._unrelated`), or ask nothing (a statement: :mod:`~voxcall.llm.local.statements`)."""
STAND_INS = (Tool("define_word", "Define a word.", {"type": "object", "properties": {"word": {"type": "string"}}}),
             Tool("play_song", "Play a song.", {"type": "object", "properties": {"title": {"type": "string"}}}))
"""Two unrelated tools: where their tools prompts part is where every session's tools begin."""
SHOWN_MEMORY = 64  # tool sets whose last shown choice is remembered (a choice kept keeps the prompt warm)
LOCAL_DEFAULTS = LocalModelSettings()  # the ``local:`` settings' defaults, which the local path's defaults are


@dataclass(frozen=True, slots=True)
class ReplyOptions:
    """How local replies are planned. ``temperature`` applies when a request sets none (0: greedy, the most
    reliable for tool calls); ``max_output_tokens`` when it sets no limit. ``call_threshold`` is the probability
    of opening a call that makes an ``"auto"`` reply a call (None: plain sampling decides). ``demos`` and
    ``grammar`` switch off the demonstrations and the constrained decoding, for comparison: these three are what
    make a tiny model a usable tool caller. ``follow_up_demo`` ends the demonstrations with a relayed tool result
    (SmolLM2-135M then relays results instead of answering "You're welcome", but makes fewer correct first calls;
    see :func:`~voxcall.llm.local.demos.demo_messages`); ``relay`` answers tool results with the results in words
    instead. ``call_evidence`` makes a request that plainly names a tool a call to it, ``max_prompt_tools`` caps
    the tools shown (the most relevant; None: all), and ``copy_strings`` makes plain string arguments spans of the
    user's last words (see :mod:`voxcall.llm.local.grammar`). ``optional_share`` is the share of the probability
    a comma needs for a call to take an optional argument (:mod:`voxcall.llm.local.optional`; None: sampling
    decides). ``compute`` answers arithmetic the user asks for, when no tool is evident for it, with the result
    worked out (:mod:`voxcall.llm.local.arithmetic`). ``acknowledge_after_ms``: a spoken reply whose prompt the
    engine needs longer than this to read opens with a short phrase, and small talk is answered without the tools
    (see :class:`~voxcall.llm.local.backend.LocalBackend`; None: neither)."""

    temperature: float = 0.0
    max_output_tokens: int = 256
    call_threshold: float | None = LOCAL_DEFAULTS.call_threshold
    demos: bool = True
    follow_up_demo: bool = False
    grammar: bool = True
    call_evidence: bool = True
    relay: bool = True
    compute: bool = True
    copy_strings: bool = LOCAL_DEFAULTS.copy_strings
    write_forms: bool = True
    """With ``copy_strings``, whether a string the tool's description prescribes a form for ("in the format of 'City,
    State'") is written by the model rather than copied (:func:`~voxcall.llm.local.grammar.copied_string`). The server
    takes True for every model but those whose catalog entry says they write placeholders when free
    (:func:`voxcall.llm.local_options`)."""
    evident_threshold: float = EVIDENT_CALL_THRESHOLD
    """The call threshold of a request the words make evident and hold the values of (:meth:`Planner._callable`).
    The server takes :data:`EVIDENT_CALL_FLOOR` for every model but those whose catalog entry says their
    probabilities do not weigh (:func:`voxcall.llm.local_options`)."""
    unrelated_threshold: float | None = None
    """The least call threshold for words unrelated to every tool shown (:meth:`Planner._unrelated`) or stating
    something (None: such words weigh as any others); with ``lift``, the probability at which unrelated words call
    whatever tool they lift. The
    server takes :data:`UNRELATED_CALL_THRESHOLD` for every model but those whose catalog entry says their
    probabilities do not tell (:func:`voxcall.llm.local_options`)."""
    lift: bool = True
    """Whether words unrelated to every tool may call the tool they lift (:mod:`voxcall.llm.local.lift`) with the
    plain threshold, rather than needing ``unrelated_threshold`` (for ``<code>`` calls under the grammar)."""
    jump_forward: bool = LOCAL_DEFAULTS.jump_forward
    """Whether the text a grammar forces (the rest of a tool's name, ``(city=``, ``')</code>``) is given to the
    model as prompt rather than sampled token by token (:mod:`voxcall.llm.local.grammar_cursor`)."""
    optional_share: float | None = OPTIONAL_SHARE
    max_prompt_tools: int | None = LOCAL_DEFAULTS.max_prompt_tools  # more than a small model attends to
    acknowledge_after_ms: int | None = LOCAL_DEFAULTS.acknowledge_after_ms
    own_format: bool = True
    """Calls in the tool format the model's chat template declares, when it declares one (False: ``<code>``
    calls whatever the template says; Qwen2.5-Coder-0.5B calls better so, see :mod:`voxcall.llm.catalog`)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What an engine runs for one request: all decided before the model is touched."""

    prompt: list[int]
    prefill: str  # reply text already in the prompt (an opened call block, a relayed result), shown to the parser first
    complete: bool  # the prefill is the whole reply (a relayed result): nothing is generated
    grammar: str | None  # constrains the reply from its first token (a call is required)
    call_grammar: str | None  # constrains the reply once it opens a call (tool_choice "auto")
    call_threshold: float | None  # with "auto": the probability of opening a call that makes the reply one
    late_calls: bool  # whether a reply that began with words may still open a call (the opener seen in them)
    opener: str  # what opens a call: ``<code>``, or the model's own format's opener
    openers: Mask  # the tokens that begin a call
    banned: Mask | None  # tokens never sampled outside a grammar: in a spoken reply, backticks (the way into fences)
    text_tokens: frozenset[int]  # special tokens that are reply text (a tool format's markers), not its end
    said: str  # the user's last words, which arguments are copied from
    write_forms: bool  # whether a string whose description prescribes a form is the model's to write
    tools: tuple[Tool, ...]  # the tools the calls grammar calls
    optional: OptionalChoice | None  # how a call decides optional arguments (None: sampling decides)
    listed: tuple[Tool, ...]  # the tools a further block may call when the user listed values (none: no such)
    max_tokens: int
    temperature: float
    question: str = ""  # what the reply says instead when it opens a call whose values the words lack
    lift: Lift | None = None  # words unrelated to every tool: which tool they lift, if any, decides the call
    jumps: bool = False  # the text a grammar forces is jumped over (ReplyOptions.jump_forward)


class Planner:
    """Plans the replies of ``vocabulary``'s model, in ``n_ctx`` tokens of context, (see the module's docstring)
    with ``options``."""

    def __init__(self, vocabulary: Vocabulary, n_ctx: int, options: ReplyOptions) -> None:
        self.vocabulary = vocabulary
        self.n_ctx = n_ctx
        self.options = options
        self.tool_format: ToolFormat | None = (detect_format(vocabulary.template.source) if options.own_format
                                               else None)
        """The model's own tool format, or None for ``<code>`` calls."""
        self.prompt = PromptBuilder(vocabulary, n_ctx, self.tool_format, demos=options.demos,
                                    follow_up_demo=options.follow_up_demo,
                                    max_output_tokens=options.max_output_tokens)
        self.opener = self.tool_format.opener if self.tool_format else OPEN_TAG
        self.text_tokens = frozenset(self._format_tokens())
        self.openers = vocabulary.token_mask(lambda text: _opens_call(text, self.opener))
        self.openers[[t for t in self.text_tokens if vocabulary.piece(t, special=True).decode(
            errors="replace") == self.opener]] = True
        self.unspoken = vocabulary.token_mask(lambda text: "`" in text)
        """Tokens never said aloud (backticks), and the way into code fences."""
        self.optional = None if self.tool_format is not None or options.optional_share is None else OptionalChoice(
            vocabulary.token_mask(lambda text: text.startswith(COMMA)),
            vocabulary.token_mask(lambda text: text.startswith(CLOSE)), options.optional_share)
        """How ``<code>`` calls decide optional arguments (a model's own format: its sampling)."""
        self._shown: OrderedDict[tuple[str, ...], set[str]] = OrderedDict()  # offered tools -> the last shown
        self._shown_lock = threading.Lock()  # requests are planned on several threads (LocalBackend)
        self._opener_tokens = vocabulary.tokenize(self.opener)
        self._unasked = UnaskedPrompts(self._unasked_prompt)  # a lift's prompts of content-free words

    def plan(self, request: LLMRequest, offered: list[Tool]) -> Plan:
        """Fit the prompt to the context, and choose the grammars, for ``request`` offering ``offered``."""
        options = self.options
        forced = must_call(request, offered)
        text = self._answered_words(request, offered)
        said = text if options.copy_strings else ""
        callable_tools, evident, question = ([*offered], [], "") if forced else self._callable(request, text, offered)
        relayed = "" if forced else self._relayed(request)
        answer = relayed or ("" if forced or evident else self._computed(request, text))
        prefill = self.opener if forced else answer
        fitted, n_ctx = self.prompt.fit(request, offered, prefill), self.n_ctx
        if fitted.dropped_turns:
            log.info("the conversation outgrew the model's context (%d tokens): its %d oldest of %d turns are "
                     "left out", n_ctx, fitted.dropped_turns, fitted.turns)
        if fitted.dropped_demos:
            log.info("the tool demonstrations are left out: the instructions, tools and latest turn leave no "
                     "room for them in the model's context (%d tokens)", n_ctx)
        prompt = fitted.tokens
        grammar = self._calls_grammar(callable_tools, said) if callable_tools and options.grammar else None
        unrelated = bool(offered) and not evident and self._unrelated(request, text, offered)
        held = bool(callable_tools or question)  # a reply that can call none of the tools offered is words only
        lift = (self._lift(request, offered, callable_tools, prompt)
                if unrelated and held and grammar and options.lift and self.tool_format is None else None)
        floor = (EVIDENT_CALL_THRESHOLD if text != request.last_user_text or looked_up(text, evident)  # answered,
                 or asks_of_place(text, evident) else options.evident_threshold)  # lookup.py, places.py
        threshold = ((floor if callable_tools else EVIDENT_CALL_THRESHOLD) if evident
                     else self._call_threshold(request, unrelated and lift is None))  # a question is always asked
        if text == request.last_user_text and states(text) and threshold is not None and options.unrelated_threshold:
            threshold, lift = max(threshold, options.unrelated_threshold), None  # a statement: the thinker sure
        return Plan(prompt=prompt, prefill=prefill, complete=bool(answer), grammar=grammar if forced else None,
                    call_grammar=None if forced else grammar, question=question, lift=lift, jumps=options.jump_forward,
                    call_threshold=(threshold if held else math.inf) if offered and not forced else None,
                    late_calls=bool(callable_tools) and not unrelated,
                    opener=self.opener, openers=self.openers, banned=self.unspoken if request.voice else None,
                    text_tokens=self.text_tokens, said=said, write_forms=options.write_forms,
                    tools=tuple(callable_tools),
                    optional=self.optional if grammar and _with_optional(callable_tools) else None,
                    listed=tuple(evident or callable_tools) if grammar and request.parallel_tool_calls and said
                    and self.tool_format is None else (),
                    max_tokens=min(n_ctx - len(prompt), request.max_output_tokens or options.max_output_tokens),
                    temperature=options.temperature if request.temperature is None else request.temperature)

    def prefix(self, request: LLMRequest) -> list[int]:
        """The tokens every prompt continuing ``request``'s conversation begins with (what a warm evaluates):
        its messages, fitted as :meth:`plan` fits them, without the opening of a reply. Raises ``LLMError`` as
        :meth:`plan` does."""
        offered = self.shown_tools(request)
        return self.prompt.prefix(request, offered, self.opener if must_call(request, offered) else "")

    def shared_prefix(self, request: LLMRequest) -> list[int]:
        """The tokens a tools prompt for ``request``'s settings begins with whatever tools a session declares (the
        instructions and the rules of calling): where the prompts for two unrelated stand-in tools part."""
        first, second = (self.prefix(replace(request, items=[], tools=[tool])) for tool in STAND_INS)
        shared = next((i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b), len(first))
        return first[:shared]

    def parser(self, offered: list[Tool]) -> CodeCallStream | FormatCallStream:
        """The scanner of a reply: the model's own format's, or ``<code>`` calls'."""
        return FormatCallStream(self.tool_format, offered) if self.tool_format else CodeCallStream(offered)

    def shown_tools(self, request: LLMRequest) -> list[Tool]:
        """The offered tools the prompt shows: with more than ``max_prompt_tools``, the most relevant to the
        user's last words (:func:`~voxcall.llm.local.relevance.most_relevant`), in their declared order; the
        choice made last for the same tools when it still fits, so that the prompt stays warm (also for a warm,
        which knows no words yet)."""
        offered = _offered_tools(request)
        if self.options.max_prompt_tools is None:
            return offered
        key = tuple(tool.name for tool in offered)
        shown = most_relevant(request.last_user_text, offered, self.options.max_prompt_tools,
                              keep=self._shown.get(key, ()))
        with self._shown_lock:
            self._shown[key] = {tool.name for tool in shown}
            self._shown.move_to_end(key)
            while len(self._shown) > SHOWN_MEMORY:
                self._shown.popitem(last=False)
        return shown

    def _relayed(self, request: LLMRequest) -> str:
        """The reply that follows tool results, when ``relay`` is on: the results in words (see
        :mod:`voxcall.llm.local.relay`), not left to the model, which continued a relayed result with "You're
        welcome" or a recomputed (wrong) value; "" when the reply follows no result or ``relay`` is off."""
        outputs: list[str] = []
        for item in reversed(request.items):
            if not isinstance(item, FunctionOutputItem):
                break
            outputs.insert(0, item.output)
        return relayed_reply(outputs) if self.options.relay else ""

    def _answered_words(self, request: LLMRequest, offered: list[Tool]) -> str:
        """The words a reply to ``request`` answers, and its calls take values from: the user's last words, after
        the words of the request before them when the assistant's reply to that one asked for a value it lacked
        (:meth:`_callable`): "What's the weather?", "Could you tell me the city?", "Paris." is "What's the weather?
        Paris.", a call of ``get_weather(city='Paris')``, whatever the model's first token (the value was asked
        for). The answer alone named no tool, and the 0.5B model answered it with the weather of its imagination."""
        items = request.items
        text = request.last_user_text
        if len(items) < 3 or not all(isinstance(item, Message) and item.role == role for item, role in
                                     zip(items[-3:], ("user", "assistant", "user"), strict=True)):
            return text
        asked, reply = items[-3], items[-2]
        assert isinstance(asked, Message) and isinstance(reply, Message)
        question = self._callable(replace(request, items=items[:-2]), asked.text, offered)[2]
        return f"{asked.text.strip()} {text}" if question and question in reply.text else text

    def _computed(self, request: LLMRequest, text: str) -> str:
        """With ``compute``, the answer to arithmetic the user's words (``text``) ask for (:mod:`voxcall.llm.local.
        arithmetic`), when no tool is evident for it: a small model invents results ("12 times 8 is 8*8 = 64");
        "" when the words ask for none, or the reply follows tool results."""
        if not self.options.compute or _follows_results(request):
            return ""
        return computed(text) or ""

    def _lift(self, request: LLMRequest, offered: list[Tool], callable_tools: list[Tool], prompt: list[int]) -> Lift:
        """Where the reply to ``request`` (``prompt``) would write the name of one of ``callable_tools``, and
        where it would after words that ask for nothing (:mod:`voxcall.llm.local.lift`)."""
        names = tuple(tuple(self.vocabulary.tokenize(tool.name)) for tool in callable_tools)
        assert self.options.unrelated_threshold is not None, "only words weighed as unrelated are lifted"
        return Lift([*prompt, *self._opener_tokens], self._unasked.prompts(request, offered), names,
                    self.options.unrelated_threshold)

    def _unasked_prompt(self, unasked: LLMRequest, offered: list[Tool]) -> list[int]:
        """Where a reply to content-free words ``unasked`` offering ``offered`` writes a tool's name."""
        return self.prompt.fit(unasked, offered, "").tokens + self._opener_tokens

    def _call_threshold(self, request: LLMRequest, unrelated: bool) -> float | None:
        """The threshold for this ``"auto"`` reply: infinite right after tool results, so that the reply begins with
        words (a tiny model otherwise repeats the call whose result it was just given: SmolLM2-135M did in 4 of 6
        follow-ups tried); it may still call a tool once it has said something. For ``unrelated`` words
        (:meth:`_unrelated`) at least :data:`UNRELATED_CALL_THRESHOLD`."""
        if _follows_results(request):
            return math.inf
        threshold, least = self.options.call_threshold, self.options.unrelated_threshold
        return max(threshold, least) if unrelated and threshold is not None and least is not None else threshold

    def _unrelated(self, request: LLMRequest, said: str, offered: list[Tool]) -> bool:
        """With ``call_evidence``, a threshold and an ``unrelated_threshold``, whether the user's words ``said``
        share no content word with any of ``offered`` (:class:`~voxcall.llm.local.relevance.Relevance` ``hits``):
        such a reply needs ``unrelated_threshold`` (:data:`UNRELATED_CALL_THRESHOLD`) to open a call, and one that
        begins with words opens none later (the 0.5B model gave the opener 0.6-0.9 on BFCL's "the subdomains of
        paypal.com on VirusTotal", only a weather tool offered, and refused it, wrote the call after a few words).
        False if there is nothing to weigh: the reply follows tool results, or the words hold none the lexicon reads
        ("hey do 거실 에어컨 실행"; Spanish, read as English: :func:`~voxcall.llm.local.relevance.readable`)."""
        options = self.options
        if (not options.call_evidence or options.call_threshold is None or options.unrelated_threshold is None
                or not words(said) or not readable(said) or _follows_results(request)):
            return False
        return not any(relevance(said, tool).hits for tool in offered)

    def _callable(self, request: LLMRequest, text: str, offered: list[Tool]) -> tuple[list[Tool], list[Tool], str]:
        """The tools an ``"auto"`` reply to ``request``, whose user said ``text``, may call; the evident ones
        (:meth:`_evident_tools`: the reply is a call); and what the reply says instead of a call when the tool it
        asks for lacks a value the words would give ("": none; :meth:`~voxcall.llm.local.said.Said.missing`). The
        tools asked for are the likeliest evident ones, or with none the likeliest of those whose name the words say
        ("Play some music": ``play_music`` before ``stop_music``); when none of them holds its values ("Turn the
        music off": ``stop_music`` needs none), no tool may be called ("Set a timer." is no
        ``set_lights(room='timer')``), and a reply that opens a call (for an evident tool, always; for a named one,
        as the model decides: "Can you recommend a good book?" names ``book_table`` and is no call) asks for the
        first value missing. Otherwise the evident tools no other outranks on the same words (the 0.5B model, offered
        the MTNA "Rich Data Services server" the words describe and a PostgreSQL one, added the latter; the others
        stay for a further call), or every tool offered, less those lacking values (with ``copy_strings``)."""
        heard, forms = Said(text if self.options.copy_strings else ""), self.options.write_forms
        evident = self._evident_tools(request, text, offered)
        named = evident or ([tool for tool in offered if relevance(text, tool).name_hits]
                            if self.options.call_evidence and not _follows_results(request) else [])
        ranked = [(relevance(text, tool).score, tool) for tool in named]
        top = max((score for score, _ in ranked), default=0.0)
        likeliest = [tool for score, tool in ranked if score == top]
        lacking = [heard.missing(tool, write_forms=forms) for tool in likeliest]
        if likeliest and all(lacking):
            return [], evident, asking(None, text, _spoken_name(likeliest[0], lacking[0][0], text))
        callable_tools = [tool for tool in evident or offered if heard.holds(tool, write_forms=forms)]
        first = unrivalled(text, callable_tools) if evident else []
        return first or callable_tools, callable_tools if evident else [], ""

    def _evident_tools(self, request: LLMRequest, said: str, offered: list[Tool]) -> list[Tool]:
        """With ``call_evidence``, the tools the user's words ``said`` plainly ask for
        (:func:`~voxcall.llm.local.relevance.relevance`): words of the tool's name said, and values for all its
        required parameters, or values for all of them with a choice among them named
        (:attr:`~voxcall.llm.local.relevance.Relevance.evident`). An ``"auto"`` reply with such tools is a call to
        one of them (:data:`EVIDENT_CALL_THRESHOLD`; ``evident_threshold`` where the model's probabilities weigh):
        SmolLM2-135M gave the call opener too little probability on explicit requests (0 of 45 BFCL-style requests
        called correctly), and chose a tool with no word in common ("Turn the music off" -> set_timer). With none, a
        question of knowledge is for a tool that looks things up (:func:`~voxcall.llm.local.lookup.looked_up`)."""
        options = self.options
        if not options.call_evidence or options.call_threshold is None or _follows_results(request):
            return []
        return [tool for tool in offered if relevance(said, tool).evident] or looked_up(said, offered)

    def _calls_grammar(self, offered: list[Tool], said: str) -> str:
        """The grammar of what follows the opener: calls to ``offered`` in the model's format, string and number
        arguments taken from ``said`` (see :mod:`voxcall.llm.local.grammar`)."""
        if self.tool_format is not None:
            return format_grammar(offered, self.tool_format, said, write_forms=self.options.write_forms)
        return calls_grammar(offered, said, write_forms=self.options.write_forms)

    def _format_tokens(self) -> set[int]:
        """The special tokens of the model's tool format (its opener, closer, string delimiter): generated, they
        are text for the scanner, not the end of the reply."""
        if self.tool_format is None:
            return set()
        texts = {*self.tool_format.openers, self.tool_format.closer,
                 GEMMA_ESCAPE if self.tool_format.body == "gemma" else ""}
        tokens = {self.vocabulary.special_token(text) for text in texts if text}
        return {t for t in tokens if t is not None}


def _opens_call(text: str, opener: str) -> bool:
    """Whether a token's text begins a call block: after optional blanks, a piece of ``opener`` or all of it."""
    text = text.lstrip(" \t\n")
    return bool(text) and (opener.startswith(text) or text.startswith(opener))


def _with_optional(tools: list[Tool]) -> bool:
    """Whether any of ``tools`` takes an optional argument (else a call has nothing optional to decide)."""
    return any(tool.properties.keys() - set(tool.required) for tool in tools)


def _follows_results(request: LLMRequest) -> bool:
    """Whether the reply answers tool results (the conversation ends with one)."""
    return bool(request.items) and isinstance(request.items[-1], FunctionOutputItem)


def _offered_tools(request: LLMRequest) -> list[Tool]:
    """The tools the model may call in this reply: none for ``"none"``, the named one for a forced choice.
    Raises ``LLMError`` when ``tool_choice`` names a tool the request does not offer."""
    if request.tool_choice == "none":
        return []
    forced = forced_tool_name(request.tool_choice)
    if forced is None:
        return list(request.tools)
    named = [t for t in request.tools if t.name == forced][:1]
    if not named:
        raise LLMError(f"tool_choice names {forced!r}, which is not among the tools", code="invalid_request")
    return named


def _spoken_name(tool: Tool, name: str, said: str) -> str:
    """How a question to a user who ``said`` something names parameter ``name`` of ``tool``: its description when
    that is a short noun phrase ("The first number." → "first number"), else its name in words (``user_id`` → "user
    id"), in the user's language where the lexicon knows the word (:func:`~voxcall.llm.local.meanings.word_for`:
    "city" → 城市)."""
    schema = tool.properties.get(name)
    description = str(schema.get("description", "")) if isinstance(schema, Mapping) else ""
    phrase = re.fullmatch(r"[Tt]he ([\w ]{1,40})\.?", description.strip())
    if phrase and len(phrase.group(1).split()) <= SPOKEN_NAME_WORDS:
        english = phrase.group(1)
    else:
        english = " ".join(re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)).lower() or name
    return word_for(english, language_of(said) or "en")
