"""The local engine's raw speed: prompt evaluation and generation in tokens per second, per packaged model.

llama.cpp's server from the prebuilt ``xllamacpp`` wheel, in this process, as the local backend runs it
(:class:`~voxcall.llm.local.embedded.EmbeddedServer`): ``--threads`` evaluate prompts, ``--decode-threads`` generate
(one and two are both shown). Each figure is the median of ``--runs`` requests, as the server's own timings report
them:

- prompt: a 421-token chat prompt evaluated from nothing (``cache_prompt`` off), one token generated;
- generation: 64 tokens after that prompt (end of turn ignored), greedy.

    python benchmarks/bench_engine.py [--models smollm2-135m,qwen2.5-coder-0.5b] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
from typing import Any

import httpx2

from voxcall.llm import catalog
from voxcall.llm.local.embedded import EmbeddedServer, ServerOptions
from voxcall.llm.local.vocabulary import Vocabulary

PROMPT_TOKENS = 421
GENERATED = 64


def prompt(vocabulary: Vocabulary) -> list[int]:
    """A chat prompt of :data:`PROMPT_TOKENS` tokens (the issue's figure)."""
    text = " ".join(["You are a helpful voice assistant that answers briefly and calls tools when asked."] * 40)
    rendered = vocabulary.template.render([{"role": "system", "content": text}, {"role": "user", "content": "Hi"}])
    tokens = vocabulary.tokenize(rendered, prompt_start=True)
    return tokens[:PROMPT_TOKENS - 8] + tokens[-8:]


def timings(client: httpx2.Client, body: dict[str, Any]) -> dict[str, Any]:
    answer = client.post("/completion", json=body, timeout=600)
    answer.raise_for_status()
    result: dict[str, Any] = answer.json()["timings"]
    return result


def measure(name: str, threads: int, decode_threads: int, runs: int) -> tuple[float, float]:
    """(prompt tok/s, generation tok/s) of the catalog model ``name``."""
    path = catalog.resolve(name)
    tokens = prompt(Vocabulary(path))
    server = EmbeddedServer(path, ServerOptions(n_ctx=1024, slots=1, threads=threads, decode_threads=decode_threads,
                                                batch=512, cache_mib=0))
    try:
        with httpx2.Client(base_url=server.url, transport=server.sync_transport()) as client:
            timings(client, {"prompt": tokens[:32], "n_predict": 1})  # pages in, threads up
            evaluated = [timings(client, {"prompt": tokens, "n_predict": 1, "cache_prompt": False})
                         ["prompt_per_second"] for _ in range(runs)]
            generated = [timings(client, {"prompt": tokens, "n_predict": GENERATED, "ignore_eos": True,
                                          "temperature": 0, "cache_prompt": True})["predicted_per_second"]
                         for _ in range(runs)]
    finally:
        server.close()
    return statistics.median(evaluated), statistics.median(generated)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--models", default="smollm2-135m,qwen2.5-coder-0.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; {PROMPT_TOKENS}-token prompt, "
          f"{GENERATED} tokens generated; median of {args.runs}")
    print(f"{'model':<22} {'decode threads':>14} {'prompt tok/s':>13} {'generation tok/s':>17}")
    for name in args.models.split(","):
        for decode_threads in (1, 2):
            evaluated, generated = measure(name, args.threads, decode_threads, args.runs)
            print(f"{name:<22} {decode_threads:>14} {evaluated:>13.1f} {generated:>17.1f}")
    print(f"(load average after: {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
