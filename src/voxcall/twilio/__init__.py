"""The Twilio Media Streams edge: phone calls through Twilio, each bridged into a voxcall session whose settings
come from a named agent profile (``profiles:`` in ``voxcall.yaml``). See :mod:`voxcall.twilio.endpoint`."""

from voxcall.twilio.endpoint import serve_twilio, twilio_check

__all__ = ["serve_twilio", "twilio_check"]
