"""A remote model whose context the conversation outgrew: the response fails, saying so, and the session goes on.

voxcall does not know a remote model's tokenizer and does not fit the request (the local backend does: see
tests/llm/local/test_llamacpp_context.py); the provider's refusal must reach the client as the reason of a failed
``response.done``. The provider is a real HTTP server speaking the OpenAI protocol, reached by the ``openai`` SDK.
"""

from __future__ import annotations

import pytest

from tests.harness import Harness
from tests.llm.fake_server import FakeServer, Reply, chat_sse
from voxcall.llm import OpenAIChatBackend

OPENAI_REFUSAL = (b'{"error": {"message": "This model\'s maximum context length is 8192 tokens. However, your '
                  b'messages resulted in 9000 tokens.", "type": "invalid_request_error", "param": "messages", '
                  b'"code": "context_length_exceeded"}}')
LLAMA_SERVER_REFUSAL = (b'{"error": {"code": 400, "message": "the request exceeds the available context size", '
                        b'"type": "exceed_context_size_error", "n_prompt_tokens": 9000, "n_ctx": 8192}}')


@pytest.mark.parametrize("refusal", [OPENAI_REFUSAL, LLAMA_SERVER_REFUSAL], ids=["openai", "llama-server"])
async def test_a_context_length_refusal_fails_the_response_with_that_reason(server: FakeServer,
                                                                            refusal: bytes) -> None:
    server.replies.append(Reply([refusal], status=400, content_type="application/json"))
    server.replies.append(Reply(chat_sse({"choices": [{"index": 0, "delta": {"content": "Fine."},
                                                       "finish_reason": "stop"}]})))
    backend = OpenAIChatBackend("test-model", base_url=server.base_url, max_retries=0)
    async with Harness(backend) as h:
        await h.say("A very long conversation.")
        await h.send(type="response.create")
        done = await h.wait("response.done")
        assert done["response"]["status"] == "failed"
        error = done["response"]["status_details"]["error"]
        assert error["code"] == "context_length_exceeded"
        assert error["message"] == ("backend returned HTTP 400 (context_length_exceeded): the conversation is "
                                    "longer than the model's context")
        await h.send(type="response.create")
        assert (await h.wait("response.done", 2))["response"]["status"] == "completed"
    await backend.aclose()
