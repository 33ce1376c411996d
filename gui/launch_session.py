"""The session a launch starts with: the command line's settings, the remembered ones, the live options.

`launch_session(args, ...)` makes the `Session` the app's window renders (`MainWindow(session, ...)`)
from the parsed command line (`livefill.gui.app_args`); `first_settings` is its one rule, also
used by tests: what the last launch remembered goes over the command line's defaults, and the
live options (`--live`, `--base-url`, `--model`, `--structured`, `--schema`) over both.
"""

from __future__ import annotations

import argparse
from typing import Any

from livefill.gui.app_args import keeps_history
from livefill.recording.history import History
from livefill.session.app_settings import SavedSettings
from livefill.session.session import Session
from livefill.session.settings import SLICING_DEFAULT, RunSettings, base_url_setting, model_setting
from livefill.wire.keys import KeyStore

__all__ = ["first_settings", "launch_session", "live_choices"]


def live_choices(provider: str, *, live: bool, base_url: str | None, model: str | None,
                 structured: str | None, schema_name: str | None) -> dict[str, Any]:
    """The settings a launch's live options make (`--live`, `--base-url`, `--model`, ...): the
    base URL and model go to the provider's own settings (the compatible server's, Ollama's, or
    Anthropic's / OpenAI's)."""
    changes: dict[str, Any] = {"live": live} if live else {}
    if base_url:
        changes[base_url_setting(provider)] = base_url
    if model:
        changes[model_setting(provider) if live else "model"] = model
    if structured:
        changes["structured"] = structured
    if schema_name:
        changes["schema_name"] = schema_name
    return changes


def first_settings(settings: RunSettings, remembered: SavedSettings | None = None, *, live: bool = False,
                   live_base_url: str | None = None, model: str | None = None, structured: str | None = None,
                   schema_name: str | None = None) -> RunSettings:
    """`settings` with what the last launch remembered put in, then the live options on top."""
    if remembered is not None:
        settings = remembered.apply(settings)
    return settings.with_(**live_choices(settings.provider, live=live, base_url=live_base_url, model=model,
                                         structured=structured, schema_name=schema_name))


def launch_session(args: argparse.Namespace, *, base_url: str, relay_token: str | None,
                   remembered: SavedSettings | None, keys: KeyStore | None) -> Session:
    """The session of a launch's window: on the demo server at `base_url`, history in `--history`
    (else the user's data folder)."""
    settings = RunSettings(
        scenario=args.scenario, provider=args.provider, base_url=base_url, relay_token=relay_token, mode=args.mode,
        speed=args.speed, seed=args.seed, slicing=args.slicing or SLICING_DEFAULT, fault=args.fault,
        idle_timeout=args.idle_timeout, show_provisional_numbers=args.show_provisional_numbers,
    )
    settings = first_settings(settings, remembered, live=args.live, live_base_url=args.base_url, model=args.model,
                              structured=args.structured, schema_name=args.schema)
    history = (History(args.history) if args.history else History()) if keeps_history(args) else None  # not --screenshot's
    return Session(settings, history=history, keys=keys)
