#!/usr/bin/env bash
# The wheel as a new user gets it: build it from the checkout, check what it holds, install it
# (not editable; its dependencies from the package index) into a fresh virtual environment, then
# from an empty folder, offline, run each command a user would:
#
#   livefill --screenshot out.png                          a PNG is written
#   livefill extract --scenario invoice --schema invoice   in partial and in settled mode: exit 0
#   livefill-server, livefill-relay                        start, answer on loopback, stop
#
# Offline means a network namespace of its own with only loopback up (`unshare -n`, as root, the
# way CI runs), else proxies that lead nowhere. Usage: scripts/wheel_smoke.sh [PYTHON]
# (default python3; run from anywhere). Exit status 0 when every check passed.
set -euo pipefail

PYTHON="${1:-python3}"
REPO="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d -t livefill-wheel-XXXXXX)"
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT

say() { printf 'wheel-smoke: %s\n' "$*"; }
fail() { say "FAILED: $*" >&2; exit 1; }

# -- 1. the wheel and what it holds --------------------------------------------------------------
# From a copy of the checkout: a setuptools build writes build/ and *.egg-info into its source.
say "building the wheel"
mkdir "$WORK/src"
tar -C "$REPO" --exclude=./.git --exclude=./.ci-venv --exclude=./build --exclude=./dist \
    --exclude='./*.egg-info' -cf - . | tar -C "$WORK/src" -xf -
"$PYTHON" -m pip wheel -q --no-deps -w "$WORK/dist" "$WORK/src" >"$WORK/build.log" 2>&1 \
    || { cat "$WORK/build.log" >&2; fail "pip wheel"; }
WHEEL="$(ls "$WORK"/dist/livefill-*.whl)"
say "built $(basename "$WHEEL")"
"$PYTHON" - "$WHEEL" <<'EOF' || fail "the wheel's contents"
import re, sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
stray = [n for n in names if not re.match(r"(livefill/|livefill-[^/]+\.dist-info/)", n)]
assert not stray, f"entries outside livefill/ and livefill-*.dist-info/: {stray[:20]}"
for needed in ("livefill/assets/scenarios/invoice/scenario.json", "livefill/assets/styles/livefill.qss",
               "livefill/gui/app.py", "livefill/widgets/__init__.py", "livefill/cli/extract.py"):
    assert needed in names, f"the wheel has no {needed}"
assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")], "compiled files in the wheel"
print(f"wheel-smoke: {len(names)} entries, all under livefill/ and its dist-info")
EOF

# -- 2. a clean environment ----------------------------------------------------------------------
say "installing it into a fresh virtual environment"
"$PYTHON" -m venv "$WORK/venv"
VENV_BIN="$WORK/venv/bin"
"$VENV_BIN/python" -m pip install -q --upgrade pip >"$WORK/install.log" 2>&1 || true
"$VENV_BIN/python" -m pip install -q "$WHEEL" >>"$WORK/install.log" 2>&1 \
    || { cat "$WORK/install.log" >&2; fail "pip install of the wheel"; }

