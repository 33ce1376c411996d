"""The live provider's model list, filling the Run toolbar's editable model combo.

`ModelList.refresh()` asks the live provider for its models (`livefill.wire.providers.models.list_models`)
once per provider and address; a failure is one line said (a typed model name always works).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtWidgets import QComboBox

from livefill.errors import InputError
from livefill.session.failure_reasons import describe_failure
from livefill.session.session import Session

__all__ = ["ModelList"]


class ModelList:
    """Fills `combo` with the models of `session`'s live provider; `say` puts one line in the
    status bar and the run log."""

    def __init__(self, session: Session, combo: QComboBox, say: Callable[[str], None]) -> None:
        self.session = session
        self.combo = combo
        self.say = say
        self._for: tuple[str, str] | None = None  # the (provider, base URL) asked last
        self._task: asyncio.Future[list[str]] | None = None
        self.error: str | None = None  # the last failure, or None

    @property
    def task(self) -> asyncio.Future[list[str]] | None:
        """The request in progress or last made (None: none)."""
        return self._task

    def refresh(self, *, force: bool = False) -> asyncio.Future[list[str]] | None:
        """Ask the live provider for its models (once per provider and address, unless `force`);
        a future of the names (they fill the model combo; [] when the list could not be had), or
        None when there is nothing to ask.

        The request runs in a worker thread with its own event loop, and its result comes back
        as a future's callback on the GUI thread: never a task step, which qasync cannot run
        while the window is being built inside the app's own task."""
        s = self.session.settings
        if not s.live:
            return None
        try:
            base_url, _model = self.session.live_address()
        except Exception:  # noqa: BLE001 - no address yet: the list waits, a typed name works
            return None
        target = (s.provider, base_url)
        if target == self._for and not force:
            return self._task
        self._for = target
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            return None  # no event loop (a window built outside qasync): the combo stays editable
        session = self.session
        # the key is looked up in the worker too: a system keyring may take its time
        future = loop.run_in_executor(None, _list_models, s.provider, base_url, lambda: session.live_endpoint(settings=s)[1])
        result: asyncio.Future[list[str]] = loop.create_future()

        def done(f: asyncio.Future[tuple[list[str], str | None]]) -> None:
            names, error = f.result() if not f.cancelled() else ([], None)
            if self._task is result:  # not superseded by a newer request
                if error is _NO_KEY:
                    self._for = None  # no key yet: ask again once the settings change
                else:
                    self._fill(s.provider, target, names, error)
            if not result.done():
                result.set_result(names)

        future.add_done_callback(done)
        self._task = result
        return result

    def _fill(self, provider: str, target: tuple[str, str], names: list[str], error: str | None) -> None:
        if error is not None:
            if self._for == target:
                self._for = None  # ask again next time
            self.error = error
            self.say(f"Model list: {error}")
            return
        self.error = None
        s = self.session.settings
        if not s.live or s.provider != provider:
            return
        combo = self.combo
        text = combo.lineEdit().text()
        combo.blockSignals(True)
        try:
            combo.clear()
            combo.addItems(names)
            combo.setCurrentIndex(-1)
            combo.lineEdit().setText(text)
        finally:
            combo.blockSignals(False)

    def forget(self) -> None:
        """Forget a list still being fetched (its thread ends on its own within 15 s)."""
        self._task = None


_NO_KEY = "no key yet"


def _list_models(provider: str, base_url: str, key_of: Callable[[], str]) -> tuple[list[str], str | None]:
    """The provider's model names, or ([], the one line saying why not; `_NO_KEY` when the key
    the provider needs is not there yet). Runs in a worker thread, the key lookup included."""
    from livefill.wire.providers.models import list_models  # lazy: the provider SDKs stay off the launch path (~8,900 ms at load 9)

    try:
        key = key_of()
    except InputError:
        return [], _NO_KEY
    try:
        # a plain loop of its own: under qasync's policy a new loop would be a Qt one
        with asyncio.Runner(loop_factory=asyncio.SelectorEventLoop) as runner:
            return runner.run(list_models(provider, base_url, key or None)), None
    except Exception as exc:  # noqa: BLE001 - said in one line; a typed model name still works
        return [], describe_failure(exc)[0]
