"""Client authentication helpers: where the key is found, how it is compared, which subprotocol is echoed."""

from __future__ import annotations

import hmac

import pytest

from voxcall.serving.auth import choose_subprotocol, extract_client_key, key_is_valid


@pytest.mark.parametrize("value", ["Bearer sk-1", "bearer sk-1", "BEARER sk-1", "Bearer   sk-1  ", "Bearer\tsk-1"])
def test_bearer_header_forms(value: str) -> None:
    assert extract_client_key({"Authorization": value}, []) == "sk-1"


def test_header_name_is_case_insensitive_in_a_plain_dict() -> None:
    assert extract_client_key({"authorization": "Bearer sk-1"}, []) == "sk-1"
    assert extract_client_key({"AUTHORIZATION": "Bearer sk-1"}, []) == "sk-1"


@pytest.mark.parametrize("value", ["sk-1", "Basic dXNlcjpwYXNz", "Bearer", "Bearer   ", "", "Token sk-1"])
def test_unusable_authorization_header(value: str) -> None:
    assert extract_client_key({"Authorization": value}, []) is None


def test_subprotocol_key() -> None:
    offered = ["realtime", "openai-insecure-api-key.sk-browser", "openai-beta.realtime-v1"]
    assert extract_client_key({}, offered) == "sk-browser"


def test_empty_subprotocol_key_is_skipped() -> None:
    assert extract_client_key({}, ["openai-insecure-api-key."]) is None
    assert extract_client_key({}, ["openai-insecure-api-key.", "openai-insecure-api-key.sk-2"]) == "sk-2"


def test_header_wins_over_subprotocol() -> None:
    key = extract_client_key({"Authorization": "Bearer sk-header"}, ["openai-insecure-api-key.sk-proto"])
    assert key == "sk-header"


def test_bad_header_falls_back_to_subprotocol() -> None:
    assert extract_client_key({"Authorization": "Basic x"}, ["openai-insecure-api-key.sk-proto"]) == "sk-proto"


def test_no_key_at_all() -> None:
    assert extract_client_key({"Host": "example.com"}, ["realtime"]) is None


def test_key_validity() -> None:
    keys = {"alpha", "beta-longer-key", "γάμμα"}
    assert key_is_valid("alpha", keys)
    assert key_is_valid("beta-longer-key", keys)
    assert key_is_valid("γάμμα", keys)  # non-ASCII keys compare too
    assert not key_is_valid("alph", keys)
    assert not key_is_valid("alpha ", keys)
    assert not key_is_valid("", keys)
    assert not key_is_valid(None, keys)
    assert not key_is_valid("alpha", set())


def test_every_key_is_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    """No early exit: the number of comparisons does not depend on which key (if any) matched."""
    calls: list[int] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append(1)
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counting)
    keys = {"k1", "k2", "k3", "k4"}
    for presented in ("k1", "k4", "nope"):
        calls.clear()
        key_is_valid(presented, keys)
        assert len(calls) == len(keys)


@pytest.mark.parametrize(
    ("offered", "chosen"),
    [
        (["realtime"], "realtime"),
        (["openai-insecure-api-key.sk", "realtime", "openai-beta.realtime-v1"], "realtime"),
        (["openai-insecure-api-key.sk"], None),  # the key subprotocol is never echoed
        (["openai-beta.realtime-v1"], None),
        ([], None),
    ],
)
def test_choose_subprotocol(offered: list[str], chosen: str | None) -> None:
    assert choose_subprotocol(offered) == chosen


def test_origin_rules() -> None:
    from voxcall.serving.auth import origin_allowed

    assert origin_allowed(None, "127.0.0.1:8765", [])  # not a browser
    assert origin_allowed("http://127.0.0.1:8765", "127.0.0.1:8765", [])  # the server's own page
    assert not origin_allowed("https://evil.example", "127.0.0.1:8765", [])
    assert not origin_allowed("null", "127.0.0.1:8765", [])  # a sandboxed frame or a file
    assert not origin_allowed("http://127.0.0.1:9999", "127.0.0.1:8765", [])  # another local page
    assert origin_allowed("https://App.Example/", "127.0.0.1:8765", ["https://app.example"])
    assert origin_allowed("https://anything.example", "127.0.0.1:8765", ["*"])
