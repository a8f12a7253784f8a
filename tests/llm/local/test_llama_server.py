"""LlamaServerBackend against a scripted ``llama-server`` (a real HTTP server answering as llama.cpp's does): what
it asks the server, and how it turns the answers into the stream of the in-process path.

The planning (prompt, grammar) is the in-process backend's, with SmolLM2's vocabulary; the real server is
exercised in tests/llm/local/test_llama_server_real.py.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

import pytest

from tests.llm.fake_server import HOLD, FakeServer, Reply, Step
from tests.llm.helpers import collect
from tests.llm.local.gbnf import Recogniser
from tests.requirements import require_smollm2
from voxcall.llm import (
    Done,
    LlamaServerBackend,
    LLMError,
    LLMRequest,
    Message,
    TextDelta,
    ToolCall,
    Usage,
    create_backend,
)
from voxcall.llm.local.driver import MAX_CHARACTER_TOKENS
from voxcall.llm.local.lift import CONTENT_FREE
from voxcall.llm.local.optional import CANDIDATES
from voxcall.llm.local.plan import UNRELATED_CALL_THRESHOLD, ReplyOptions
from voxcall.tools import Tool

SMOLLM2 = require_smollm2()
N_VOCAB = 49152  # SmolLM2's


def json_reply(body: dict[str, Any], status: int = 200) -> Reply:
    return Reply([json.dumps(body).encode()], status=status, content_type="application/json")


def facts(n_vocab: int = N_VOCAB, n_ctx: int = 2048) -> list[Reply]:
    """What the server says of itself at start-up: ``/props``, then ``/v1/models``."""
    return [json_reply({"default_generation_settings": {"n_ctx": n_ctx}, "total_slots": 4}),
            json_reply({"object": "list", "data": [{"id": "smollm2", "meta": {"n_vocab": n_vocab}}]})]


def decision(*top: tuple[int, float], cached: int = 0) -> Reply:
    """The answer to the one-token request of an "auto" reply: the top tokens with their probabilities."""
    return json_reply({"content": "", "timings": {"cache_n": cached}, "completion_probabilities": [
        {"id": top[0][0], "logprob": math.log(top[0][1]),
         "top_logprobs": [{"id": token, "logprob": math.log(p)} for token, p in top]}]})


def streamed(*pieces: str, stop_type: str = "eos", hold: bool = False,
             top: dict[int, list[tuple[int, float]]] | None = None) -> Reply:
    """A streamed completion: a chunk per piece (the one at index ``i`` with the likeliest tokens ``top[i]``),
    then the last chunk (or, with ``hold``, an open connection)."""
    steps: list[Step] = [b"data: " + json.dumps({"content": p, "stop": False, **_probabilities((top or {}).get(i))})
                         .encode() + b"\n\n" for i, p in enumerate(pieces)]
    if hold:
        steps.append(HOLD)
    else:
        steps.append(b"data: " + json.dumps({"content": "", "stop": True, "stop_type": stop_type,
                                             "timings": {"cache_n": 7}}).encode() + b"\n\n")
    return Reply(steps)


def _probabilities(top: list[tuple[int, float]] | None) -> dict[str, Any]:
    """A chunk's ``completion_probabilities`` for its token (the first of ``top``) with ``top`` at its place."""
    if not top:
        return {}
    return {"completion_probabilities": [{"id": top[0][0], "logprob": math.log(top[0][1]), "top_logprobs": [
        {"id": token, "logprob": math.log(p)} for token, p in top]}]}


NO_JUMPS = ReplyOptions(jump_forward=False)
"""The scripted server says each piece of a call a test scripts; a jump over forced text would have the driver ask
for what follows it instead (the jumps' own tests script that)."""


async def backend_for(server: FakeServer, *replies: Reply, options: ReplyOptions = NO_JUMPS) -> LlamaServerBackend:
    server.replies.extend(facts())
    server.replies.extend(replies)
    return await asyncio.to_thread(LlamaServerBackend, server.base_url, SMOLLM2, options=options)


def completions(server: FakeServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path == "/completion"]


