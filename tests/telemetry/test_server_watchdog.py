"""The server runs the loop watchdog from its start to its stop: the loop's lag is in ``/metrics``, and a loop
blocked on purpose (the test shares the server's loop) is logged with the blocking code's stack."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import httpx2 as httpx
import pytest

from tests.realtime.test_endpoint import sample
from tests.servers import Server
from voxcall.config import ServerSettings
from voxcall.llm import ScriptedBackend
from voxcall.telemetry.watchdog import STALL_THRESHOLD_S


def block_the_server_loop() -> None:
    time.sleep(STALL_THRESHOLD_S + 0.4)


async def test_the_server_reports_loop_lag_and_names_the_code_that_blocks_its_loop(
        caplog: pytest.LogCaptureFixture) -> None:
    async with Server(ServerSettings(), ScriptedBackend()) as server:
        await asyncio.sleep(0.3)  # a few heartbeats
        with caplog.at_level(logging.WARNING, logger="voxcall.telemetry.watchdog"):
            block_the_server_loop()
            await asyncio.sleep(0.2)
        async with httpx.AsyncClient() as http:
            page = (await http.get(f"http://127.0.0.1:{server.port}/metrics")).text
    assert sample(page, "voxcall_event_loop_stalls_total") == 1
    assert sample(page, "voxcall_event_loop_lag_seconds_count") >= 3
    assert sample(page, "voxcall_event_loop_lag_seconds_sum") >= STALL_THRESHOLD_S
    reports = [r.getMessage() for r in caplog.records if "event loop has been blocked" in r.getMessage()]
    assert len(reports) == 1 and "block_the_server_loop" in reports[0], reports
    assert not [t for t in threading.enumerate() if t.name == "event-loop-watchdog"]  # stopped with the app
