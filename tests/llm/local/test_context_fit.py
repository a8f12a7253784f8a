"""context_fit: which turns of a conversation a request keeps, from token counts alone (no model needed)."""

from __future__ import annotations

import itertools

from voxcall.llm.base import ChatItem, FunctionCallItem, FunctionOutputItem, Message
from voxcall.llm.local.context_fit import DROP_TO, first_kept, split_turns


def user(text: str) -> Message:
    return Message(role="user", text=text)


def assistant(text: str) -> Message:
    return Message(role="assistant", text=text)


def call(call_id: str) -> FunctionCallItem:
    return FunctionCallItem(call_id=call_id, name="get_weather", arguments='{"city": "Oslo"}')


def output(call_id: str) -> FunctionOutputItem:
    return FunctionOutputItem(call_id=call_id, output="Sunny")


# -- split_turns ----------------------------------------------------------------------------------------------


def test_a_turn_opens_with_each_user_message_and_holds_what_follows() -> None:
    items: list[ChatItem] = [assistant("Hello, how can I help?"), user("Weather in Oslo?"), call("c1"), output("c1"),
                             assistant("Sunny."), user("Thanks."), assistant("You're welcome.")]
    assert split_turns(items) == [[items[0]], items[1:5], items[5:]]


def test_a_call_and_its_output_stay_together_even_when_the_output_came_after_a_new_user_message() -> None:
    items: list[ChatItem] = [user("Weather in Oslo?"), call("c1"), user("Hurry up."), output("c1")]
    turns = split_turns(items)
    assert turns == [[items[0], items[1], items[3]], [items[2]]]


def test_a_call_without_output_is_left_out_as_the_request_would_leave_it() -> None:
    items: list[ChatItem] = [user("Weather in Oslo?"), call("c1"), user("Never mind.")]
    assert split_turns(items) == [[items[0]], [items[2]]]


def test_no_items_no_turns() -> None:
    assert split_turns([]) == []


# -- first_kept -----------------------------------------------------------------------------------------------


def test_everything_is_kept_while_it_fits() -> None:
    assert first_kept([10, 20, 30], 60) == 0
    assert first_kept([], 10) == 0


def test_over_budget_the_oldest_go_until_the_rest_fill_at_most_the_drop_share() -> None:
    sizes = [10] * 11  # 110 tokens against 100: down to 75 at most
    start = first_kept(sizes, 100)
    assert sum(sizes[start:]) <= 100 * DROP_TO
    assert sum(sizes[start - 1:]) > 100 * DROP_TO  # no more than needed went


def test_the_latest_turn_is_kept_even_alone_over_the_budget() -> None:
    assert first_kept([10, 10, 500], 100) == 2
    assert first_kept([500], 100) == 0
    assert first_kept([10, 10], -5) == 1  # nothing fits: still the latest turn


def test_the_cut_stays_put_as_the_conversation_grows_until_the_budget_is_exceeded_again() -> None:
    """Turns dropped in chunks: successive requests share their opening (the model's cached prefix), and the
    cut moves only once in a while, not on every turn as dropping just enough would."""
    budget = 200
    sizes: list[int] = []
    cuts = []
    for turn in range(60):
        sizes.append(7 + turn % 5 * 3)  # 7 to 19 tokens a turn
        start = first_kept(sizes, budget)
        assert sum(sizes[start:]) <= budget
        cuts.append(start)
    assert cuts == sorted(cuts)  # the cut never moves back
    moves = sum(1 for before, after in itertools.pairwise(cuts) if after != before)
    assert 3 <= moves <= 60 // 4
    one_at_a_time = sum(1 for n in range(1, 60)
                        if _just_enough(sizes[:n], budget) != _just_enough(sizes[:n + 1], budget))
    assert one_at_a_time > 2 * moves  # what chunking saves


def test_the_same_conversation_always_gets_the_same_cut() -> None:
    sizes = [30, 5, 60, 12, 40, 8, 70, 25, 33]
    assert first_kept(sizes, 150) == first_kept(list(sizes), 150)
    assert first_kept(sizes, 150, drop_to=1.0) == _just_enough(sizes, 150)


def _just_enough(sizes: list[int], budget: int) -> int:
    """The cut that leaves out as few of the oldest turns as possible."""
    start = 0
    while start < len(sizes) - 1 and sum(sizes[start:]) > budget:
        start += 1
    return start
