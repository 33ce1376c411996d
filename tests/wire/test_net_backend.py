"""livefill/wire/providers/net_backend.py: httpcore's network backend on asyncio transports, over real
loopback sockets (plain and TLS), for httpx and the SDK's httpx2."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import socket
import ssl

import anthropic
import httpcore
import httpcore2
import httpx
import pytest

from livefill.errors import NothingListening, TLSFailed
from livefill.wire.providers import net_backend
from livefill.wire.providers.transport import open_httpx
from tests.serving.raw_http import RawServer, closed_port, read_request

# --- servers ----------------------------------------------------------------------------------


def chunked_answer(pieces: list[bytes], pause: float = 0.0, keep_alive: bool = False):  # noqa: ANN201
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        connection = b"keep-alive" if keep_alive else b"close"
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\nconnection: " + connection + b"\r\n\r\n")
        for piece in pieces:
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            if pause:
                await asyncio.sleep(pause)
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    return answer


def client(**kwargs) -> httpx.AsyncClient:  # noqa: ANN003
    c = httpx.AsyncClient(**kwargs)
    assert net_backend.install(c) == 1
    return c


def uses_backend(response: httpx.Response) -> bool:
    return type(response.extensions["network_stream"]).__module__ == net_backend.__name__


# --- what it is installed in --------------------------------------------------------------------


def test_it_goes_into_httpx_and_the_sdk_clients_and_their_proxy_pools():
    plain = httpx.AsyncClient()
    assert net_backend.install(plain) == 1
    assert type(plain._transport._pool._network_backend).__module__ == net_backend.__name__
    sdk = anthropic.DefaultAsyncHttpxClient()
    assert net_backend.install(sdk) == 1
    backend = sdk._transport._pool._network_backend
    assert isinstance(backend, httpcore2.AsyncNetworkBackend) and not isinstance(backend, httpcore.AsyncNetworkBackend)
    proxied = httpx.AsyncClient(mounts={"https://": httpx.AsyncHTTPTransport(proxy="http://127.0.0.1:9")})
    assert net_backend.install(proxied) == 2  # the default pool and the proxy's


def test_a_client_it_does_not_know_keeps_its_own_backend():
    class Odd:
        _transport = object()

    assert net_backend.install(Odd()) == 0


async def test_every_provider_request_reads_through_it(monkeypatch):
    installed = []
    real = net_backend.install
    monkeypatch.setattr(net_backend, "install", lambda c: installed.append(c) or real(c))
    async with RawServer(chunked_answer([b"data: 1\n\n"])) as url:
        body = await open_httpx(url, body={}, headers={}, expect=("text/plain",), what="test")
        assert await body.read() == b"data: 1\n\n"
        await body.aclose()
    assert len(installed) == 1


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat", "openai-responses", "ollama", "relay"])
async def test_every_wire_and_the_relay_read_through_it(demo_server, monkeypatch, provider):
    # The SDK's httpx2 client (anthropic), our httpx client (the other wires) and the relay client:
    # each request's client gets the backend, and the stream it reads is whole.
    from livefill.wire.providers import open_stream
    from livefill.wire.providers.request import ExtractionRequest
    from livefill.extraction.schemas import resolve_schema
    from livefill.relay.client import open_relay
    from livefill.extraction.scenarios import get_scenario

    pools = []
    real = net_backend.install
    monkeypatch.setattr(net_backend, "install", lambda c: pools.append(real(c)))
    scenario = get_scenario("invoice")
    if provider == "relay":
        body = {"scenario": "invoice", "provider": "anthropic", "mode": "settled"}
        async with open_relay(demo_server.url, demo_server.relay_token, body) as records:
            got = [r async for r in records]
        assert got
    else:
        request = ExtractionRequest(provider=provider, base_url=demo_server.url, schema=resolve_schema(scenario.schema_name),
                                    document=scenario.document, demo_headers={"x-demo-scenario": "invoice"})
        async with open_stream(request, idle_timeout=20.0) as events:
            got = [e async for e in events]
        assert got
    assert pools and all(n >= 1 for n in pools)  # every client made got the backend in its pool


async def test_the_anyio_backend_stays_one_setting_away(monkeypatch):
    monkeypatch.setenv("LIVEFILL_NET_BACKEND", "anyio")
    installed = []
    monkeypatch.setattr(net_backend, "install", lambda c: installed.append(c))
    async with RawServer(chunked_answer([b"x"])) as url:
        body = await open_httpx(url, body={}, headers={}, expect=("text/plain",), what="test")
        assert await body.read() == b"x"
        await body.aclose()
    assert installed == []


# --- reading and writing --------------------------------------------------------------------------


async def test_each_network_read_arrives_as_sent_and_the_body_ends():
    pieces = [f"piece {i} ".encode() * (i + 1) for i in range(20)]
    async with RawServer(chunked_answer(pieces, pause=0.01)) as url, client() as c:
        async with c.stream("GET", url) as response:
            assert uses_backend(response)
            got = [chunk async for chunk in response.aiter_raw()]
    assert got == pieces  # one read per chunk the server flushed: nothing merged while we waited


async def test_a_fast_server_and_a_slow_reader_pause_the_socket_and_lose_nothing():
    big = bytes(range(256)) * 4096  # 1 MiB per chunk, 8 MiB in all

    async with RawServer(chunked_answer([big] * 8)) as url, client() as c:
        async with c.stream("GET", url) as response:
            stream = response.extensions["network_stream"]
            chunks = response.aiter_raw()
            total = len(await anext(chunks))
            await asyncio.sleep(0.3)  # the server writes on; the client stops reading
            protocol = stream._protocol
            assert protocol.reading_paused
            assert protocol.buffered <= net_backend._HIGH_WATER + (1 << 18)
            async for chunk in chunks:
                total += len(chunk)
    assert total == len(big) * 8


async def test_a_large_request_body_is_written_whole_to_a_slow_reader():
    received = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")).split(b":")[1])
        while length:
            await asyncio.sleep(0.01)
            part = await reader.read(min(length, 256 * 1024))
            received.append(len(part))
            length -= len(part)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
        await writer.drain()

    body = b"x" * (6 * 1024 * 1024)
    async with RawServer(answer) as url, client() as c:
        response = await c.post(url, content=body)
    assert response.text == "ok" and sum(received) == len(body)


async def test_a_read_that_waits_too_long_is_a_read_timeout():
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(5)

    async with RawServer(answer) as url, client(timeout=httpx.Timeout(5.0, read=0.2)) as c:
        async with c.stream("GET", url) as response:
            with pytest.raises(httpx.ReadTimeout):
                await response.aread()


async def test_a_server_that_hangs_up_mid_body_is_an_error_not_an_ending():
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await writer.drain()

    async with RawServer(answer) as url, client() as c:
        async with c.stream("GET", url) as response:
            with pytest.raises(httpx.RemoteProtocolError):
                await response.aread()


async def test_a_kept_alive_connection_the_server_closed_is_not_used_again():
    # The server closes after each answer although it said keep-alive.
    async with RawServer(chunked_answer([b"one"], keep_alive=True)) as url, client() as c:
        first = await c.get(url)
        await asyncio.sleep(0.05)  # its FIN arrives: the pooled connection is readable at EOF
        second = await c.get(url)
    assert first.text == second.text == "one"


async def test_closing_an_unfinished_response_hangs_up_at_once():
    hung_up = asyncio.Event()

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await writer.drain()
        if await reader.read(1) == b"":
            hung_up.set()

    async with RawServer(answer) as url, client() as c:
        async with c.stream("GET", url) as response:
            async for _ in response.aiter_raw():
                break
        await asyncio.wait_for(hung_up.wait(), 2)


# --- connecting -----------------------------------------------------------------------------------


async def test_a_host_whose_every_address_refuses_says_nothing_is_listening(monkeypatch):
    # Two addresses refusing in different words: asyncio keeps only "Multiple exceptions: ...".
    port = closed_port()
    loop = asyncio.get_running_loop()
    real = loop.getaddrinfo

    async def two_addresses(host, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        if host == "twice.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
                    (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port))]
        return await real(host, *args, **kwargs)

    monkeypatch.setattr(loop, "getaddrinfo", two_addresses)
    url = f"http://twice.test:{port}"
    with pytest.raises(NothingListening) as info:
        await open_httpx(url, body={}, headers={}, expect=None, what="test")
    assert info.value.message == f"start the server, or check the address: nothing is listening at {url}"



class _Connecting:
    """A loop's getaddrinfo and create_connection for `race.test`: two addresses, each attempt
    connecting when the test says (its event), with a transport that notes being closed."""

    class Transport:
        closed = False

        def close(self) -> None:
            self.closed = True

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        loop = asyncio.get_running_loop()
        self.connect = {"10.0.0.1": asyncio.Event(), "10.0.0.2": asyncio.Event()}
        self.tried: list[str] = []
        self.made: dict[str, _Connecting.Transport] = {}

        async def getaddrinfo(host, port, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)) for address in self.connect]

        async def create_connection(protocol_factory, host, port, **kwargs):  # noqa: ANN001, ANN003, ANN202
            self.tried.append(host)
            await self.connect[host].wait()
            transport = self.made[host] = _Connecting.Transport()
            return transport, protocol_factory()

        monkeypatch.setattr(loop, "getaddrinfo", getaddrinfo)
        monkeypatch.setattr(loop, "create_connection", create_connection)


async def test_a_connection_made_just_as_its_connect_is_cancelled_is_closed(monkeypatch):
    # A Stop while connecting that lands just after an attempt connected: asyncio's own
    # happy-eyeballs race (3.11) dropped that socket unclosed, and the server logged a connection
    # that never sent its request. Every attempt the caller did not get is closed.
    from livefill.wire.providers.net_backend import _connect

    fake = _Connecting(monkeypatch)
    task = asyncio.ensure_future(_connect("race.test", 80, None))
    await asyncio.sleep(0.01)
    assert fake.tried == ["10.0.0.1"]
    fake.connect["10.0.0.1"].set()  # it connects ...
    task.cancel()  # ... in the same turn as the Stop
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.01)
    assert fake.made["10.0.0.1"].closed


async def test_a_silent_first_address_lets_the_next_one_win_after_the_delay(monkeypatch):
    from livefill.wire.providers.net_backend import _HAPPY_EYEBALLS_DELAY, _connect

    fake = _Connecting(monkeypatch)
    fake.connect["10.0.0.2"].set()  # the first address never answers, the second at once
    began = asyncio.get_running_loop().time()
    transport, _protocol = await _connect("race.test", 80, None)
    assert transport is fake.made["10.0.0.2"] and fake.tried == ["10.0.0.1", "10.0.0.2"]
    assert asyncio.get_running_loop().time() - began >= _HAPPY_EYEBALLS_DELAY * 0.9
    fake.connect["10.0.0.1"].set()  # the loser connects late: closed, not kept
    await asyncio.sleep(0.01)
    assert "10.0.0.1" not in fake.made or fake.made["10.0.0.1"].closed



def test_a_link_local_address_keeps_its_interface_and_families_alternate():
    from livefill.wire.providers.net_backend import _interleaved

    infos = [
        (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("fe80::1", 80, 0, 4)),
        (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2001:db8::1", 80, 0, 0)),
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.1", 80)),
    ]
    assert _interleaved(infos) == [("fe80::1%4", 80), ("192.0.2.1", 80), ("2001:db8::1", 80)]


async def test_an_address_that_refuses_is_what_a_connect_that_fails_everywhere_says(monkeypatch):
    # The first address unreachable, the second refusing: "nothing is listening" says more.
    from livefill.wire.providers.net_backend import _connect

    loop = asyncio.get_running_loop()

    async def getaddrinfo(host, port, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2001:db8::1", port, 0, 0)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    async def create_connection(protocol_factory, host, port, **kwargs):  # noqa: ANN001, ANN003, ANN202
        if host == "2001:db8::1":
            raise OSError(113, "No route to host")
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(loop, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(loop, "create_connection", create_connection)
    with pytest.raises(ConnectionRefusedError):
        await _connect("dual.test", 80, None)


# --- TLS ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1: (cert file, key file)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "livefill test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return str(cert_file), str(key_file)


def server_context(certificate: tuple[str, str]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    return context


@pytest.mark.parametrize("flavour", ["httpx", "httpx2 (the SDK's)"])
async def test_tls_handshake_and_reads_for_both_http_stacks(certificate, flavour):
    trust = ssl.create_default_context(cafile=certificate[0])
    pieces = [b"secret %d" % i for i in range(5)]
    make = httpx.AsyncClient if flavour == "httpx" else anthropic.DefaultAsyncHttpxClient
    c = make(verify=trust)
    assert net_backend.install(c) == 1
    async with RawServer(chunked_answer(pieces, pause=0.005), tls=server_context(certificate)) as url, c:
        async with c.stream("GET", url) as response:
            stream = response.extensions["network_stream"]
            assert type(stream).__module__ == net_backend.__name__
            assert stream.get_extra_info("ssl_object") is not None
            got = [chunk async for chunk in response.aiter_raw()]
    assert b"".join(got) == b"".join(pieces)


async def test_an_untrusted_certificate_is_a_failed_tls_handshake(certificate):
    async with RawServer(chunked_answer([b"x"]), tls=server_context(certificate)) as url:
        with pytest.raises(TLSFailed) as info:
            await open_httpx(url, body={}, headers={}, expect=None, what="test")
    assert "certificate verify failed" in info.value.message
