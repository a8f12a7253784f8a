"""A reply's tokens, sampled or given (an opener, a closer, a further call's block), never outgrow what the plan
leaves: a reply of several calls outgrew the model's context and the whole response failed."""

from __future__ import annotations

import pytest

from tests.llm.local.test_llama_server import WEATHER
from tests.requirements import require_smollm2
from voxcall.llm import LLMRequest, Message
from voxcall.llm.local.driver import Opening, Outcome, Run, Said, Step, Token, reply_steps
from voxcall.llm.local.plan import Planner, ReplyOptions
from voxcall.llm.local.vocabulary import Vocabulary


@pytest.mark.parametrize("budget", [2, 4, 8])
def test_the_text_a_reply_is_given_counts_against_its_tokens(budget: int) -> None:
    """The opener ``<code>`` is given, not sampled: with 2 tokens left it leaves none to ask for, with 4 or 8 the
    runs ask for what remains after it, and the call, cut, ends the reply as ``length``."""
    vocabulary = Vocabulary(require_smollm2())
    request = LLMRequest(items=[Message("user", "What's the weather in Oslo?")], tools=[WEATHER],
                         max_output_tokens=budget)
    plan = Planner(vocabulary, 2048, ReplyOptions(jump_forward=False)).plan(request, [WEATHER])
    opener = len(vocabulary.tokenize(plan.opener))
    assert plan.max_tokens == budget and plan.call_threshold == 0.0 and opener == 3
    call = iter("get_weather(city='Oslo')</code>")
    steps = reply_steps(plan, vocabulary)
    step: Step = next(steps)
    runs: list[Run] = []
    with pytest.raises(StopIteration) as stopped:
        while True:
            if isinstance(step, Opening):
                step = steps.send(0.99)
            elif isinstance(step, Said):
                step = steps.send(None)
            else:
                if isinstance(step, Run):
                    runs.append(step)
                    assert step.limit > 0 and len(step.prompt) - len(plan.prompt) + step.limit <= budget
                step = steps.send(Token(next(call)))
    outcome = stopped.value.value
    assert isinstance(outcome, Outcome) and outcome.reason == "length"
    assert [run.limit for run in runs][:1] == ([budget - opener] if budget > opener else [])