WEATHER = Tool("get_weather", "Get the weather forecast for a city.",
               {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
SMALL_TALK = LLMRequest(items=[Message("user", "How are you today?")], tools=[WEATHER])
CHAT = LLMRequest(items=[Message("user", "How are you doing, Sam?")], tools=[WEATHER])
"""Chat holding a word a city could be ("Sam"; "today" could not), so that the model may call the tool."""
RELATED_SAID = "Which city should I visit?"
RELATED = LLMRequest(items=[Message("user", RELATED_SAID)], tools=[WEATHER])
"""Words that share one with the tool ("city") but name neither it nor the weather: the opener's probability
decides."""


async def test_a_likely_opener_makes_the_reply_a_call_written_under_the_grammar(server: FakeServer) -> None:
    backend = await backend_for(server)
    opener = backend.planner.vocabulary.tokenize("<code>")[0]
    word = backend.planner.vocabulary.tokenize("Hello")[0]
    server.replies.extend([decision((opener, 0.7), (word, 0.2), cached=12),
                           streamed("get_weather(city='Oslo')", "</code>")])
    events = await collect(backend.stream(RELATED))
    opened = backend.planner.vocabulary.tokenize("<code>")
    await backend.aclose()
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Oslo"})]
    first, second = completions(server)
    assert first["n_predict"] == 1 and first["n_probs"] > 0 and "grammar" not in first
    assert second["grammar"] and "get_weather" in second["grammar"]
    assert second["prompt"] == first["prompt"] + opened  # the same prompt, the opener appended
    assert events[-2] == Usage(len(first["prompt"]), 2, 12) and events[-1] == Done("tool_calls")


async def test_each_request_is_a_line_of_the_engines_timeline_at_debug(
        server: FakeServer, caplog: pytest.LogCaptureFixture) -> None:
    """The decision's answer and the call's stream each leave a line: prompt tokens, kept, read (with the
    server's time), generated, asked; what a fresh session's latency is read from (``--log-level debug``)."""
    backend = await backend_for(server)
    opener = backend.planner.vocabulary.tokenize("<code>")[0]
    timed = {"content": "", "timings": {"cache_n": 30, "prompt_n": 12, "prompt_ms": 96.0, "predicted_n": 1,
                                        "predicted_ms": 88.0}, "completion_probabilities": [
        {"id": opener, "logprob": math.log(0.9), "top_logprobs": [{"id": opener, "logprob": math.log(0.9)}]}]}
    server.replies.extend([json_reply(timed), streamed("get_weather(city='Oslo')", "</code>")])
    with caplog.at_level("DEBUG", logger="voxcall.llm.local.server_engine"):
        await collect(backend.stream(RELATED))
    await backend.aclose()
    first, second = completions(server)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("llama request")]
    assert len(lines) == 2
    assert lines[0].startswith(f"llama request: {len(first['prompt'])} prompt tokens, 30 kept, 12 read in 96 ms; "
                               "1 generated in 88 ms (asked 1);")
    assert lines[1].startswith(f"llama request: {len(second['prompt'])} prompt tokens, 7 kept,")
    assert f"(asked {second['n_predict']})" in lines[1]


async def test_the_text_a_grammar_forces_is_sent_as_prompt_not_sampled(server: FakeServer) -> None:
    backend = await backend_for(server, options=ReplyOptions())
    vocabulary = backend.planner.vocabulary
    opener = vocabulary.tokenize("<code>")[0]
    server.replies.extend([decision((opener, 0.9)), streamed("='"), streamed("Oslo"), streamed(">"), streamed()])
    request = LLMRequest(items=[Message("user", "Get the weather in Oslo.")], tools=[WEATHER])
    events = await collect(backend.stream(request))
    await backend.aclose()
    assert [(c.name, c.arguments) for c in events if isinstance(c, ToolCall)] == [("get_weather", {"city": "Oslo"})]
    first, named, valued, closed, ended = completions(server)
    assert all(run["n_predict"] == 1 for run in (named, valued, closed, ended))  # a token at a time
    # the one tool's name is forced: all of it but its last token ("='", which runs on into the value) is prompt
    assert named["prompt"] == first["prompt"] + vocabulary.tokenize("<code>get_weather(city")
    assert Recogniser(named["grammar"]).admits("='Oslo')</code>")  # the grammar of the rest, from there
    assert not Recogniser(named["grammar"]).admits("get_weather(city='Oslo')</code>")
    assert valued["prompt"] == named["prompt"] + vocabulary.tokenize("='")
    # after the value, "')</code>" is forced: all of it but ">" is jumped over, and the model writes ">" (or ">\n")
    assert closed["prompt"] == first["prompt"] + vocabulary.tokenize("<code>get_weather(city='Oslo')</code")
    assert Recogniser(closed["grammar"]).admits(">")
    assert Recogniser(closed["grammar"]).admits(">\n<code>get_weather(city='Oslo')</code>")
    jumped = len(vocabulary.tokenize("get_weather(city")) + len(vocabulary.tokenize("')</code"))
    assert events[-2] == Usage(len(first["prompt"]), jumped + 3, 0)


async def test_a_token_that_ends_no_character_is_asked_again_with_room_for_the_character(server: FakeServer) -> None:
    backend = await backend_for(server, options=ReplyOptions())
    opener = backend.planner.vocabulary.tokenize("<code>")[0]
    server.replies.extend([decision((opener, 0.9)), streamed("='"), streamed(stop_type="limit"),
                           streamed("上"), streamed("海"), streamed(">"), streamed()])
    request = LLMRequest(items=[Message("user", "查一下上海的天气 get_weather")], tools=[WEATHER])
    events = await collect(backend.stream(request))
    await backend.aclose()
    assert [(c.name, c.arguments) for c in events if isinstance(c, ToolCall)] == [("get_weather", {"city": "上海"})]
    runs = completions(server)[1:]
    assert [run["n_predict"] for run in runs] == [1, 1, MAX_CHARACTER_TOKENS, 1, 1, 1]
    assert runs[2]["prompt"] == runs[1]["prompt"]  # the same place asked again


async def test_an_unlikely_opener_starts_the_reply_with_the_likeliest_word(server: FakeServer) -> None:
    backend = await backend_for(server)
    opener = backend.planner.vocabulary.tokenize("<code>")[0]
    word = backend.planner.vocabulary.tokenize("Fine")[0]
    server.replies.extend([decision((opener, 0.45), (word, 0.3)), streamed(", thanks!")])
    events = await collect(backend.stream(CHAT))
    await backend.aclose()
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Fine, thanks!"
    first, second = completions(server)
    assert second["prompt"] == first["prompt"] + [word] and "grammar" not in second
    assert events[-1] == Done("stop")


async def test_words_unrelated_to_every_tool_need_a_surer_opener(server: FakeServer) -> None:
    server.replies.extend(facts())
    backend = await asyncio.to_thread(LlamaServerBackend, server.base_url, SMOLLM2,
                                      options=ReplyOptions(unrelated_threshold=UNRELATED_CALL_THRESHOLD, lift=False,
                                                           jump_forward=False))
    opener = backend.planner.vocabulary.tokenize("<code>")[0]
    word = backend.planner.vocabulary.tokenize("Fine")[0]
    server.replies.extend([decision((opener, 0.7), (word, 0.2)), streamed(", thanks!")])
    events = await collect(backend.stream(CHAT))  # 0.7 would open a call for RELATED (above)
    await backend.aclose()
    assert not [e for e in events if isinstance(e, ToolCall)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Fine, thanks!"
    first, second = completions(server)
    assert first["n_predict"] == 1 and second["prompt"] == first["prompt"] + [word]
    assert [opener, False] in second["logit_bias"]  # nor is a call opened after the first word


async def test_unrelated_words_call_a_tool_they_make_likelier_than_words_asking_nothing(server: FakeServer) -> None:
    """Below the floor, the lift decides (:mod:`voxcall.llm.local.lift`): the name's first token read after the
    user's words and after each of the content-free ones, from the same one-token answers as the opener's."""
    server.replies.extend(facts())
    backend = await asyncio.to_thread(LlamaServerBackend, server.base_url, SMOLLM2,
                                      options=ReplyOptions(unrelated_threshold=UNRELATED_CALL_THRESHOLD,
                                                           jump_forward=False))
    vocabulary = backend.planner.vocabulary
    opener, name, word = (vocabulary.tokenize(text)[0] for text in ("<code>", "get_weather", "Fine"))
    server.replies.extend([decision((opener, 0.7), (word, 0.2)), *(decision((word, 0.9), (name, 0.05))
                                                                   for _ in CONTENT_FREE),
                           decision((name, 0.9), (word, 0.05)), streamed("get_weather(city='Sam')", "</code>")])
    events = await collect(backend.stream(CHAT))
    assert [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)] == [("get_weather", {"city": "Sam"})]
    first, *free, said, call = completions(server)
    opened = vocabulary.tokenize("<code>")
    assert said["prompt"] == first["prompt"] + opened and said["n_probs"] > 0 and len(free) == len(CONTENT_FREE)
    assert all(asked["prompt"][-len(opened):] == opened and asked["prompt"] != said["prompt"] for asked in free)
    assert call["grammar"] and call["prompt"] == said["prompt"]
    server.replies.extend([decision((opener, 0.7), (word, 0.2)), streamed("get_weather(city='Sam')", "</code>")])
    again = await collect(backend.stream(CHAT))  # the same words and tools: the names' answers are kept
    await backend.aclose()
    assert [e.name for e in again if isinstance(e, ToolCall)] == ["get_weather"]
    assert len(completions(server)) == 3 + len(CONTENT_FREE) + 2  # the first reply's, then two


async def test_an_opener_written_later_closes_the_stream_and_the_call_follows_the_grammar(
        server: FakeServer) -> None:
    backend = await backend_for(server)
    opener = backend.planner.vocabulary.tokenize("<code>")[0]
    word = backend.planner.vocabulary.tokenize("Sure")[0]
    server.replies.extend([decision((word, 0.8), (opener, 0.1)), streamed(". ", "<code>", "print(", hold=True),
                           streamed("get_weather(city='Rome')</code>")])
    events = await collect(backend.stream(CHAT))
    async with asyncio.timeout(5):
        await server.disconnected.wait()  # the free-text request was dropped at the opener
    reply_so_far = backend.planner.vocabulary.tokenize("Sure. <code>")
    await backend.aclose()
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Sure. "
    assert [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)] == [("get_weather", {"city": "Rome"})]
    first, _, third = completions(server)
    assert third["grammar"] and third["prompt"] == first["prompt"] + reply_so_far


