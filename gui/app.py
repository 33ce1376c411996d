"""The `livefill` console script."""

from __future__ import annotations

import sys


def main() -> int:
    from PySide6.QtWidgets import QApplication, QLabel

    app = QApplication(sys.argv)
    label = QLabel("livefill")
    label.setWindowTitle("livefill")
    label.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
