"""`livefill --compare-lane KEY=VALUE,...` (repeatable): the window's compare lanes from the
command line, with the keys and checks of `livefill compare --lane`; a bad lane is one line, exit 2."""

from __future__ import annotations

import pytest
from keyring.backends.null import Keyring

from livefill.gui.app_args import parse_args
from livefill.wire.keys import KeyStore

LLAMA = "http://127.0.0.1:8080/v1"


def test_compare_lanes_on_the_command_line_open_those_lanes(make_window):
    args = parse_args(["--compare-lane", f"provider=openai-chat,base_url={LLAMA}/,model=smollm2,structured=tools",
                       "--compare-lane", "provider=anthropic,fine_grained=true,mode=settled"])
    assert args.compare[0].startswith("provider=openai-chat,") and f"base_url={LLAMA}," in args.compare[0]  # one spelling
    window = make_window(compare=args.compare, keys=KeyStore(backend=Keyring(), environ={}))
    assert [lane.title for lane in window.compare_view.lanes] == [
        "openai-chat · live · smollm2 · partial", "anthropic · demo · fine-grained · default model · settled"]
    live = window.session.lane_run_settings(window.compare_view.lanes[0].name)
    assert live.live and live.structured == "tools"
    # the demo knobs are the demo lane's only: the caption does not say every lane has them
    caption = window.compare_view.caption.text()
    every, _, demo = caption.partition(" Demo lane: ")
    assert "speed" not in every and "seed" not in every, caption
    assert demo.startswith("speed 0 · seed "), caption


@pytest.mark.parametrize(("argv", "needle"), [
    (["--compare-lane", "provider=nope", "--compare-lane", "provider=ollama"], "--compare-lane: provider=nope: unknown provider"),
    (["--compare-lane", "provider=openai-chat,base_url=ftp://x", "--compare-lane", "provider=ollama"], "base_url=ftp://x:"),
    (["--compare-lane", "provider=ollama,live=true,speed=5", "--compare-lane", "provider=ollama"], "a live lane has none"),
    (["--compare-lane", "mode", "--compare-lane", "provider=ollama"], "'mode' is not KEY=VALUE"),
    (["--compare-lane", "provider=ollama,fine_grained=true", "--compare-lane", "mode=naive"], "only provider=anthropic"),
    (["--compare-lane", "provider=ollama"], "give 2 to 5 lanes"),
    (["--compare-lane", "provider=ollama"] * 6, "give 2 to 5 lanes"),
    (["--compare-lane", "provider=ollama", "--compare-lane", "mode=naive", "--compare", "naive,partial"], "not with --compare"),
    (["--compare-lane", "provider=ollama", "--compare-lane", "mode=naive", "--compare-preset", "wires"], "not with --compare"),
])
def test_a_bad_compare_lane_is_one_line_and_exit_2(argv, needle, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and needle in err, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("livefill: error: "), err
