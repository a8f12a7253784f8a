"""Whether a call takes an optional argument: decided from the model's probabilities, not left to a near-tie.

Under a calls grammar, once a call holds its tool's required arguments the next token either closes it (``)``)
or adds an optional argument (``, label=``). Greedy sampling takes the likelier of the two however close they are,
and for SmolLM2-135M they are often close: "Set timers for 5 and 10 minutes." gave
``set_timer(minutes=5, label='10 minutes')`` or ``set_timer(minutes=5)`` depending on what the prompt held before
the tools. The rules the model reads say to leave out optional arguments it has no value for; this makes that the
default, as the call threshold does for opening a call: at such a place a comma is kept only when the tokens that
begin with one hold at least :data:`OPTIONAL_SHARE` of the probability that they and the closing tokens share.
The price: an optional value the user did give is left out too when the model is as unsure of it (SmolLM2 on "Set a
3 minute timer labelled eggs": comma 0.50, close 0.46); a model sure of the comma keeps it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from voxcall.tools.codecalls.stream import CLOSE_TAG, OPEN_TAG, parse_code_calls
from voxcall.tools.schema import Tool

OPTIONAL_SHARE = 0.75
"""The share of the comma-or-close probability that the comma needs for a call to take an optional argument."""
CANDIDATES = 20
"""The likeliest tokens weighed at each token of a call (the comma and the closing tokens are among them)."""
CLOSE = ")"
COMMA = ","


@dataclass(frozen=True, slots=True)
class OptionalChoice:
    """How a reply decides optional arguments: the tokens that begin with a comma and with a closing parenthesis
    (one flag per token of the vocabulary), and the share of their probability the comma needs."""

    commas: npt.NDArray[np.bool_]
    closers: npt.NDArray[np.bool_]
    share: float = OPTIONAL_SHARE

    def adds(self, top: Sequence[tuple[int, float]]) -> bool:
        """Whether, with ``top`` (the likeliest tokens at the place, with their probabilities), the call takes an
        optional argument: the commas hold at least ``share`` of the probability they share with the closers
        (True when neither is among ``top``: nothing to weigh, the sampled token stands)."""
        adding = sum(p for token, p in top if self.commas[token])
        closing = sum(p for token, p in top if self.closers[token])
        return adding + closing == 0 or adding >= self.share * (adding + closing)


def may_close(reply: str, tools: Sequence[Tool]) -> bool:
    """Whether the call ``reply`` ends inside (after its last ``<code>``, not yet closed) could close right here:
    closed, it is a valid call to one of ``tools`` with all their required arguments, and that tool has optional
    arguments the call does not hold yet."""
    start = reply.rfind(OPEN_TAG)
    if start < 0 or CLOSE_TAG in reply[start:]:
        return False
    calls = parse_code_calls(reply[start:] + CLOSE + CLOSE_TAG, tools).calls
    if len(calls) != 1:
        return False
    tool = next((t for t in tools if t.name == calls[0].name), None)
    return tool is not None and bool(tool.properties.keys() - calls[0].arguments.keys())

