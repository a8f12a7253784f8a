"""Serving: what every protocol edge stands on: the process's shared parts, the session host, one gate (origin, keys,
admission, draining) for WebSockets and HTTP alike. The web app that routes to the edges is :mod:`voxcall.app`."""
