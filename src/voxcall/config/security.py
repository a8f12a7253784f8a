"""The settings' secrets and exposure: masking them for display, reading client key files, and whether an address
is loopback (a server beyond it needs keys)."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any

from voxcall.config.kinds import ConfigError

MASK = "********"
"""What :meth:`~voxcall.config.ServerSettings.masked` shows instead of a secret."""

_SECRET_NAME = re.compile(r"key|token|secret|pass|auth|cookie|credential", re.IGNORECASE)
"""Names of MCP ``env`` variables and ``headers`` whose values are masked."""


def mask_mcp_secrets(servers: dict[str, Any]) -> None:
    """Mask, in place, the MCP ``env`` and ``headers`` values whose names suggest a secret (``…KEY``, ``…TOKEN``,
    ``Authorization`` …) in ``servers`` (the ``mcp.servers`` section as plain data)."""
    for server in servers.values():
        for part in ("env", "headers"):
            if isinstance(server.get(part), dict):
                server[part] = {name: MASK if _SECRET_NAME.search(str(name)) else value
                                for name, value in server[part].items()}


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine: ``localhost``, 127.0.0.0/8 or ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def read_key_file(path: Path) -> set[str]:
    """The keys in ``path``: one per line, blank lines and ``#`` comment lines skipped."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"API key file {path}: cannot read it ({exc.strerror or exc})") from None
    keys = {line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")}
    if not keys:
        raise ConfigError(f"API key file {path}: holds no keys")
    return keys
