"""What an operator sees of a running server beyond ``/metrics``: the event loop's watchdog
(:mod:`voxcall.telemetry.watchdog`) and OpenTelemetry traces (:mod:`voxcall.telemetry.tracing`).

This package imports nothing else of voxcall: every part may report to it.
"""
