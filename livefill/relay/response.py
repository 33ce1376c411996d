"""The relay's streamed answer to one checked request: `RelayResponse`, an ASGI response.

Two tasks run side by side: the producer reads upstream, settles and writes records; the watcher
waits for the client to go and cancels the producer (docs/notes/relay-app.md, "The two tasks").
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import time

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from livefill.errors import ProtocolError, RunFailure, UsageError
from livefill.relay.job import Job, upstream_request
from livefill.relay.records import KEEPALIVE, KEEPALIVE_EVERY, RelayRecord, encode_record
from livefill.relay.settings import RelaySettings
from livefill.relay.settler import Settler
from livefill.relay.upstream_trace import UpstreamTrace
from livefill.serving.connection import on_disconnect
from livefill.wire.events import KeepAlive
from livefill.wire.providers import open_stream
from livefill.wire.taps import ReadWatch, tee

__all__ = ["RelayResponse"]

log = logging.getLogger("livefill.relay")

_RESPONSE_HEADERS = [
    (b"content-type", b"application/x-ndjson"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class RelayResponse(Response):
    """Streams one run's records: 200 at once, then a record per settled value, one terminal."""

    def __init__(self, job: Job, settings: RelaySettings, demo_base_url: str | None) -> None:
        self.job = job
        self.settings = settings
        self.demo_base_url = demo_base_url
        self.background = None
        self.run_id = f"run_{secrets.token_hex(6)}"
        self.timings: list[tuple[int, str, float, float, float]] | None = [] if settings.timing_log else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": _RESPONSE_HEADERS})
        producer = asyncio.ensure_future(self._produce(send))
        watcher = asyncio.ensure_future(_wait_for_disconnect(receive))
        gone = False

        def client_gone() -> None:  # heard synchronously under livefill's own protocol
            nonlocal gone
            if not producer.done():
                gone = True
                producer.cancel()

        hook = on_disconnect(scope)
        if hook is not None:
            hook.add(client_gone)
        try:
            await asyncio.wait({producer, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if hook is not None:
                hook.discard(client_gone)
            if producer.done() and not gone:
                watcher.cancel()
            else:  # the client went away (or the server is stopping): cancel upstream now
                producer.cancel()
                watcher.cancel()
                log.info("relay %s: client disconnected; upstream cancelled", self.run_id)
            await asyncio.gather(producer, watcher, return_exceptions=True)
        if not producer.cancelled() and producer.exception() is None:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        self._write_timings()

    async def _produce(self, send: Send) -> None:
        job = self.job
        settler = Settler(
            job.schema.model, mode=job.mode, run_id=self.run_id, provider=job.provider,  # type: ignore[arg-type]
            schema_name=job.schema.name,
        )
        clock = ReadWatch()  # when the last upstream read arrived
        upstream = tee(clock, self.settings.upstream_tap(self.run_id) if self.settings.upstream_tap else None)
        recording = UpstreamTrace(job, self.run_id) if job.record_path else None

        written_at = time.monotonic()  # the last record or keep-alive written

        async def write(records: list[RelayRecord]) -> None:
            nonlocal written_at
            if not records:
                return
            written_at = time.monotonic()
            read_at = clock.last_read
            if recording is not None:
                recording.saw(records)
            await send({"type": "http.response.body", "body": b"".join(map(encode_record, records)), "more_body": True})
            if self.timings is not None:
                written, wall = time.monotonic(), time.time()
                self.timings.extend((r.seq, r.type, read_at, written, wall) for r in records)

        await write(settler.begin())
        try:
            env = self.settings.env if self.settings.env is not None else os.environ
            request = upstream_request(job, self.demo_base_url, env)
            if recording is not None:
                upstream = tee(upstream, recording.writer(request))
            # the client's limit when shorter: its own watchdog must not fire before this one says
            # which silence it was (keep-alives or nothing)
            limit = min(self.settings.idle_timeout, self.job.idle_timeout or self.settings.idle_timeout)
            every = min(KEEPALIVE_EVERY, limit / 4)
            async with open_stream(request, tap=upstream, idle_timeout=limit) as events:
                if recording is not None:
                    recording.begin(200, events.headers)
                async for event in events:
                    records = settler.feed(event)
                    if records:
                        await write(records)
                        if settler.done:
                            break
                    elif type(event) is not KeepAlive and time.monotonic() - written_at >= every:
                        # upstream is writing a value that has not settled (a long text): tell the
                        # client the run is alive, or its own watchdog ends it (docs/relay-v1.md)
                        written_at = time.monotonic()
                        await send({"type": "http.response.body", "body": KEEPALIVE, "more_body": True})
            await write(settler.close())
        except (RunFailure, ProtocolError) as exc:
            if recording is not None:
                recording.status = getattr(exc, "status", None)
            await write(settler.fail(exc))
        except UsageError as exc:
            await write(settler.fail("upstream_error", f"the upstream request could not be made: {exc}"))
        except Exception as exc:  # a bug: say so on the wire rather than cut the stream
            log.exception("relay %s: unexpected failure", self.run_id)
            await write(settler.fail("upstream_error", f"the relay failed: {type(exc).__name__}: {exc}"))
        except BaseException:  # cancelled: the client went away (or the server is stopping)
            if recording is not None:
                recording.end("stopped", "the client disconnected")
            raise
        finally:
            if recording is not None:
                recording.finish()

    def _write_timings(self) -> None:
        if not self.timings or not self.settings.timing_log:
            return
        lines = "".join(
            json.dumps(
                {"run": self.run_id, "seq": seq, "type": kind, "read_at": read_at, "written_at": written, "written_wall": wall}
            )
            + "\n"
            for seq, kind, read_at, written, wall in self.timings
        )
        with open(self.settings.timing_log, "a", encoding="utf-8") as fh:
            fh.write(lines)


async def _wait_for_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
