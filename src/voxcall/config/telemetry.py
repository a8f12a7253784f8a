"""The ``telemetry:`` section: OpenTelemetry traces of the sessions (:mod:`voxcall.telemetry.tracing`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

TracingMode = Literal["auto", "on", "off"]
"""Whether the server traces: ``auto`` as the standard ``OTEL_*`` variables say (an OTLP endpoint, or
``OTEL_TRACES_EXPORTER``), ``on`` always (to the exporters those variables name, OTLP by default), ``off`` never."""


class TelemetrySettings(BaseModel):
    """The ``telemetry:`` section. Where traces go (endpoint, headers, protocol, service name) is said by the
    standard ``OTEL_*`` variables, which every collector's guide already documents; this section says whether the
    server traces and what the traces may hold."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    tracing: TracingMode = "auto"
    """``auto`` (on when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_TRACES_EXPORTER`` asks for traces), ``on`` or
    ``off``. Tracing needs the ``otel`` extra; asked for without it, the server warns and runs untraced."""
    record_content: bool = False
    """Record tool arguments and results and the turns' transcripts in the spans (they may hold personal data).
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` turns it on too."""

    @field_validator("tracing", mode="before")
    @classmethod
    def _yaml_switch(cls, value: Any) -> Any:
        """YAML reads a bare ``on`` or ``off`` as a boolean: take it as the word that was written."""
        return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value