async def test_a_listed_value_closes_the_stream_and_the_next_call_gets_its_own_grammar(server: FakeServer) -> None:
    backend = await backend_for(server)
    opener = backend.planner.vocabulary.tokenize("<code>")[0]
    both = LLMRequest(items=[Message("user", "Weather in Paris and in Oslo?")], tools=[WEATHER])
    server.replies.extend([decision((opener, 0.9)), streamed("get_weather(city='Paris')", "</code>", hold=True),
                           streamed("get_weather(city='Oslo')", "</code>")])
    events = await collect(backend.stream(both))
    async with asyncio.timeout(5):
        await server.disconnected.wait()  # the first call's request was dropped when its block closed
    reply_so_far = backend.planner.vocabulary.tokenize("<code>get_weather(city='Paris')</code><code>")
    await backend.aclose()
    assert [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]
    first, _, third = completions(server)
    assert third["prompt"] == first["prompt"] + reply_so_far
    assert "'Oslo'" in third["grammar"] and "'Paris'" not in third["grammar"]  # values from the words after
    assert events[-1] == Done("tool_calls")


async def test_words_asking_another_tool_after_a_call_open_a_block_for_that_tool(server: FakeServer) -> None:
    backend = await backend_for(server)
    opener = backend.planner.vocabulary.tokenize("<code>")[0]
    both = LLMRequest(items=[Message("user", "Weather in Paris and set a timer for 5 minutes.")],
                      tools=[WEATHER, TIMER])
    server.replies.extend([decision((opener, 0.9)), streamed("get_weather(city='Paris')", "</code>", hold=True),
                           streamed("set_timer(minutes=5)", "</code>")])
    events = await collect(backend.stream(both))
    async with asyncio.timeout(5):
        await server.disconnected.wait()  # the first call's request was dropped when its block closed
    await backend.aclose()
    assert [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)] == [
        ("get_weather", {"city": "Paris"}), ("set_timer", {"minutes": 5})]
    third = completions(server)[2]
    assert "set_timer(" in third["grammar"] and "get_weather(" not in third["grammar"]  # that tool alone
    assert "'Paris'" not in third["grammar"]  # its values from the words after the first call's
    assert events[-1] == Done("tool_calls")


