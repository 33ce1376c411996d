"""Before Qt starts on X11: are the system libraries of Qt's xcb platform plugin there?

How this works
--------------
PySide6's wheel bundles Qt but not the X11 client libraries its `xcb` platform plugin
(`plugins/platforms/libqxcb.so` and `lib/libQt6XcbQpa.so.6`) links against. When one is missing,
Qt aborts with "Could not load the Qt platform plugin "xcb"" and usually blames `libxcb-cursor0`,
whichever library is really missing. `XCB_LIBRARIES` lists every library those two files need
(their ELF NEEDED entries, less Qt's own, libc and libstdc++) with the Debian/Ubuntu package that
provides it. `xcb_problem()` runs before the QApplication is created, only when the platform will
be xcb: it asks the dynamic loader for each library by its exact soname (what Qt's loader will do
a moment later) and returns one line naming the missing ones and the `apt-get install` that adds
them; or a line saying there is no X display at all. The app prints it and exits 1.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable, Mapping

__all__ = ["XCB_LIBRARIES", "platform_is_xcb", "missing_libraries", "xcb_problem"]

XCB_LIBRARIES: tuple[tuple[str, str], ...] = (
    ("libxcb.so.1", "libxcb1"),
    ("libX11.so.6", "libx11-6"),
    ("libX11-xcb.so.1", "libx11-xcb1"),
    ("libxcb-cursor.so.0", "libxcb-cursor0"),
    ("libxcb-icccm.so.4", "libxcb-icccm4"),
    ("libxcb-image.so.0", "libxcb-image0"),
    ("libxcb-keysyms.so.1", "libxcb-keysyms1"),
    ("libxcb-randr.so.0", "libxcb-randr0"),
    ("libxcb-render.so.0", "libxcb-render0"),
    ("libxcb-render-util.so.0", "libxcb-render-util0"),
    ("libxcb-shape.so.0", "libxcb-shape0"),
    ("libxcb-shm.so.0", "libxcb-shm0"),
    ("libxcb-sync.so.1", "libxcb-sync1"),
    ("libxcb-util.so.1", "libxcb-util1"),
    ("libxcb-xfixes.so.0", "libxcb-xfixes0"),
    ("libxcb-xkb.so.1", "libxcb-xkb1"),
    ("libxkbcommon.so.0", "libxkbcommon0"),
    ("libxkbcommon-x11.so.0", "libxkbcommon-x11-0"),
    ("libGL.so.1", "libgl1"),
    ("libEGL.so.1", "libegl1"),
    ("libfontconfig.so.1", "libfontconfig1"),
    ("libdbus-1.so.3", "libdbus-1-3"),
)
"""(soname, the Debian/Ubuntu package providing it) for every system library Qt's xcb platform
plugin loads (libqxcb.so, libQt6XcbQpa.so.6), plus the three QtGui itself needs (EGL,
fontconfig, D-Bus). Found with `objdump -p ... | grep NEEDED` and `dpkg -S`."""


def platform_is_xcb(env: Mapping[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether Qt will use its xcb plugin: on Linux, `QT_QPA_PLATFORM` unset (Qt's default there,
    unless a Wayland session is running) or naming xcb first."""
    env = os.environ if env is None else env
    if (platform or sys.platform) != "linux":
        return False
    chosen = env.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return chosen.split(";")[0].split(":")[0].strip() == "xcb"
    return not (env.get("WAYLAND_DISPLAY") and env.get("XDG_SESSION_TYPE") == "wayland")


def _loadable(soname: str) -> bool:
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def missing_libraries(loadable: Callable[[str], bool] | None = None) -> list[tuple[str, str]]:
    """The (soname, package) pairs of `XCB_LIBRARIES` the dynamic loader cannot load
    (`loadable`: the lookup, by default the dynamic loader itself)."""
    loadable = loadable or _loadable
    return [(soname, package) for soname, package in XCB_LIBRARIES if not loadable(soname)]


def xcb_problem(
    env: Mapping[str, str] | None = None,
    *,
    loadable: Callable[[str], bool] | None = None,
    platform: str | None = None,
) -> str | None:
    """One line saying why Qt's xcb platform cannot start here, or None (not xcb, or all is well)."""
    env = os.environ if env is None else env
    if not platform_is_xcb(env, platform):
        return None
    missing = missing_libraries(loadable)
    if missing:
        names = ", ".join(soname for soname, _ in missing)
        packages = " ".join(dict.fromkeys(package for _, package in missing))
        return (
            f"livefill: Qt's X11 (xcb) platform needs system libraries that are missing: {names}; "
            f"install them (Debian/Ubuntu: sudo apt-get install {packages}), "
            "or run headless with QT_QPA_PLATFORM=offscreen"
        )
    if not env.get("DISPLAY"):
        return (
            "livefill: no X display to open a window on (DISPLAY is not set); run it in a desktop "
            "session, or headless with QT_QPA_PLATFORM=offscreen (--screenshot does that by itself)"
        )
    return None
