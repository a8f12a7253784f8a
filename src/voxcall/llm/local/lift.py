"""``Lift``: which tool, if any, words that share no word with any tool make the model likelier to call.

Words unrelated to every tool shown ("Cut the tunes, I'm on the phone." beside ``stop_music``) say nothing the
planner can read, so the model decides; but the probability that it opens a call does not part the requests meant
for a tool from those no tool serves. Qwen2.5-Coder-0.5B opened a call with 0.58-0.80 for "Ping me in half an
hour.", "Cut the tunes, I'm on the phone.", "I feel like listening to some Nina Simone." (``bench_local_tools.py``'s
development set) and with 0.41-0.86 for BFCL's irrelevance requests about VirusTotal offered only a weather tool;
the floor of 0.9 kept those false calls out and the right ones too, and a call it did open named the tool its name
tokens favour, not the one the words meant ("I want to hear the Beatles.": ``set_lights``, three tools beginning
with "set").

What parts them is how much the words raise each name: the probability that the model, having opened a call,
writes a tool's name after the user's words, against the same after words that ask for nothing
(:data:`CONTENT_FREE`, averaged: the bias of the names alone, as Zhao et al. calibrate a classifier's labels in
"Calibrate Before Use", 2021). After the VirusTotal requests the weather tool is no likelier than after "N/A" (a
lift of -0.85 to -0.12, in natural logarithms: the model would call a tool that is not there); after the music
requests ``play_music`` or ``stop_music`` is 5-25 times likelier (lift 1.7-3.2); "Tell me a joke.", the one chat
request it would open a call for, lifts no tool (-0.03).

So such words open a call when the model's probability of opening one reaches the plan's threshold and a tool's
lift reaches :data:`MIN_LIFT`, or, as before, when that probability reaches the floor for unrelated words; the call
is to the tool lifted most. With one tool, or one the model names after any words, no lift can reach
:data:`MIN_LIFT`, and the floor decides alone. A name's probability is that of its tokens up to where it parts
from every other name (the grammar holds the rest), each read from the model's likeliest next tokens: one or two
answers per prompt for a few tools, nothing generated.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace

from voxcall.llm.base import LLMRequest, Message
from voxcall.tools.schema import Tool

CONTENT_FREE = ("N/A", "Okay.", "Hmm.")
"""Words that ask for nothing, put in the user's place to read what the model writes after the opener unasked."""
SMOOTHING = 0.01
"""Added to both probabilities of a lift, so that a name the model all but never writes either way (a prior of
0.0001) cannot be lifted by noise."""
MIN_LIFT = 1.0
"""The least lift (natural logarithm of the ratio) of the tool an unrelated request calls: e, about 2.7 times."""
REMEMBERED = 64
"""Sets of tools whose content-free prompts are kept (:class:`UnaskedPrompts`)."""


@dataclass(frozen=True, slots=True)
class Likely:
    """Ask for the probabilities of ``tokens`` as the token after ``prompt`` (0 for one the model's likeliest
    tokens there leave out)."""

    prompt: list[int]
    tokens: tuple[int, ...]


Weights = dict[int, float]
"""The answer to :class:`Likely`: a probability for each token asked about."""


@dataclass(frozen=True, slots=True)
class Lift:
    """Where a reply's call writes its tool's name: after the user's words (``prompt``, ending with the opener)
    and after each of :data:`CONTENT_FREE` (``free``); ``names``: each callable tool's name in tokens, in the
    order of the plan's tools; ``floor``: the probability of opening a call at which the reply calls the tool
    lifted most, however little."""

    prompt: list[int]
    free: tuple[list[int], ...]
    names: tuple[tuple[int, ...], ...]
    floor: float

    def chosen(self, opening: float) -> Generator[Likely, Weights, int | None]:
        """For a reply that opens a call with probability ``opening`` (at least the plan's threshold): the index
        of the tool the words lift most, when by :data:`MIN_LIFT` at least or ``opening`` reaches the floor; else
        None (the reply is words)."""
        prior = [0.0] * len(self.names)
        for prompt in self.free:  # first, so that the server holds the prompt the reply continues at the end
            weights = yield from self._weights(prompt)
            prior = [total + weight / len(self.free) for total, weight in zip(prior, weights, strict=True)]
        said = yield from self._weights(self.prompt)
        lifts = [math.log((p + SMOOTHING) / (q + SMOOTHING)) for p, q in zip(said, prior, strict=True)]
        best = max(range(len(lifts)), key=lifts.__getitem__, default=None)
        return best if best is not None and (lifts[best] >= MIN_LIFT or opening >= self.floor) else None

    def _weights(self, prompt: list[int]) -> Generator[Likely, Weights, list[float]]:
        """The probability of each name after ``prompt``: its tokens' up to where it parts from the others (one
        :class:`Likely` for each prefix that names share)."""
        weights = [1.0] * len(self.names)
        shared: dict[tuple[int, ...], list[int]] = {(): list(range(len(self.names)))}
        while shared:
            longer: dict[tuple[int, ...], list[int]] = {}
            for prefix, group in shared.items():
                going = [i for i in group if len(self.names[i]) > len(prefix)]
                if not going:
                    continue
                ahead = tuple(sorted({self.names[i][len(prefix)] for i in going}))
                probabilities = yield Likely(prompt + list(prefix), ahead)
                for i in going:
                    token = self.names[i][len(prefix)]
                    weights[i] *= probabilities.get(token, 0.0)
                    longer.setdefault((*prefix, token), []).append(i)
            shared = {prefix: group for prefix, group in longer.items() if len(group) > 1}
        return weights


def content_free(request: LLMRequest) -> list[LLMRequest]:
    """``request`` with each of :data:`CONTENT_FREE` as its only words: the bias of the names with these tools and
    instructions (the conversation before the user's last words lifts a tool as they do, and the prompts are the
    same for every turn, so their answers are kept: :data:`~voxcall.llm.local.server_engine.KEPT_ANSWERS`)."""
    return [replace(request, items=[Message("user", words)]) for words in CONTENT_FREE]


class UnaskedPrompts:
    """The prompts of :func:`content_free` requests, built by ``build`` once for each set of offered tools,
    instructions and voice (the last :data:`REMEMBERED` sets): every reply to unrelated words offering the same
    tools has the same ones, and building three took 4.5 ms, on every such reply, most of which open no call.
    Requests are planned on several threads."""

    def __init__(self, build: Callable[[LLMRequest, list[Tool]], list[int]]) -> None:
        self._build = build
        self._built: OrderedDict[str, tuple[list[int], ...]] = OrderedDict()
        self._lock = threading.Lock()

    def prompts(self, request: LLMRequest, offered: list[Tool]) -> tuple[list[int], ...]:
        """The prompts for ``request``'s settings offering ``offered``."""
        key = json.dumps([request.instructions, request.voice,
                          [[tool.name, tool.description, tool.parameters] for tool in offered]],
                         sort_keys=True, default=str)
        with self._lock:
            built = self._built.pop(key, None)
        if built is None:
            built = tuple(self._build(unasked, offered) for unasked in content_free(request))
        with self._lock:
            self._built[key] = built
            while len(self._built) > REMEMBERED:
                self._built.popitem(last=False)
        return built
