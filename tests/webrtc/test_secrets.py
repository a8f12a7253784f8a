"""Client secrets: minted for a while, spent by one call, and every refusal says why."""

from __future__ import annotations

import pytest

from voxcall.webrtc.secrets import MAX_SECONDS, MIN_SECONDS, PREFIX, ClientSecrets, SecretRefused, is_client_secret


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_secret_opens_one_call_with_its_session_and_owner() -> None:
    clock = Clock()
    table = ClientSecrets(clock)
    secret = table.mint(60, {"instructions": "Be brief."}, owner="key-1")
    assert secret.value.startswith(PREFIX) and is_client_secret(secret.value)
    assert secret.expires_at == int(clock.now) + 60
    assert table.peek(secret.value) == secret  # peeking spends nothing
    redeemed = table.redeem(secret.value)
    assert redeemed.session == {"instructions": "Be brief."} and redeemed.owner == "key-1"
    with pytest.raises(SecretRefused, match="used already"):
        table.redeem(secret.value)


def test_an_expired_or_unknown_secret_opens_nothing() -> None:
    clock = Clock()
    table = ClientSecrets(clock)
    secret = table.mint(MIN_SECONDS, {})
    clock.now += MIN_SECONDS
    with pytest.raises(SecretRefused, match="expired"):
        table.peek(secret.value)
    with pytest.raises(SecretRefused, match="unknown"):
        table.redeem(PREFIX + "made-up")
    assert not is_client_secret("sk-a-real-key") and not is_client_secret(None)


def test_lifetimes_are_bounded() -> None:
    table = ClientSecrets()
    for seconds in (MIN_SECONDS - 1, MAX_SECONDS + 1):
        with pytest.raises(ValueError, match="between"):
            table.mint(seconds, {})


def test_the_table_is_bounded_and_forgets_expired_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("voxcall.webrtc.secrets.MAX_OUTSTANDING", 2)
    clock = Clock()
    table = ClientSecrets(clock)
    table.mint(MIN_SECONDS, {})
    table.mint(MIN_SECONDS, {})
    with pytest.raises(SecretRefused, match="outstanding"):
        table.mint(MIN_SECONDS, {})
    clock.now += MIN_SECONDS
    assert table.mint(MIN_SECONDS, {}).value.startswith(PREFIX)
