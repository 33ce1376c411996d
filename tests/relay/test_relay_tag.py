"""The relay forwards the body's `demo.tag` upstream, so a relay run finds its own request-log entry."""

from __future__ import annotations

from livefill.embedded.client import demo_request_entry
from livefill.relay.client import open_relay


async def test_demo_tag_reaches_the_upstream_request_log(demo_server) -> None:
    for tag in ("lane-a", "lane-b"):
        body = {"scenario": "weather", "provider": "openai-chat", "demo": {"tag": tag}}
        async with open_relay(demo_server.url, demo_server.relay_token, body) as records:
            async for _ in records:
                pass
    tags = [e.get("tag") for e in demo_server.requests()]
    assert tags[-2:] == ["lane-a", "lane-b"]
    entry = await demo_request_entry(demo_server.url, since=0.0, run_id="lane-a")
    assert entry is not None and entry["tag"] == "lane-a"  # not merely the newest entry


async def test_a_tag_that_is_too_long_is_refused(demo_server) -> None:
    import httpx

    body = {"scenario": "weather", "demo": {"tag": "x" * 201}}
    async with httpx.AsyncClient() as client:
        r = await client.post(
            demo_server.url + "/relay/v1/extract",
            json=body,
            headers={"authorization": f"Bearer {demo_server.relay_token}"},
        )
    assert r.status_code == 400
