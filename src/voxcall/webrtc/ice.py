"""Where a call's media can reach the server: the ICE configuration of its peer connections.

aiortc's ICE agent (aioice) gathers a host candidate on every interface address but loopback, and aiortc asks
Google's STUN server when no ICE servers are given. voxcall offers a client on the same host the loopback
address too (a browser and the server on one machine, the tests, a laptop with no network), and asks no STUN
server unless the ``webrtc.ice_servers`` setting names one: nothing leaves the host by default.
"""

from __future__ import annotations

from collections.abc import Callable

import aioice.ice
from aiortc import RTCConfiguration, RTCIceServer

LOOPBACK = "127.0.0.1"

_gather: Callable[[bool, bool], list[str]] = aioice.ice.get_host_addresses


def configuration(ice_servers: list[str]) -> RTCConfiguration:
    """The peer connections' configuration: ``ice_servers`` (STUN URLs), and none at all when empty."""
    return RTCConfiguration(iceServers=[RTCIceServer(urls=url) for url in ice_servers])


def offer_loopback(enabled: bool) -> None:
    """Make aioice gather a host candidate on :data:`LOOPBACK` too (``enabled``), or leave it out as aioice does.
    aioice has no option for it: its address lister is wrapped, for the whole process."""
    aioice.ice.get_host_addresses = _with_loopback if enabled else _gather  # type: ignore[assignment]


def _with_loopback(use_ipv4: bool, use_ipv6: bool) -> list[str]:
    addresses = _gather(use_ipv4, use_ipv6)
    return [*addresses, LOOPBACK] if use_ipv4 and LOOPBACK not in addresses else addresses