# -- 3. offline, from an empty folder, with nothing of the checkout or the user ------------------
EMPTY="$WORK/empty"
mkdir -p "$EMPTY" "$WORK/home"
cd "$EMPTY"
run_env=(
    env -i
    PATH="$VENV_BIN:/usr/local/bin:/usr/bin:/bin"
    HOME="$WORK/home" XDG_DATA_HOME="$WORK/home/data" XDG_CONFIG_HOME="$WORK/home/config"
    XDG_CACHE_HOME="$WORK/home/cache" XDG_RUNTIME_DIR="$WORK/home/run"
    QT_QPA_PLATFORM=offscreen LANG=C.UTF-8
    http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 all_proxy=http://127.0.0.1:9
    HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 ALL_PROXY=http://127.0.0.1:9
    no_proxy=127.0.0.1,localhost NO_PROXY=127.0.0.1,localhost
    LIVEFILL_RELAY_TOKEN=smoke-test-token
)
mkdir -m 700 "$WORK/home/run"
if unshare -n sh -c 'ip link set lo up' >/dev/null 2>&1; then
    offline() { unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${run_env[@]}" "$@"; }
    say "offline: a network namespace with only loopback"
else
    offline() { "${run_env[@]}" "$@"; }
    say "offline: no network namespace here (not root?); proxies that lead nowhere instead"
fi
[ -z "$(ls -A "$EMPTY")" ] || fail "the folder is not empty"
offline python -c "import livefill, sys; assert '$REPO' not in livefill.__file__, livefill.__file__" \
    || fail "livefill is imported from the checkout, not the wheel"

say "livefill --screenshot out.png"
offline timeout 180 livefill --screenshot out.png >"$WORK/screenshot.log" 2>&1 \
    || { cat "$WORK/screenshot.log" >&2; fail "livefill --screenshot"; }
head -c 8 out.png | od -An -tx1 | grep -q "89 50 4e 47 0d 0a 1a 0a" || fail "out.png is not a PNG"
say "out.png: a PNG of $(wc -c <out.png) bytes"

for mode in partial settled; do
    say "livefill extract --scenario invoice --schema invoice --mode $mode"
    offline timeout 120 livefill extract --scenario invoice --schema invoice --mode "$mode" --speed 0 \
        >"$WORK/extract-$mode.out" 2>"$WORK/extract-$mode.err" \
        || { cat "$WORK/extract-$mode.err" >&2; fail "livefill extract --mode $mode"; }
    tail -n 1 "$WORK/extract-$mode.out" | grep -q '"result": *"committed"' \
        || { tail -n 3 "$WORK/extract-$mode.out" >&2; fail "livefill extract --mode $mode did not commit"; }
done

# A server on a free port: its first line is "NAME listening on URL"; probe it there, stop it with
# SIGTERM, and it exits as it should: livefill-server 0 (its --help says so); livefill-relay 0 or
# -15 (uvicorn raises SIGTERM again once it has shut down). Server and probe share one offline
# namespace (one Python process).
cat >"$WORK/serve_and_probe.py" <<'EOF'
import select, subprocess, sys, time
import httpx

method, path, expect, exits, *command = sys.argv[1:]
name = command[0]
server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
try:
    deadline, line = time.monotonic() + 60, ""
    while not line.endswith("\n") and time.monotonic() < deadline and server.poll() is None:
        if select.select([server.stdout], [], [], 0.5)[0]:
            line += server.stdout.readline()
    prefix = f"{name} listening on http://"
    assert line.startswith(prefix), f"first line {line!r}; stderr: {server.stderr.read() if server.poll() is not None else ''}"
    url = line.split(" listening on ", 1)[1].split()[0]
    answer = httpx.request(method, url + path, json={} if method == "POST" else None, timeout=10, trust_env=False)
    assert answer.status_code == int(expect), (answer.status_code, answer.text[:300])
    assert path != "/_demo/scenarios" or "invoice" in answer.text, answer.text[:300]
    print(f"wheel-smoke: {name} at {url}: {method} {path} -> {answer.status_code}")
finally:
    server.terminate()
    try:
        status = server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        sys.exit(f"{name} did not stop within 20 s of SIGTERM")
assert str(status) in exits.split(","), f"{name} exited {status} on SIGTERM: {server.stderr.read()[-2000:]}"
EOF

say "livefill-server --port 0"
offline timeout 120 python "$WORK/serve_and_probe.py" GET /_demo/scenarios 200 0 livefill-server --port 0 \
    || fail "livefill-server"
say "livefill-relay --port 0 (a POST without the bearer token: 401 from the relay)"
offline timeout 120 python "$WORK/serve_and_probe.py" POST /relay/v1/extract 401 0,-15 livefill-relay --port 0 \
    || fail "livefill-relay"

say "all checks passed"
