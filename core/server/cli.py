"""The `livefill-server` console script."""

from __future__ import annotations

import sys


def main() -> int:
    print("livefill-server: the demo provider has not been built yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