TIMER = Tool("set_timer", "Start a countdown timer.",
             {"type": "object", "properties": {"minutes": {"type": "number"}, "label": {"type": "string"}},
              "required": ["minutes"]})
TIMER_REQUEST = LLMRequest(items=[Message("user", "Set a timer for 5 minutes called tea.")], tools=[TIMER],
                           tool_choice="required")


async def test_a_comma_without_enough_probability_closes_the_call(server: FakeServer) -> None:
    backend = await backend_for(server)
    vocabulary = backend.planner.vocabulary
    comma, close = vocabulary.tokenize(",")[0], vocabulary.tokenize(")")[0]
    server.replies.extend([streamed("set_timer(minutes=5", ", label", "='tea')", hold=True,
                                    top={1: [(comma, 0.45), (close, 0.40)]}),
                           streamed("</code>")])
    events = await collect(backend.stream(TIMER_REQUEST))
    async with asyncio.timeout(5):
        await server.disconnected.wait()  # the call's request was dropped at the comma
    await backend.aclose()
    assert [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)] == [("set_timer", {"minutes": 5})]
    first, second = completions(server)
    assert first["n_probs"] == CANDIDATES and first["grammar"].startswith("root ::= call ")
    assert second["prompt"] == first["prompt"] + vocabulary.tokenize("set_timer(minutes=5)")
    assert second["grammar"].startswith('root ::= "</code>"')  # what follows a call's closing parenthesis


