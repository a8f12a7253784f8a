"""``python -m voxcall.llm.local.serve``: llama.cpp's server for scale-out, from the prebuilt ``xllamacpp`` wheel.

The same server the in-process backend runs (:class:`~voxcall.llm.local.embedded.EmbeddedServer`), given a TCP
address: several voxcall replicas point ``--llm llama-server --base-url`` at it and share its ``--parallel``
slots (continuous batching) and its prompt cache. Nothing is compiled: it replaces a ``llama-server`` built from
source, and speaks the same HTTP API (``/completion``, ``/props``, ``/v1/models``, ``/health``, ``/metrics``).

Security: it listens on loopback unless ``--host`` says otherwise, and refuses an address beyond loopback without
an API key (``--api-key`` or ``VOXCALL_LLAMA_API_KEY``), which every request must then carry.

It runs until SIGTERM or SIGINT (Ctrl-C), printing one line when it is ready: ``llama.cpp serving MODEL at URL``.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import sys
import threading
from pathlib import Path

from voxcall.llm import catalog
from voxcall.llm.local.embedded import EmbeddedServer, EmbeddedServerError, ServerOptions

API_KEY_VARIABLE = "VOXCALL_LLAMA_API_KEY"
DEFAULTS = ServerOptions()


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``localhost`` counts)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (see ``--help``)."""
    parser = argparse.ArgumentParser(prog="python -m voxcall.llm.local.serve",
                                     description="llama.cpp's server (prebuilt), for voxcall replicas to share.")
    parser.add_argument("--model", default=None,
                        help=f"a catalog name ({', '.join(catalog.CATALOG)}), hf:OWNER/REPO/FILE or a GGUF path; "
                             f"default: {catalog.DEFAULT_MODEL}")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback)")
    parser.add_argument("--port", type=int, default=8080, help="TCP port (default: 8080; 0: any free port)")
    parser.add_argument("--parallel", type=int, default=4, help="slots: replies generated at once (default: 4)")
    parser.add_argument("--ctx-size", type=int, default=DEFAULTS.n_ctx,
                        help=f"context tokens of each slot (default: {DEFAULTS.n_ctx})")
    parser.add_argument("--threads", type=int, default=DEFAULTS.threads,
                        help=f"threads evaluating prompts (default: {DEFAULTS.threads})")
    parser.add_argument("--decode-threads", type=int, default=DEFAULTS.decode_threads,
                        help=f"threads generating (default: {DEFAULTS.decode_threads})")
    parser.add_argument("--cache-mib", type=int, default=DEFAULTS.cache_mib,
                        help=f"host memory for prompts a slot dropped, in MiB (default: {DEFAULTS.cache_mib})")
    parser.add_argument("--api-key", default=os.environ.get(API_KEY_VARIABLE),
                        help=f"the key requests must carry (default: ${API_KEY_VARIABLE}; required beyond loopback)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Serve until SIGTERM or SIGINT; the exit status is 0, or 2 for a command line or model that cannot serve."""
    args = parse(argv)
    if not is_loopback(args.host) and not args.api_key:
        print(f"refusing to listen on {args.host} without an API key (--api-key or ${API_KEY_VARIABLE})",
              file=sys.stderr)
        return 2
    try:
        path: Path = catalog.resolve(args.model)
        options = ServerOptions(n_ctx=args.ctx_size, slots=args.parallel, threads=args.threads,
                                decode_threads=args.decode_threads, cache_mib=args.cache_mib)
        server = EmbeddedServer(path, options, host=args.host, port=args.port, api_key=args.api_key)
    except (catalog.ModelError, EmbeddedServerError) as exc:
        print(f"cannot serve: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(f"llama.cpp serving {path.name} at {server.address}", flush=True)
    try:
        stop.wait()
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
