"""The one error a session's command may end in: what the session cannot do, said so that a client can act on it."""

from __future__ import annotations


class SessionError(Exception):
    """A command the session cannot act on: ``code`` says what went wrong (``item_not_found``,
    ``invalid_value`` …), ``param`` names the parameter at fault where there is one (in the Realtime protocol's
    terms: ``session.tools[2].parameters``), ``kind`` is ``invalid_request_error`` or ``server_error``. An edge reports
    it in its own protocol's error; the session itself goes on."""

    def __init__(self, message: str, *, code: str = "invalid_request_error", param: str | None = None,
                 kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.param = param
        self.kind = kind


def refuse_unknown(data: dict[str, object], known: frozenset[str] | set[str], where: str, *, of: str = "") -> None:
    """Raise an ``unknown_parameter`` :class:`SessionError` for the first field of ``data`` (an object found at
    ``where``; "" for the top level) not in ``known``; ``of`` says whose parameters they are (``"server_vad"``)."""
    unknown = sorted(set(data) - known)
    if unknown:
        param = f"{where}.{unknown[0]}" if where else unknown[0]
        raise SessionError(f"unknown parameter '{param}'{f' for {of}' if of else ''}", code="unknown_parameter",
                           param=param)
