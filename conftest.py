"""pytest's collection of the package's doctests: a module of an optional extra that is
not installed (``marginkit.river`` needs river) is left out rather than failing."""

import importlib.util

collect_ignore = [] if importlib.util.find_spec("river") else ["src/marginkit/river.py"]
