"""Loaded by every pytest run in this repository (the suite's parts and `just test`): the time
per part of the suite, printed at the end of the run (tests/part_times.py), and test groups
that `--dist loadgroup` keeps on one worker (tests/xdist_groups.py)."""

pytest_plugins = ["tests.part_times", "tests.xdist_groups"]
