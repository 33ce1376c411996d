"""The title row of an exported timeline PNG: which run it is and which lanes it shows.

    timeline_title(session, model)  # "Timeline · invoice (replay) · lanes: naive | partial | settled · run 2026-12-01 18:43"

The run is the one the timeline drew (the session's last started run: its label, what the history
calls it), else the scenario or document the next run reads; the lanes are the timeline model's,
in its order, by the titles its rows carry.
"""

from __future__ import annotations

import time

from livefill.session.session import Session
from livefill.session.timeline import TimelineModel

__all__ = ["timeline_title"]


def timeline_title(session: Session | None, model: TimelineModel | None) -> str:
    """"Timeline · RUN · lanes: A | B · run DATE TIME" (see the module docstring)."""
    parts = ["Timeline"]
    config = session.config if session is not None else None
    if config is not None and config.label:
        parts.append(config.label)
    elif session is not None:
        settings = session.settings
        parts.append(settings.document_name or "document" if settings.document is not None else settings.scenario)
    lanes = [model.title(lane) for lane in model.lanes] if model is not None else []
    if lanes:
        parts.append(("lanes: " if len(lanes) > 1 else "lane: ") + " | ".join(lanes))
    if config is not None and session is not None and session.t0_wall:
        parts.append("run " + time.strftime("%Y-%m-%d %H:%M", time.localtime(session.t0_wall)))
    else:
        parts.append("no run yet")
    return " · ".join(parts)
