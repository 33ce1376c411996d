"""docs/relay-v1.md stays true: its lists of record types and their fields, terminal codes,
request keys, demo knobs and limits are checked against the code that speaks the protocol."""

from __future__ import annotations

import re
import typing

from tests.conftest import REPO

DOC = REPO / "docs" / "relay-v1.md"


def _table_after(text: str, marker: str) -> list[list[str]]:
    """The rows (cells, stripped) of the first Markdown table after `marker`, header and rule left out."""
    start = text.index(marker)
    rows: list[list[str]] = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif rows:
            break
    return rows[2:]


def _names(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def _record_models() -> dict[str, type]:
    from livefill.relay.records import RelayRecord

    union = typing.get_args(RelayRecord)[0]
    return {model.model_fields["type"].default: model for model in typing.get_args(union)}


def test_the_record_table_lists_every_record_type_with_exactly_its_fields():
    rows = _table_after(DOC.read_text(encoding="utf-8"), "<!-- records:")
    documented = {_names(row[0])[0]: _names(row[1]) for row in rows}
    models = _record_models()
    assert set(documented) == set(models)
    for kind, model in models.items():
        wire_fields = [f.alias or name for name, f in model.model_fields.items() if name not in ("seq", "type")]
        assert documented[kind] == wire_fields, kind  # the same fields, in the wire's order


def test_the_terminal_types_and_codes_are_the_codes_of_the_code():
    from livefill.errors import FAILURES
    from livefill.relay.records import ERROR_CODES, TERMINAL_TYPES

    text = DOC.read_text(encoding="utf-8")
    codes = [_names(row[0])[0] for row in _table_after(text, "<!-- codes:")]
    assert sorted(codes) == sorted(ERROR_CODES) == sorted(FAILURES)
    assert TERMINAL_TYPES == {"complete", "error"}
    for kind in TERMINAL_TYPES:
        assert f"`{kind}`" in text.split("## How a run ends")[0]


def test_the_request_keys_and_demo_knobs_are_the_relays():
    from livefill.demo.relay_body import RelayDemoBody
    from livefill.relay.request import ExtractRequest

    text = DOC.read_text(encoding="utf-8")
    body_keys = [_names(row[0])[0] for row in _table_after(text, "**Body.**")]
    assert sorted(body_keys) == sorted(f.alias or name for name, f in ExtractRequest.model_fields.items())
    demo_keys = [_names(row[0])[0] for row in _table_after(text, "The `demo` object")]
    assert sorted(demo_keys) == sorted(RelayDemoBody.model_fields)


def test_the_endpoint_version_and_limits_are_the_codes():
    from livefill.wire.providers.transport import BODY_LIMIT
    from livefill.relay.settler import _DELTA_CHARS
    from livefill.relay.reader import MAX_RECORDS
    from livefill.relay.records import EXTRACT_PATH, MAX_LINE_BYTES, PROTOCOL_VERSION
    from livefill.serving.guard import DEFAULT_MAX_BODY_BYTES, GuardLimits

    text = DOC.read_text(encoding="utf-8")
    assert f"POST {EXTRACT_PATH}" in text
    assert f'"v": {PROTOCOL_VERSION}' in text and f"/relay/v{PROTOCOL_VERSION}/" in text
    assert f"{MAX_LINE_BYTES:,} bytes" in text
    assert f"{MAX_RECORDS:,} records" in text
    assert f"{_DELTA_CHARS:,} characters" in text
    assert f"{BODY_LIMIT // (1024 * 1024)} MB" in text
    assert f"{DEFAULT_MAX_BODY_BYTES // (1024 * 1024)} MB" in text
    assert f"within {GuardLimits().body_timeout:g} s" in text


def test_the_readme_and_the_code_point_at_the_spec_not_at_a_file_outside_the_repository():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "docs/relay-v1.md" in readme and "shared/design/RELAY.md" not in readme
    for path in [*(REPO / "livefill").rglob("*.py"), *(REPO / "docs").glob("*.md")]:
        assert "RELAY.md" not in path.read_text(encoding="utf-8"), path
