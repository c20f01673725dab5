"""Older import path of the duplicate evaluation: everything here lives in :mod:`smear_env.evaluation`
(``duplicate`` = scheduler, ``results`` = statistics, ``cli`` = ``smear-eval``)."""

from __future__ import annotations

import sys

from .evaluation import *  # noqa: F403
from .evaluation import __all__ as _all
from .evaluation.cli import build_parser, main
from .evaluation.duplicate import _PairRunner

__all__ = [*_all, "_PairRunner", "build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
