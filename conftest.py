"""Loaded by every pytest run in this repository (the suite's parts and `just test`): the time
per part of the suite, printed at the end of the run (tests/part_times.py)."""

pytest_plugins = ["tests.part_times"]
