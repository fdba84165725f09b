"""`just mutants`' report: the score per mode and per area (conformance/mutants/__main__.py)."""

from __future__ import annotations

from conformance.mutants.__main__ import Outcome, area_scores, not_judged, render, score


def outcome(mode: str, name: str, area: str, caught: bool, equivalent: bool = False) -> Outcome:
    return Outcome(mode, name, "a statement", equivalent, caught, [], 1, 1.0, area)


OUTCOMES = [
    outcome("no-control", "feed_a", "feed", True),
    outcome("no-control", "feed_b", "feed", False),
    outcome("no-control", "rfq_a", "rfq", True),
    outcome("no-control", "lowercase", "rfq", False, equivalent=True),  # allowed: not scored
    outcome("control", "feed_a", "feed", True),
    outcome("control", "feed_b", "feed", True),
]


def test_each_area_is_scored_per_mode_without_the_allowed_changes() -> None:
    assert area_scores(OUTCOMES, "no-control") == {"rfq": (1, 1), "feed": (1, 2)}
    assert area_scores(OUTCOMES, "control") == {"feed": (2, 2)}


def test_the_report_has_a_row_per_area_and_a_dash_where_a_mode_ran_none() -> None:
    page = render(OUTCOMES)
    assert "| area | no-control | control |" in page
    assert "| rfq | 1 of 1 | - |" in page
    assert "| feed | 1 of 2 | 2 of 2 |" in page
    assert page.index("| rfq |") < page.index("| feed |")  # the areas' own order


def test_the_maker_stream_is_scored_on_its_own_right_after_rfq() -> None:
    outcomes = [
        outcome("no-control", "v1_a", "v1", True),
        outcome("no-control", "stream_a", "maker stream", True),
        outcome("no-control", "stream_b", "maker stream", False),
        outcome("no-control", "rfq_a", "rfq", True),
    ]
    scores = area_scores(outcomes, "no-control")
    assert list(scores) == ["rfq", "maker stream", "v1"]
    assert scores["maker stream"] == (1, 2)
    assert "| maker stream | 1 of 2 |" in render(outcomes)


def test_a_mutation_no_test_of_this_mode_can_run_is_not_judged_and_said_so() -> None:
    # Without control no test of the ramp lifecycle runs (money moves only when the provider
    # is told to pay in): that mutation is neither caught nor survived there.
    unjudged = Outcome(
        "no-control", "ramp_backwards", "ramp/states", False, False, [], 0, 0.0, "ramp", False
    )
    outcomes = [*OUTCOMES, unjudged, outcome("no-control", "ramp_a", "ramp", True)]
    assert area_scores(outcomes, "no-control")["ramp"] == (1, 1)
    assert score(outcomes, "no-control") == (3, 4, 0)  # feed 1 of 2, rfq 1, ramp 1; not it
    assert not_judged(outcomes, "no-control") == "ramp_backwards"
    assert not_judged(outcomes, "control") == ""
    page = render(outcomes)
    assert "Not judged no-control (no test of their modules runs there): ramp_backwards." in page
    assert "| `ramp_backwards` | ramp/states | not judged | - |" in page


def test_with_every_test_the_report_counts_the_tests_that_caught_each_break() -> None:
    def counted(name: str, failed: list[str]) -> Outcome:
        return Outcome(
            "no-control",
            name,
            "a statement",
            False,
            bool(failed),
            failed,
            5,
            1.0,
            "feed",
            every_test=True,
        )

    outcomes = [
        counted("feed_a", ["test_feed.py::test_one", "test_feed.py::test_two"]),
        counted("feed_b", ["test_feed.py::test_one"]),
        counted("feed_c", []),  # survived: not a count of catching tests
    ]
    page = render(outcomes)
    assert "| `feed_a` | 2 |" in page
    assert "| `feed_b` | 1 |" in page
    assert "`feed_c` |" not in page.split("Tests catching each break")[1]
    assert "Caught by one test only (1 of 2): `feed_b` (test_feed.py::test_one)." in page


def test_without_every_test_the_report_counts_nothing() -> None:
    assert "Tests catching each break" not in render(OUTCOMES)
