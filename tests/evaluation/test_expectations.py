"""Expectations against turns built by hand: calls in any order or in order, arguments by value, absent calls,
whole words, answers, interruptions and latency limits; every failure says why."""

from __future__ import annotations

import json
from typing import Any

from voxcall.evaluation.expectations import check_turn, contains
from voxcall.evaluation.record import CallRecord, Check, ResponseRecord, TurnRecord
from voxcall.evaluation.scenario import Expect, Turn


def turn(expect: dict[str, Any], *, calls: list[tuple[str, dict[str, Any]]] = (), answer: str = "",
         **fields: Any) -> TurnRecord:
    record = TurnRecord(1, Turn(text="hi", expect=Expect.model_validate(expect)), ran=True, answer=answer,
                        **fields)
    record.calls = [CallRecord(f"call_{n}", name, json.dumps(args), "client") for n, (name, args) in enumerate(calls)]
    return record


def checks(record: TurnRecord) -> list[tuple[str, bool, str]]:
    return [(c.expectation, c.passed, c.detail) for c in check_turn(record)]


def test_calls_match_in_any_order_each_by_a_call_of_its_own() -> None:
    made = [("lookup", {"city": "Oslo", "unit": "C"}), ("lookup", {"city": "Paris"}), ("clock", {})]
    expect = {"calls": [{"name": "lookup", "arguments": {"city": "Paris"}}, {"name": "lookup", "arguments": {
        "city": "Oslo"}}]}
    assert checks(turn(expect, calls=made))[0][:2] == ("calls", True)
    twice = {"calls": [{"name": "clock"}, {"name": "clock"}]}
    _, passed, detail = checks(turn(twice, calls=made))[0]
    assert not passed and detail.startswith("expected clock(…), clock(…); made lookup(")


def test_in_order_wants_the_calls_in_that_order() -> None:
    made = [("a", {}), ("b", {}), ("c", {})]
    assert checks(turn({"calls": [{"name": "a"}, {"name": "c"}], "in_order": True}, calls=made))[0][1]
    name, passed, detail = checks(turn({"calls": [{"name": "c"}, {"name": "a"}], "in_order": True}, calls=made))[0]
    assert (name, passed) == ("calls in order", False) and "in this order" in detail


def test_arguments_compare_numbers_by_value_and_the_rest_exactly() -> None:
    made = [("calculator", {"op": "mul", "a": 12.0, "b": 8, "exact": True})]
    assert checks(turn({"calls": [{"name": "calculator", "arguments": {"a": 12, "b": 8.0}}]}, calls=made))[0][1]
    assert not checks(turn({"calls": [{"name": "calculator", "arguments": {"op": "MUL"}}]}, calls=made))[0][1]
    assert not checks(turn({"calls": [{"name": "calculator", "arguments": {"exact": 1}}]}, calls=made))[0][1]
    assert not checks(turn({"calls": [{"name": "calculator", "arguments": {"c": 1}}]}, calls=made))[0][1]
    record = turn({"calls": [{"name": "f", "arguments": {"x": 1}}]})
    record.calls = [CallRecord("c", "f", "not json", "server")]
    assert not checks(record)[0][1]


def test_absent_calls_by_name_or_with_arguments() -> None:
    made = [("lookup", {"city": "Oslo"})]
    results = checks(turn({"absent": ["clock", {"name": "lookup", "arguments": {"city": "Paris"}}, "lookup"]},
                          calls=made))
    assert [(name, passed) for name, passed, _ in results] == [
        ("absent clock", True), ("absent lookup", True), ("absent lookup", False)]
    assert results[2][2] == 'made lookup({"city": "Oslo"}), which must not be called'


def test_words_match_whole_in_any_case_and_failures_quote_the_answer() -> None:
    record = turn({"says": ["96", "the ANSWER is", "9"], "not_says": ["sorry", "answer"]},
                  answer="The answer   is 96.")
    assert [(n, p) for n, p, _ in checks(record)] == [
        ("says '96'", True), ("says 'the ANSWER is'", True), ("says '9'", False),
        ("not_says 'sorry'", True), ("not_says 'answer'", False)]
    assert checks(record)[2][2] == "the answer does not say '9': \"The answer is 96.\""
    assert contains("it costs $5.", "$5") and not contains("", "") and not contains("thistle", "this")


def test_heard_checks_the_servers_transcript() -> None:
    record = turn({"heard": ["twelve", "12"]}, heard="What is 12 times 8?")
    assert [(n, p) for n, p, _ in checks(record)] == [("heard 'twelve'", False), ("heard '12'", True)]


def test_responds_and_interrupted() -> None:
    silent = turn({"responds": False})
    assert checks(silent) == [("responds", True, "no answer, as expected")]
    answered = turn({"responds": False}, answer="Hello!", responses=[ResponseRecord("r1", "completed")])
    assert checks(answered) == [("responds", False, 'the turn was answered: "Hello!"')]
    cut = turn({"interrupted": True}, responses=[ResponseRecord("r1", "completed")], cut_at_ms=1500)
    assert checks(cut) == [("interrupted", True, "cut after 1500 ms of audio; responses: completed")]
    cancelled = turn({"interrupted": False}, responses=[ResponseRecord("r1", "cancelled", "turn_detected")])
    assert checks(cancelled) == [("interrupted", False, "expected the answer to be whole: heard to its end; "
                                                        "responses: cancelled (turn_detected)")]


def test_latency_limits_on_the_figures_measured() -> None:
    record = turn({"max_first_audio_ms": 500, "max_tool_to_audio_ms": 300}, origin=10.0, first_audio=10.8,
                  calls=[("lookup", {}), ("clock", {})])
    record.calls[0].result_at, record.calls[0].to_audio_ms = 11.0, 250
    record.calls[1].result_at, record.calls[1].to_audio_ms = 11.5, 420
    assert checks(record) == [("first audio ≤ 500 ms", False, "800 ms"),
                              ("tool → audio ≤ 300 ms", False, "clock 420 ms")]
    text_only = turn({"max_first_audio_ms": 500}, origin=10.0, first_text=10.1)
    assert checks(text_only) == [("first audio ≤ 500 ms", False,
                                  "no answer audio came (the session answers in text)")]
    no_tools = turn({"max_tool_to_audio_ms": 300})
    assert checks(no_tools) == [("tool → audio ≤ 300 ms", False, "no tool result in this turn")]


def test_what_went_wrong_fails_the_turn_whatever_it_expects() -> None:
    record = turn({}, problems=["no complete answer within 30 s (a response was asked for and none came)"])
    record.checks = check_turn(record)
    assert record.checks == [Check("completed", False, record.problems[0])] and not record.passed
