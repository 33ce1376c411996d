"""Error bodies are capped in decoded bytes: a gzip bomb on a 500 or a 401 (a few hundred KB on
the wire, 200 MB inflated) costs the client at most the 64 KB error-body cap, on the httpx path,
the anthropic SDK's path and the relay client's. Real loopback sockets (127.0.0.1, port 0); the
client's memory is the tracemalloc peak of the call (printed); every wait is bounded.
"""

from __future__ import annotations

import asyncio
import zlib

import pytest

from livefill.errors import KeyRefused, ProviderHTTPError, ProviderUnavailable
from livefill.relay.client import open_relay
from livefill.wire.providers.transport import _ERROR_BODY_LIMIT, open_anthropic, open_httpx
from tests.reliability.test_client_bounds import MB, chunk, head, hostile, measured

PEAK_LIMIT = 16 * MB  # the old code inflated the 64 KB it read of the bomb to ~66 MB


@pytest.fixture(scope="module")
def bomb() -> bytes:
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b"\0" * MB
    data = b"".join(pack.compress(zeros) for _ in range(200)) + pack.flush()
    assert len(data) < 300_000  # ~200 KB on the wire, 200 MB decoded
    return data


def _serve(bomb: bytes, status: str):
    async def respond(writer: asyncio.StreamWriter) -> None:
        writer.write(head(status, "application/json", "content-encoding: gzip\r\n"))
        for start in range(0, len(bomb), 65536):
            await chunk(writer, bomb[start : start + 65536])
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    return respond


async def _httpx(url: str) -> None:
    stream = await open_httpx(url + "/v1/x", body={"model": "m"}, headers={}, expect=None, what="test")
    await stream.aclose()


async def _sdk(url: str) -> None:
    params = {"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    stream = await open_anthropic(base_url=url, api_key="sk-ant-test-0123456789", params=params, headers={})
    await stream.aclose()


async def _relay(url: str) -> None:
    async with open_relay(url, "t", {"scenario": "weather"}) as stream:
        async for _ in stream:
            pass


@pytest.mark.parametrize("status, error", [("500 Internal Server Error", ProviderUnavailable), ("401 Unauthorized", KeyRefused)])
@pytest.mark.parametrize("client", [_httpx, _sdk, _relay], ids=["httpx", "anthropic_sdk", "relay_client"])
async def test_a_gzip_bomb_error_body_is_capped_decoded(bomb, status, error, client):
    async with hostile(_serve(bomb, status)) as url, measured() as peak:
        with pytest.raises(ProviderHTTPError) as info:
            await asyncio.wait_for(client(url), 60)
    print(f"\n{client.__name__} {status[:3]}: client peak {peak[0] / MB:.1f} MB for a 200 MB bomb")
    if client is not _relay:
        assert isinstance(info.value, error)
    assert len(str(info.value)) < 600  # one line
    assert peak[0] < PEAK_LIMIT, f"peak {peak[0] / MB:.1f} MB"


async def test_a_small_gzip_error_body_is_still_read():
    """The cap counts decoded bytes and keeps what fits: the provider's message still arrives."""
    message = b'{"error": {"type": "overloaded_error", "message": "Overloaded, try later"}}'
    pack = zlib.compressobj(9, zlib.DEFLATED, 31)
    packed = pack.compress(message) + pack.flush()

    async def respond(writer: asyncio.StreamWriter) -> None:
        writer.write(head("529 Overloaded", "application/json", "content-encoding: gzip\r\n"))
        await chunk(writer, packed)
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    for client in (_httpx, _sdk):
        async with hostile(respond) as url:
            with pytest.raises(ProviderUnavailable) as info:
                await asyncio.wait_for(client(url), 60)
        assert "Overloaded, try later" in str(info.value), client.__name__
    assert _ERROR_BODY_LIMIT == 65536
