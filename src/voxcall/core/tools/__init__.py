"""A session's tools: the tool ledger, server tool rounds, and the server tools a session may use."""
