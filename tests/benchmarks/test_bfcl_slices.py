"""``bench_bfcl.load``: the development and held-out slices never share a request, and ``skip`` reads further into a
slice (the wider development sample) without reaching the held-out one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_bfcl import HELD_OUT_EVERY, load


def _data(folder: Path, count: int) -> Path:
    """A ``live_simple`` file of ``count`` one-turn requests, each with its ground truth."""
    (folder / "possible_answer").mkdir(parents=True)
    entries = [{"id": f"live_simple_{i}", "question": [[{"role": "user", "content": f"request {i}"}]],
                "function": [{"name": "f", "description": "F.", "parameters": {"type": "dict", "properties": {}}}]}
               for i in range(count)]
    (folder / "BFCL_v4_live_simple.json").write_text("\n".join(json.dumps(e) for e in entries))
    answers = [{"id": e["id"], "ground_truth": [{"f": {}}]} for e in entries]
    (folder / "possible_answer" / "BFCL_v4_live_simple.json").write_text("\n".join(json.dumps(a) for a in answers))
    return folder


def test_skip_reads_further_into_the_development_slice_and_never_into_the_held_out_one(tmp_path: Path) -> None:
    folder = _data(tmp_path, 40)
    development = [case.id for case in load(folder, "simple", held_out=False, n=100)]
    held_out = {case.id for case in load(folder, "simple", held_out=True, n=100)}
    assert len(development) == 32 and len(held_out) == 40 // HELD_OUT_EVERY and not held_out & set(development)
    first = [case.id for case in load(folder, "simple", held_out=False, n=10)]
    further = [case.id for case in load(folder, "simple", held_out=False, n=10, skip=10)]
    assert first == development[:10] and further == development[10:20]
