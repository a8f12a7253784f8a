# examples/openai_sdk.py: the official openai SDK with a client tool (python examples/openai_sdk.py [BASE_URL])
import asyncio
import json
import sys

from openai import AsyncOpenAI

BASE_URL = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8765/v1"
CALCULATOR = {"type": "function", "name": "calculator", "description": "Do arithmetic.",
              "parameters": {"type": "object", "required": ["op", "a", "b"], "properties": {
                  "op": {"type": "string", "enum": ["add", "sub", "mul", "div"]},
                  "a": {"type": "number"}, "b": {"type": "number"}}}}


def calculate(op: str, a: float, b: float) -> float:
    return {"add": a + b, "sub": a - b, "mul": a * b, "div": a / b}[op]


async def main() -> None:
    client = AsyncOpenAI(base_url=BASE_URL, api_key="unused-on-loopback")
    async with client.realtime.connect(model="voxcall") as conn:
        await conn.session.update(session={"type": "realtime", "output_modalities": ["text"],
                                           "tools": [CALCULATOR]})
        await conn.conversation.item.create(item={"type": "message", "role": "user",
                                                  "content": [{"type": "input_text", "text": "what is 12 times 8"}]})
        await conn.response.create()
        async for event in conn:
            if event.type == "response.output_text.delta":
                print(event.delta, end="", flush=True)
            elif event.type == "response.function_call_arguments.done":    # a client tool: run it, send the output
                result = calculate(**json.loads(event.arguments))
                await conn.conversation.item.create(item={"type": "function_call_output",
                                                          "call_id": event.call_id, "output": str(result)})
            elif event.type == "response.done":
                if event.response.output and event.response.output[-1].type == "function_call":
                    await conn.response.create()        # ask for the follow-up (already generated: see below)
                else:
                    print()
                    break


asyncio.run(main())
