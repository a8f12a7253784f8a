"""The OpenAI Realtime protocol: the app (routes, auth), sessions, conversations, responses and prefetch."""
