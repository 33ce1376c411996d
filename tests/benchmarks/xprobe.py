"""Watch another process's windows on a real X display, and ask whether its GUI thread answers.

How this works
--------------
`XProbe` opens its own connection to the X server (libX11 through ctypes: nothing to install) and
selects SubstructureNotify on the root window, so it hears every top-level window being mapped,
unmapped or destroyed, with no help from the application. `wait_mapped(pid)` returns the first
top-level window whose `_NET_WM_PID` is `pid`, at the moment the X server mapped it.

Whether the application *answers* is asked the way a window manager asks: a `_NET_WM_PING`
client message sent to its window. Qt answers it on the GUI thread, in its ordinary event
processing (it sends the message back to the root window, with the StructureNotify mask the
probe also selects there), so the time from sending a ping to
hearing its echo is how long the GUI thread kept the user waiting at that moment. `Pinger` sends
one every `interval` seconds and records (sent, answered) per ping: the longest gap is the
longest stall. `close(window)` sends WM_DELETE_WINDOW, as a window manager's close button does.

Clock: `time.monotonic()` (CLOCK_MONOTONIC, the same in every process of the machine).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import select
import time
from dataclasses import dataclass, field

_SUBSTRUCTURE_NOTIFY = 1 << 19
_STRUCTURE_NOTIFY = 1 << 17  # Qt sends its ping echo to the root with this mask (and SubstructureRedirect)
_MAP_NOTIFY, _UNMAP_NOTIFY, _DESTROY_NOTIFY, _CLIENT_MESSAGE = 19, 18, 17, 33
_XA_CARDINAL = 6


class _ClientData(ctypes.Union):
    _fields_ = [("b", ctypes.c_char * 20), ("s", ctypes.c_short * 10), ("l", ctypes.c_long * 5)]


class _ClientMessage(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", ctypes.c_ulong),
        ("message_type", ctypes.c_ulong),
        ("format", ctypes.c_int),
        ("data", _ClientData),
    ]


class _MapEvent(ctypes.Structure):  # also the shape of UnmapNotify / DestroyNotify up to `window`
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("event", ctypes.c_ulong),
        ("window", ctypes.c_ulong),
        ("override_redirect", ctypes.c_int),
    ]


class _XEvent(ctypes.Union):
    _fields_ = [("type", ctypes.c_int), ("map", _MapEvent), ("client", _ClientMessage), ("pad", ctypes.c_long * 24)]


@dataclass
class Pinger:
    """Pings sent to one window: `sent[i]` and `answered[i]` (monotonic seconds, None: no echo yet)."""

    window: int
    interval: float
    sent: list[float] = field(default_factory=list)
    answered: list[float | None] = field(default_factory=list)

    def lags(self, since: float = 0.0, until: float = float("inf")) -> list[float]:
        """Seconds each ping sent in [since, until) waited for its echo (unanswered: up to now)."""
        now = time.monotonic()
        return [(a if a is not None else now) - s for s, a in zip(self.sent, self.answered) if since <= s < until]

    def first_answer(self) -> float | None:
        return next((a for a in self.answered if a is not None), None)


class XProbe:
    """One connection to the X server in $DISPLAY (see the module docstring)."""

    def __init__(self) -> None:
        self.x = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
        self.x.XOpenDisplay.restype = ctypes.c_void_p
        self.x.XOpenDisplay.argtypes = [ctypes.c_char_p]
        self.x.XDefaultRootWindow.restype = ctypes.c_ulong
        self.x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
        self.x.XInternAtom.restype = ctypes.c_ulong
        self.x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self.x.XSelectInput.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_long]
        self.x.XPending.argtypes = [ctypes.c_void_p]
        self.x.XNextEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.x.XFlush.argtypes = [ctypes.c_void_p]
        self.x.XConnectionNumber.argtypes = [ctypes.c_void_p]
        self.x.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
        self.x.XGetWindowProperty.argtypes = [
            ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_long, ctypes.c_long, ctypes.c_int,
            ctypes.c_ulong, ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.c_int),
            ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.c_void_p),
        ]
        self.x.XFree.argtypes = [ctypes.c_void_p]
        self.x.XCloseDisplay.argtypes = [ctypes.c_void_p]
        self.dpy = None
        for _ in range(20):  # a busy X server may refuse a connection for a moment
            self.dpy = self.x.XOpenDisplay(None)
            if self.dpy:
                break
            time.sleep(0.25)
        if not self.dpy:
            raise RuntimeError("cannot open the X display in $DISPLAY")
        self.root = self.x.XDefaultRootWindow(self.dpy)
        self.fd = self.x.XConnectionNumber(self.dpy)
        self.atoms = {n: self.x.XInternAtom(self.dpy, n.encode(), 0)
                      for n in ("WM_PROTOCOLS", "_NET_WM_PING", "WM_DELETE_WINDOW", "_NET_WM_PID")}
        self.x.XSelectInput(self.dpy, self.root, _SUBSTRUCTURE_NOTIFY | _STRUCTURE_NOTIFY)
        self.x.XFlush(self.dpy)
        self.mapped: list[tuple[float, int]] = []  # (when, window) of every MapNotify heard
        self.gone: dict[int, float] = {}  # window -> when it was unmapped / destroyed
        self.pinger: Pinger | None = None
        self._counter = 0

    def close(self) -> None:
        if self.dpy:
            self.x.XCloseDisplay(self.dpy)
            self.dpy = None

    # -- events ---------------------------------------------------------------------------------

    def pump(self, timeout: float) -> None:
        """Read every X event that arrives within `timeout` seconds (at least the pending ones)."""
        deadline = time.monotonic() + timeout
        while True:
            while self.x.XPending(self.dpy):
                ev = _XEvent()
                self.x.XNextEvent(self.dpy, ctypes.byref(ev))
                self._on_event(ev, time.monotonic())
            left = deadline - time.monotonic()
            if left <= 0:
                return
            select.select([self.fd], [], [], left)

    def _on_event(self, ev: _XEvent, now: float) -> None:
        if ev.type == _MAP_NOTIFY and not ev.map.override_redirect:
            self.mapped.append((now, ev.map.window))
        elif ev.type in (_UNMAP_NOTIFY, _DESTROY_NOTIFY):
            self.gone.setdefault(ev.map.window, now)
        elif ev.type == _CLIENT_MESSAGE and ev.client.window == self.root:
            if ev.client.data.l[0] == self.atoms["_NET_WM_PING"] and self.pinger is not None:
                i = ev.client.data.l[1] - 1
                if 0 <= i < len(self.pinger.answered) and self.pinger.answered[i] is None:
                    self.pinger.answered[i] = now

    def pid_of(self, window: int) -> int | None:
        kind, fmt = ctypes.c_ulong(), ctypes.c_int()
        n, after, data = ctypes.c_ulong(), ctypes.c_ulong(), ctypes.c_void_p()
        ok = self.x.XGetWindowProperty(self.dpy, window, self.atoms["_NET_WM_PID"], 0, 1, 0, _XA_CARDINAL,
                                       ctypes.byref(kind), ctypes.byref(fmt), ctypes.byref(n),
                                       ctypes.byref(after), ctypes.byref(data))
        if ok != 0 or not data.value or n.value < 1:
            return None
        pid = ctypes.cast(data, ctypes.POINTER(ctypes.c_ulong))[0]
        self.x.XFree(data)
        return int(pid)

    def wait_mapped(self, pid: int, timeout: float, alive=lambda: True) -> tuple[float, int] | None:  # noqa: ANN001
        """(when, window) of the first top-level window of `pid` mapped (None: not within `timeout`)."""
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline and alive():
            self.pump(0.005)
            for when, window in self.mapped[seen:]:
                if self.pid_of(window) == pid:
                    return when, window
            seen = len(self.mapped)
        return None

    # -- asking the application -----------------------------------------------------------------

    def _client_message(self, window: int, protocol: str, stamp: int) -> None:
        ev = _XEvent()
        ev.client.type = _CLIENT_MESSAGE
        ev.client.window = window
        ev.client.message_type = self.atoms["WM_PROTOCOLS"]
        ev.client.format = 32
        ev.client.data.l[0] = self.atoms[protocol]
        ev.client.data.l[1] = stamp
        ev.client.data.l[2] = window
        self.x.XSendEvent(self.dpy, window, 0, 0, ctypes.byref(ev))
        self.x.XFlush(self.dpy)

    def start_pinging(self, window: int, interval: float = 0.01) -> Pinger:
        self.pinger = Pinger(window, interval)
        return self.pinger

    def ping(self) -> None:
        """Send the next ping (its stamp is its 1-based number)."""
        assert self.pinger is not None
        self.pinger.sent.append(time.monotonic())
        self.pinger.answered.append(None)
        self._client_message(self.pinger.window, "_NET_WM_PING", len(self.pinger.sent))

    def run_pings(self, seconds: float, until=lambda: False) -> None:  # noqa: ANN001
        """Ping every `pinger.interval` for `seconds` (or until `until()`), reading the echoes."""
        assert self.pinger is not None
        end = time.monotonic() + seconds
        while time.monotonic() < end and not until():
            self.ping()
            self.pump(self.pinger.interval)

    def delete_window(self, window: int) -> None:
        """Ask the window to close (WM_DELETE_WINDOW, as a window manager's close button)."""
        self._client_message(window, "WM_DELETE_WINDOW", 0)
