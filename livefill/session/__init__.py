"""The run and the session, without Qt: one run's lifecycle, lanes, settings and metrics."""
