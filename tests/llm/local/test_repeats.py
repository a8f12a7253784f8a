"""A list item the model repeats (:mod:`voxcall.llm.local.repeats`): the lists of a call's text read, then the
reply driver dropping the repeat and closing the list, with SmolLM2's vocabulary and a model that loops."""

from __future__ import annotations

import pytest

from tests.requirements import require_smollm2
from voxcall.llm import LLMRequest, Message
from voxcall.llm.local.driver import Opening, Outcome, Run, Said, Step, Token, reply_steps
from voxcall.llm.local.plan import Planner, ReplyOptions
from voxcall.llm.local.repeats import Lists, read_lists
from voxcall.llm.local.vocabulary import Vocabulary
from voxcall.tools import Tool


@pytest.mark.parametrize(("text", "lists"), [
    ("f(sizes=['S', 'M'", Lists(True, None)),
    ("f(sizes=['S', 'M'], n=2", Lists(False, None)),
    ("f(sizes=['S', 'M', 'S'", Lists(True, None)),  # an item is complete once a separator or "]" follows it
    ("f(sizes=['S', 'M', 'S',", Lists(True, 17)),  # the separator before the repeat
    ("f(sizes=['S', 'S'])", Lists(False, 12)),
    ("f(a=[1, 1, 2], b=['x', \"x\"])", Lists(False, None)),  # numbers repeat as meant; quotes differ
    ("f(a=['a, b', 'a', 'b'", Lists(True, None)),  # a comma inside a string separates nothing
    ("f(a=['it\\'s', 'it\\'s',", Lists(True, 12)),  # an escaped quote ends no string
    ("f(a=[['x', 'y'], ['x', 'y'],", Lists(True, 15)),  # a list of lists: the inner lists compared whole
    ("f(a=[{'k': 'x'}, {'k': 'y'}", Lists(True, None)),
    ("f(a=('x', 'x'),", Lists(False, None)),  # a tuple is no list
])
def test_the_lists_of_a_call_say_whether_one_is_open_and_where_an_item_first_repeats(text: str, lists: Lists) -> None:
    assert read_lists(text) == lists


CHECK_STOCK = Tool("check_stock", "Check whether a product is in stock in the given stores.",
                   {"type": "object", "properties": {"product_id": {"type": "string"},
                                                     "stores": {"type": "array", "items": {"type": "string"}}},
                    "required": ["product_id", "stores"]})


def test_a_repeated_item_is_dropped_and_its_list_closed_before_any_of_the_list_is_said() -> None:
    """A model that writes one item of a list over and over (the 0.5B thinker wrote ``sizes=['Shopee', 'Shopee',
    …]`` until its tokens ran out, and the cut call was rejected) gets a list of the item once, and the call
    closes; the list's text is said once it is closed, so the repeat is never said."""
    vocabulary = Vocabulary(require_smollm2())
    asked = Message("user", "Is product 123 in stock at Berlin Mitte and Paris Nord?")
    plan = Planner(vocabulary, 2048, ReplyOptions(jump_forward=True)).plan(
        LLMRequest(items=[asked], tools=[CHECK_STOCK]), [CHECK_STOCK])
    looping = f"{plan.opener}check_stock(product_id='123', stores=['Berlin Mitte'" + ", 'Berlin Mitte'" * 60
    ending = ")</code>"

    def model(text: str) -> Token:
        """The next token of a model that repeats the item for as long as it is let, then closes the call."""
        if looping.startswith(text):
            return Token(looping[len(text):len(text) + 3])
        rest = ending[len(text) - text.rindex("]") - 1:]
        return Token(rest[:2]) if rest else Token(end="stop")

    steps = reply_steps(plan, vocabulary)
    said: list[str] = []
    step: Step = next(steps)
    with pytest.raises(StopIteration) as stopped:
        while True:
            if isinstance(step, Opening):
                step = steps.send(0.99)
            elif isinstance(step, Said):
                said.append(step.text)
                step = steps.send(None)
            else:
                assert isinstance(step, Run) and step.grammar is not None
                written = b"".join(vocabulary.piece(token) for token in step.prompt[len(plan.prompt):]).decode()
                step = steps.send(model(written))
    assert "".join(said) == "<code>check_stock(product_id='123', stores=['Berlin Mitte'])</code>"
    assert any(piece.startswith("=['Berlin Mitte']") for piece in said)  # the list said whole, once closed
    outcome = stopped.value.value
    assert isinstance(outcome, Outcome) and outcome.reason == "stop" and outcome.produced < 40  # the loop: 200+
