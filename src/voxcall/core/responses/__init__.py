"""Responses: one response's run, the lifecycle of visible and hidden ones, speculation, speech and timing."""
