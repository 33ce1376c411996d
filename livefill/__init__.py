"""livefill: stream a model's structured extraction into a form while it is still being written.

The Qt-free part is grouped by the flow of data, lowest layer first (docs/architecture.md):
`wire` (bytes to events), `extraction` (events to values and the form model), `recording`
(traces, the wire recorder, history), `serving` (loopback HTTP plumbing), `demo` (the demo
provider), `relay` (settled-field protocol), `embedded` (demo + relay in one process),
`session` (runs and the session model), `cli` (command lines). `widgets` and `gui` are Qt.
"""

__version__ = "0.1.0"
