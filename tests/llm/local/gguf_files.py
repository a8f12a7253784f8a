"""Small GGUF files written by hand, for the reader's and the vocabulary's tests (no model needed)."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _value(value: Any) -> tuple[int, bytes]:
    """A metadata value as its GGUF type and bytes: bool, int (int32), float (float32), str, lists of one of them."""
    if isinstance(value, bool):
        return 7, struct.pack("<?", value)
    if isinstance(value, int):
        return 5, struct.pack("<i", value)
    if isinstance(value, float):
        return 6, struct.pack("<f", value)
    if isinstance(value, str):
        return 8, _string(value)
    items = [_value(item) for item in value]
    kind = items[0][0] if items else 5
    return 9, struct.pack("<IQ", kind, len(items)) + b"".join(data for _, data in items)


def write_gguf(path: Path, metadata: dict[str, Any], *, version: int = 3) -> Path:
    """A GGUF file at ``path`` with ``metadata`` and no tensors."""
    body = b"".join(_string(key) + struct.pack("<I", kind) + data
                    for key, (kind, data) in ((key, _value(value)) for key, value in metadata.items()))
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, 0, len(metadata)) + body)
    return path
