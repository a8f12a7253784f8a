"""The local backend a benchmark runs, as its command-line options choose it (shared by ``bench_local_tools``,
``bench_bfcl`` and ``bench_shared_engine``): the model in process or on ``llama-server``, with or without a thinker,
and the planner's switches, each model with what the catalog chose for it by measurement."""

from __future__ import annotations

import argparse
from dataclasses import replace

from voxcall.llm import LOCAL_KIND, catalog, local_options, talker_languages
from voxcall.llm.local import LlamaCppBackend, LlamaServerBackend, LocalBackend, ReplyOptions
from voxcall.llm.local.duet import Duet, DuetOptions
from voxcall.llm.local.plan import UNRELATED_CALL_THRESHOLD

Backend = LocalBackend | Duet
"""What a benchmark runs: one local model, or a talker with a thinker."""


def _threshold(text: str) -> float | None:
    return None if text.lower() == "none" else float(text)


def add_backend_options(parser: argparse.ArgumentParser) -> None:
    """The options that choose the backend's variant (shared with ``bench_bfcl``)."""
    parser.add_argument("--model", default=None, help="a catalog name (voxcall models) or a GGUF file (default: "
                        "the catalog's default); a catalog model in its measured tool syntax")
    parser.add_argument("--call-threshold", type=_threshold, default=ReplyOptions().call_threshold,
                        help="probability of opening a call needed to call (none: the sampled token decides)")
    parser.add_argument("--no-demos", action="store_true", help="no demonstration turns")
    parser.add_argument("--follow-up-demo", action="store_true", help="end the demonstrations with a relayed result")
    parser.add_argument("--no-grammar", action="store_true", help="no grammar-constrained decoding")
    parser.add_argument("--text", action="store_true", help="text prompts instead of voice prompts")
    parser.add_argument("--instructions", action="store_true",
                        help="requests carry the server's default instructions (as sessions that set none do)")
    parser.add_argument("--no-evidence", action="store_true", help="the call decision ignores the request's words")
    parser.add_argument("--no-relay", action="store_true", help="follow-ups are the model's, not the results")
    parser.add_argument("--no-copy", action="store_true", help="string arguments need not be the user's words")
    parser.add_argument("--unrelated", choices=("model", "on", "off"), default="model",
                        help=f"words unrelated to every tool need p(call) >= {UNRELATED_CALL_THRESHOLD:g}, and open "
                        "no call later: as the catalog chose for the model (default), always, or never")
    parser.add_argument("--no-lift", action="store_true", help="words unrelated to every tool need that floor "
                        "to call, whichever tool they lift (voxcall.llm.local.lift)")
    parser.add_argument("--no-jump", action="store_true", help="every token of a call sampled, the text its grammar "
                        "forces too (voxcall.llm.local.grammar_cursor)")
    parser.add_argument("--max-prompt-tools", type=int, default=ReplyOptions().max_prompt_tools,
                        help="tools shown to the model, the most relevant first (0: all)")
    parser.add_argument("--llama-server", metavar="URL", default=None,
                        help="run the model on llama.cpp's server at URL (started with the same --model)")
    parser.add_argument("--thinker", default=None, help="a thinker model (catalog name or GGUF): --model talks, "
                        "it decides (voxcall.llm.local.duet)")


def make_backend(args: argparse.Namespace) -> Backend:
    """The backend the options of :func:`add_backend_options` describe: in process, or on ``--llama-server``; with
    ``--thinker``, that model deciding behind ``--model``'s voice (small talk in the languages the server's talker
    answers it in)."""
    options = ReplyOptions(
        call_threshold=args.call_threshold, demos=not args.no_demos, follow_up_demo=args.follow_up_demo,
        grammar=not args.no_grammar, call_evidence=not args.no_evidence, relay=not args.no_relay,
        copy_strings=not args.no_copy, lift=not args.no_lift, jump_forward=not args.no_jump,
        max_prompt_tools=args.max_prompt_tools or None,
        acknowledge_after_ms=None)  # the model's first event is timed here, not an acknowledgement before it
    path = catalog.resolve(args.model)
    if args.llama_server:
        return LlamaServerBackend(args.llama_server, path, options=_measured(options, args.model, args.unrelated))
    talker = LlamaCppBackend(path, options=_measured(options, args.model, args.unrelated))
    if not args.thinker:
        return talker
    thinker = LlamaCppBackend(catalog.resolve(args.thinker), options=_measured(options, args.thinker, args.unrelated))
    return Duet(talker, thinker, acknowledge=lambda said: "One moment.", fallback=lambda said: "Sorry.",
                options=DuetOptions(talker_languages=talker_languages(LOCAL_KIND, args.model)))


def _measured(options: ReplyOptions, model: str | None, unrelated: str) -> ReplyOptions:
    """``options`` with what the catalog chose for ``model`` by measurement, as the server plans it: its tool
    syntax, whether it writes the strings a tool prescribes a form for, the threshold of an evident request, and
    (``unrelated`` "model") whether words unrelated to every tool need a surer call ("on", "off": that choice
    overridden)."""
    chosen = local_options(model)
    least = {"model": chosen.unrelated_threshold, "on": UNRELATED_CALL_THRESHOLD, "off": None}[unrelated]
    return replace(options, own_format=chosen.own_format, write_forms=chosen.write_forms, unrelated_threshold=least,
                   evident_threshold=chosen.evident_threshold)


def model_name(backend: object) -> str:
    """The model file(s) ``backend`` runs."""
    if isinstance(backend, Duet):
        return f"{model_name(backend.talker)} + thinker {model_name(backend.thinker)}"
    path = getattr(backend, "model_path", None)
    return str(path.name) if path is not None else str(getattr(backend, "name", "?"))


def describe(args: argparse.Namespace) -> str:
    """The variant the options of :func:`add_backend_options` choose, in words."""
    threshold = "sampled" if args.call_threshold is None else f">= {args.call_threshold:g}"
    decider = _measured(ReplyOptions(), args.thinker or args.model, args.unrelated)  # the model that calls tools
    least, forms = decider.unrelated_threshold, decider.write_forms
    if least is not None and args.call_threshold is not None and not args.no_evidence:
        threshold += (f" (>= {least:g} for words unrelated to every tool" if args.no_lift else
                      f" (words unrelated to every tool: >= {least:g}, or a tool they lift") + ")"
    return ", ".join([f"call when p(call) {threshold}",
                      *(f for f, on in (("demos", not args.no_demos), ("follow-up demo", args.follow_up_demo),
                                        ("grammar", not args.no_grammar), ("evidence", not args.no_evidence),
                                        ("relay", not args.no_relay), ("copied strings", not args.no_copy),
                                        ("forms written", not args.no_copy and forms)) if on),
                      f"tools shown: {args.max_prompt_tools or 'all'}",
                      "default instructions" if args.instructions else "no instructions",
                      f"on llama-server {args.llama_server}" if args.llama_server else "in process"])


def replace_model(args: argparse.Namespace, model: str) -> argparse.Namespace:
    """``args`` with ``--model`` set to ``model``."""
    return argparse.Namespace(**{**vars(args), "model": model})
