"""Fitting a conversation to a model's context: which of its turns a request keeps.

A local model reads a fixed number of tokens (llama.cpp's ``n_ctx``). A long chat outgrows it, and a request must
then leave out part of the conversation rather than fail. What is left out, and how:

- The conversation is cut into **turns** (:func:`split_turns`): a turn opens with a user message and holds what
  followed it, the assistant's words, its tool calls and their outputs. A call and its output are always in the
  same turn, so leaving out whole turns never separates them, and what remains still opens with a user message
  (strict chat templates want one first).
- The oldest turns go first, the latest is always kept (:func:`first_kept`); the instructions, the tools and the
  room for the reply are the caller's to reserve: what is left of the context is the turns' ``budget``.
- Turns are left out **in chunks**: once the turns outgrow the budget, the oldest go until what stays fills at
  most :data:`DROP_TO` of it. The prompts of the next turns then share their opening with this one, and a backend
  that keeps the evaluated prefix of the last prompt (llama.cpp's context) evaluates only the new words, until the
  budget is reached again; dropping one turn at a time would change the opening, and re-evaluate it all, every turn.

:func:`first_kept` decides from the turns' sizes alone and remembers nothing: it replays the conversation's growth
turn by turn, cutting as above whenever the budget is exceeded, so the same conversation always gets the same cut,
and a conversation that grows by one turn keeps the cut of the one before until the budget is exceeded again.
"""

from __future__ import annotations

from collections.abc import Sequence

from voxcall.llm.base import ChatItem, Message
from voxcall.llm.history import pair_calls_with_outputs

DROP_TO = 0.75
"""Once the turns outgrow their budget, the oldest go until the rest fill at most this share of it."""


def split_turns(items: list[ChatItem]) -> list[list[ChatItem]]:
    """``items`` (calls paired with their outputs first: see
    :func:`~voxcall.llm.history.pair_calls_with_outputs`) cut before each user message. What precedes the first
    user message, if anything, is a turn of its own."""
    turns: list[list[ChatItem]] = []
    for item in pair_calls_with_outputs(items):
        if not turns or (isinstance(item, Message) and item.role == "user"):
            turns.append([])
        turns[-1].append(item)
    return turns


def first_kept(sizes: Sequence[int], budget: int, *, drop_to: float = DROP_TO) -> int:
    """The index of the oldest turn to keep, for turns of ``sizes`` tokens (oldest first) and ``budget`` tokens.

    The latest turn is always kept, even alone over the budget (the caller decides what to do then). Replaying
    the conversation's growth, each time the kept turns exceed ``budget`` the oldest are left out until the rest
    fill at most ``drop_to`` of it.
    """
    start = 0
    kept = 0
    for last, size in enumerate(sizes):
        kept += size
        if kept > budget:
            while start < last and kept > budget * drop_to:
                kept -= sizes[start]
                start += 1
    return start