async def test_a_likely_comma_adds_the_optional_argument(server: FakeServer) -> None:
    backend = await backend_for(server)
    vocabulary = backend.planner.vocabulary
    comma, close = vocabulary.tokenize(",")[0], vocabulary.tokenize(")")[0]
    server.replies.append(streamed("set_timer(minutes=5", ", label", "='tea')", "</code>",
                                   top={1: [(comma, 0.8), (close, 0.1)]}))
    events = await collect(backend.stream(TIMER_REQUEST))
    await backend.aclose()
    assert [(e.name, e.arguments) for e in events if isinstance(e, ToolCall)] == [
        ("set_timer", {"minutes": 5, "label": "tea"})]
    assert len(completions(server)) == 1


async def test_a_spoken_reply_bans_backticks_and_a_forced_call_skips_the_decision(server: FakeServer) -> None:
    backend = await backend_for(server)
    opener = backend.planner.vocabulary.tokenize("<code>")[0]
    word = backend.planner.vocabulary.tokenize("Fine")[0]
    server.replies.extend([decision((word, 0.9), (opener, 0.05)), streamed(".")])
    await collect(backend.stream(LLMRequest(items=RELATED.items, tools=[WEATHER], voice=True)))
    server.replies.append(streamed("get_weather(city='Oslo')</code>"))
    forced = LLMRequest(items=SMALL_TALK.items, tools=[WEATHER], tool_choice="required")
    events = await collect(backend.stream(forced))
    _, spoken, call = completions(server)
    banned = {token for token, allowed in spoken["logit_bias"] if allowed is False}
    assert banned and all("`" in backend.planner.vocabulary.piece(t).decode(errors="replace") for t in banned)
    await backend.aclose()
    assert "n_probs" not in call and call["grammar"]  # opened with <code> in the prompt: no decision to make
    assert [e.name for e in events if isinstance(e, ToolCall)] == ["get_weather"]


async def test_a_reply_after_tool_results_is_relayed_without_asking_the_server(server: FakeServer) -> None:
    from voxcall.llm import FunctionCallItem, FunctionOutputItem

    backend = await backend_for(server)
    request = LLMRequest(items=[Message("user", "Weather in Oslo?"),
                                FunctionCallItem("c1", "get_weather", '{"city": "Oslo"}'),
                                FunctionOutputItem("c1", "12 degrees and rain")], tools=[WEATHER])
    events = await collect(backend.stream(request))
    await backend.aclose()
    assert "12 degrees and rain" in "".join(e.text for e in events if isinstance(e, TextDelta))
    assert completions(server) == []


async def test_warm_evaluates_the_prefix_without_generating(server: FakeServer) -> None:
    backend = await backend_for(server, json_reply({"content": ""}))
    await backend.warm(SMALL_TALK)
    prefix = backend.planner.prefix(SMALL_TALK)
    await backend.aclose()
    [warm] = completions(server)
    assert warm["n_predict"] == 0 and warm["cache_prompt"] is True
    assert warm["prompt"] == prefix


