"""Qt's xcb platform checked before Qt starts: a missing X11 library is named in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import PySide6
import pytest

from livefill.gui import platform_check
from livefill.gui.platform_check import XCB_LIBRARIES, missing_libraries, platform_is_xcb, xcb_problem

REPO = Path(__file__).resolve().parents[2]
QT = Path(PySide6.__file__).parent / "Qt"


def _needed(path: Path) -> set[str]:
    """The ELF NEEDED entries of a shared object (pure Python: no objdump on the test machine)."""
    import struct

    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1  # 64-bit little-endian
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    dynamic = next(s for s in sections if s[1] == 6)  # SHT_DYNAMIC
    strtab = sections[dynamic[6]]  # sh_link: its string table
    names = set()
    for off in range(dynamic[4], dynamic[4] + dynamic[5], 16):
        tag, value = struct.unpack_from("<qQ", data, off)
        if tag == 0:
            break
        if tag == 1:  # DT_NEEDED
            start = strtab[4] + value
            names.add(data[start : data.index(b"\0", start)].decode())
    return names


@pytest.mark.skipif(sys.platform != "linux", reason="the xcb plugin is Linux's")
def test_the_list_covers_every_system_library_the_xcb_plugin_needs():
    needed = _needed(QT / "plugins" / "platforms" / "libqxcb.so") | _needed(QT / "lib" / "libQt6XcbQpa.so.6")
    system = {n for n in needed if not n.startswith(("libQt6", "libc.", "libm.", "libstdc++", "libgcc_s", "ld-linux"))}
    listed = {soname for soname, _ in XCB_LIBRARIES}
    # glib ships with every desktop and with Python's own dependencies; the rest must be listed
    assert system - listed <= {"libglib-2.0.so.0", "libgthread-2.0.so.0"}, system - listed
    assert {"libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libxcb-cursor.so.0"} <= listed


def test_every_library_is_found_on_this_machine():
    assert missing_libraries() == []


def test_a_missing_library_is_named_with_its_package():
    gone = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}
    line = xcb_problem({"DISPLAY": ":0"}, loadable=lambda s: s not in gone, platform="linux")
    assert line is not None and "\n" not in line
    assert "libxcb-icccm.so.4, libxcb-keysyms.so.1" in line
    assert "apt-get install libxcb-icccm4 libxcb-keysyms1" in line
    assert "libxcb-cursor" not in line  # not blamed when it is there
    assert "QT_QPA_PLATFORM=offscreen" in line


def test_no_check_when_qt_will_not_use_xcb():
    never = lambda s: False  # noqa: E731 - every library "missing"
    assert xcb_problem({"QT_QPA_PLATFORM": "offscreen"}, loadable=never, platform="linux") is None
    assert xcb_problem({"QT_QPA_PLATFORM": "wayland"}, loadable=never, platform="linux") is None
    assert xcb_problem({}, loadable=never, platform="darwin") is None
    assert not platform_is_xcb({"WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}, "linux")
    assert platform_is_xcb({"QT_QPA_PLATFORM": "xcb"}, "linux")
    assert platform_is_xcb({"QT_QPA_PLATFORM": "xcb;wayland"}, "linux")
    assert platform_is_xcb({}, "linux")


def test_no_display_is_said_in_one_line():
    line = xcb_problem({}, loadable=lambda s: True, platform="linux")
    assert line is not None and "DISPLAY is not set" in line


@pytest.mark.skipif(sys.platform != "linux", reason="the xcb plugin is Linux's")
def test_livefill_prints_the_hint_and_exits_before_starting_anything(monkeypatch, capsys):
    import livefill.embedded.client
    import livefill.gui.app

    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(platform_check, "_loadable", lambda s: s != "libxcb-keysyms.so.1")

    def no_server():
        raise AssertionError("the embedded server started before the platform was checked")

    monkeypatch.setattr(livefill.embedded.client, "embedded_server", no_server)
    assert livefill.gui.app.main(["--scenario", "invoice"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "libxcb-keysyms.so.1" in err[0] and "libxcb-keysyms1" in err[0]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="the xcb plugin is Linux's")
def test_livefill_without_a_display_says_so_instead_of_aborting(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run([sys.executable, "-m", "livefill.gui.app"], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "DISPLAY is not set" in proc.stderr, proc.stderr
