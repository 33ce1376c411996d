"""The embedded server in a process of its own: `ServerProcess` (the app's, unless LIVEFILL_DEMO_SERVER=thread).

In the app's process the demo provider's thread takes the GIL from the GUI thread for every token
it sends: with three lanes at 1,000 tokens/s that is much of the window's lag (docs/figures-placement.md).
`ServerProcess` offers the app what `EmbeddedServer` does (`bind()`, `start()`, `stop()`, `url`,
`relay_token`, `running`), served by `livefill.embedded.server_child` instead:

- `bind()` binds and listens on the loopback socket here, at once, so the URL is known before the
  window shows (as `EmbeddedServer.bind()`); `start()` hands the socket to the child, whose
  standard input stays open as long as it should serve, and waits for its "ready";
- the request log is read over HTTP (`GET /_demo/requests`, livefill.embedded.client), and a trace
  for replay handed over it (`POST /_demo/traces`, livefill.gui.recordings), as for any server not
  in this process;
- `stop()` closes the child's standard input (it stops its server: responses in progress end) and
  waits for it, then kills it if it lingers. A parent that dies closes that input too.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import threading
from livefill.errors import UsageError
from livefill.serving.sockets import base_url, listening_socket

__all__ = ["ServerProcess"]

#: How long `stop()` waits for the child to end its responses and leave before it is killed.
STOP_WAIT = 5.0


class ServerProcess:
    """The demo provider (and the app's relay) served by a child process on a loopback port."""

    def __init__(self, *, host: str = "127.0.0.1", relay_token: str | None = None, start_timeout: float = 60.0) -> None:
        self.host = host
        self.relay_token = relay_token if relay_token is not None else secrets.token_urlsafe(24)
        self.start_timeout = start_timeout
        self.url: str | None = None
        self._sock: socket.socket | None = None
        self._bound_url: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._stopped = False

    @staticmethod
    def supported() -> bool:
        """Whether a child can be handed the listening socket by its descriptor (POSIX)."""
        return os.name == "posix"

    def bind(self) -> str:
        """Bind and listen on the socket now; the base URL the child will answer on. Idempotent."""
        with self._lock:
            if self._stopped:
                raise UsageError("a server cannot be restarted after stop(); make a new one")
            if self._bound_url is None:
                self._sock = listening_socket(self.host)
                self._bound_url = base_url(self.host, self._sock.getsockname()[1])
            return self._bound_url

    def spawn(self) -> None:
        """Start the child on the bound socket without waiting for it (it imports for a while:
        the app's warm-up imports the SDKs meanwhile, then `start()` waits). Idempotent."""
        self.bind()
        with self._lock:
            if self._proc is not None or self._stopped:
                return
            sock = self._sock
            assert sock is not None
            env = dict(os.environ, LIVEFILL_RELAY_TOKEN=self.relay_token)
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "livefill.embedded.server_child", str(sock.fileno())],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(sock.fileno(),), env=env,
            )

    def start(self) -> str:
        """Start the child (unless `spawn()` did); its URL once it accepts connections."""
        url = self.bind()
        if self.url is not None:
            return url
        self.spawn()
        sock = self._sock
        if self._proc is None or sock is None:
            raise UsageError("a server cannot be restarted after stop(); make a new one")
        line = self._first_line()
        if line != "ready":
            self.stop()
            said = line.removeprefix("failed: ") if line else "it ended before it was ready"
            raise RuntimeError(f"the embedded server's process did not start: {said}")
        sock.close()  # the child listens on its copy; this one only kept the port until then
        self.url = url
        return url

    def _first_line(self) -> str:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        found: list[bytes] = []
        reader = threading.Thread(target=lambda: found.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        return found[0].decode("utf-8", "replace").strip() if found else ""

    def stop(self) -> None:
        """Stop the child (its responses in progress end) and wait for it (idempotent)."""
        with self._lock:
            self._stopped = True
            proc, self._proc = self._proc, None
            if self._sock is not None:
                self._sock.close()
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    @property
    def running(self) -> bool:
        """Whether the child is serving."""
        return self._proc is not None and self._proc.poll() is None and self.url is not None

    @property
    def pid(self) -> int | None:
        """The child's process id (None before `spawn()` and after `stop()`)."""
        return self._proc.pid if self._proc is not None else None
