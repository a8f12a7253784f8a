"""Serving: the web app (routes, auth, admission, draining) in front of the protocol edges."""