@pytest.mark.parametrize(("said", "voice", "warmed", "acknowledged"), [
    (RELATED_SAID, True, False, True),  # spoken, and the server lacks the tools' prompt
    (RELATED_SAID, False, False, False),  # written: nobody waits in silence
    (RELATED_SAID, True, True, False),  # its prompt was warmed: the reply comes at once
])
async def test_a_spoken_reply_the_server_is_not_ready_for_opens_with_an_acknowledgement(
        server: FakeServer, said: str, voice: bool, warmed: bool, acknowledged: bool) -> None:
    """The server's speed is what a warm measured (100 tokens a second here): a prompt of hundreds of tokens it
    was never sent takes seconds, more than ``acknowledge_after_ms`` (300)."""
    read = json_reply({"content": "", "timings": {"prompt_n": 400, "prompt_per_second": 100.0}})
    backend = await backend_for(server, read)
    request = LLMRequest(items=[Message("user", said)], tools=[WEATHER], voice=voice)
    await backend.warm(request if warmed else LLMRequest(items=[], instructions="Another app's instructions."))
    word = backend.planner.vocabulary.tokenize("It")[0]
    server.replies.extend([decision((word, 0.9)), streamed(" may.")])
    events = await collect(backend.stream(request))
    await backend.aclose()
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert (deltas[0] == TextDelta("Let me see. ", filler=True)) is acknowledged  # a filler: not the model's words
    texts = [e.text for e in deltas]
    assert texts[-2:] == ["It", " may."]  # the model's reply follows, whole


@pytest.mark.parametrize(("voice", "tools"), [(True, [WEATHER]), (False, [WEATHER]), (True, [])])
async def test_small_talk_the_tools_prompt_is_not_ready_for_is_answered_without_the_tools(
        server: FakeServer, voice: bool, tools: list[Tool]) -> None:
    """No phrase before it either: a session without tools (or a thinker's talker) is not told "Let me see."."""
    read = json_reply({"content": "", "timings": {"prompt_n": 400, "prompt_per_second": 100.0}})
    backend = await backend_for(server, read)
    await backend.warm(LLMRequest(items=[], instructions="Another app's instructions."))
    vocabulary = backend.planner.vocabulary
    if voice:  # no tools: nothing to decide, the reply streams
        server.replies.append(streamed("Fine", ", thanks."))
    else:
        server.replies.extend([decision((vocabulary.tokenize("Fine")[0], 0.9)), streamed(", thanks.")])
    events = await collect(backend.stream(LLMRequest(items=SMALL_TALK.items, tools=tools, voice=voice)))
    await backend.aclose()
    asked = b"".join(vocabulary.piece(t, special=True) for t in completions(server)[1]["prompt"]).decode()
    assert ("get_weather" in asked) is not voice  # spoken: without the tools; written: the reader may wait
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Fine, thanks."


@pytest.mark.parametrize(("status", "body", "code"), [
    (400, {"error": {"type": "exceed_context_size_error", "message": "secret path /x"}}, "context_length_exceeded"),
    (503, {"error": {"type": "unavailable_error", "message": "Loading model"}}, "backend_error"),
])
async def test_a_refused_request_is_an_llm_error_without_the_servers_words(server: FakeServer, status: int,
                                                                           body: dict[str, Any], code: str) -> None:
    backend = await backend_for(server, json_reply(body, status=status))
    with pytest.raises(LLMError) as raised:
        await collect(backend.stream(SMALL_TALK))
    await backend.aclose()
    assert raised.value.code == code and "secret" not in str(raised.value) and "Loading" not in str(raised.value)


async def test_a_server_with_another_models_vocabulary_is_refused(server: FakeServer) -> None:
    server.replies.extend(facts(n_vocab=32000))
    with pytest.raises(LLMError, match="32000 tokens") as raised:
        await asyncio.to_thread(LlamaServerBackend, server.base_url, SMOLLM2)
    assert raised.value.code == "unavailable"


async def test_no_server_no_backend() -> None:
    with pytest.raises(ValueError, match="base_url"):
        create_backend("llama-server")
    with pytest.raises(LLMError, match="does not answer"):
        await asyncio.to_thread(create_backend, "llama-server", base_url="http://127.0.0.1:9", timeout=2.0)
