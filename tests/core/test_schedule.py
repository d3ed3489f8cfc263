"""The suite's own schedule (tests/conftest.py): xdist hands out work in collection order, so the
collection puts the heavy work first with the Pilot tests spread among it, keeps each xdist group
together, and ends with the other plain tests."""

from __future__ import annotations

import pytest

from tests.conftest import PLAIN, _unit, _weight, unit_kind, unit_weight


def _units(items: list[pytest.Item]) -> list[list[pytest.Item]]:
    units: list[list[pytest.Item]] = []
    for item in items:
        if units and _unit(units[-1][0]) == _unit(item):
            units[-1].append(item)
        else:
            units.append([item])
    return units


def test_the_heavy_work_comes_first_with_the_pilot_tests_spread_among_it(request: pytest.FixtureRequest) -> None:
    units = _units(request.session.items)
    kinds = [unit_kind(unit) for unit in units]
    if "heavy" not in kinds or "pilot" not in kinds:
        pytest.skip("this run collected no heavy or no Pilot tests to spread")
    last_heavy = max(i for i, kind in enumerate(kinds) if kind == "heavy")
    assert "plain" not in kinds[:last_heavy]  # the other plain tests end the run
    weights = [unit_weight(unit) for unit in units if unit_kind(unit) == "heavy"]
    assert weights == sorted(weights)  # the heaviest of the heavy first
    pilots = [i for i, kind in enumerate(kinds) if kind == "pilot"]
    assert pilots[0] < last_heavy / 4  # spread from the start of the heavy work ...
    assert any(last_heavy / 2 < i < last_heavy for i in pilots)  # ... through its end
    assert request.config.getoption("loadscopereorder") is False  # xdist keeps that order


def test_an_xdist_group_is_collected_in_one_run(request: pytest.FixtureRequest) -> None:
    units = [_unit(item) for item in request.session.items]
    runs = [unit for i, unit in enumerate(units) if i == 0 or units[i - 1] != unit]
    assert len(runs) == len(set(runs))


def test_a_plain_test_weighs_least(request: pytest.FixtureRequest) -> None:
    assert _weight(request.node) == PLAIN


def test_a_test_sharing_a_module_fixture_goes_to_its_modules_worker(request: pytest.FixtureRequest) -> None:
    """The group tests/conftest.py gives such a test is the one xdist sends by: the suffix of its id."""
    from tests.conftest import _uses_shared_fixture

    sharing = [item for item in request.session.items if _uses_shared_fixture(item)]
    assert all(item.get_closest_marker("xdist_group") for item in sharing)
    if hasattr(request.config, "workerinput") and request.config.getvalue("loadgroup"):
        assert [item.nodeid for item in sharing if "@" not in item.nodeid] == []


@pytest.fixture(scope="module")
def _shared() -> int:
    return 1


def test_this_module_has_a_test_sharing_a_module_fixture(_shared: int, request: pytest.FixtureRequest) -> None:
    """So that the test above has one to check whatever part of the suite runs."""
    assert request.node.get_closest_marker("xdist_group") is not None


def test_auto_starts_a_worker_more_than_the_cores(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``-n auto`` asks the hook: with two cores three workers, as the idle Pilot and Chromium waits
    leave room for (one core: two)."""
    hook = request.config.pluginmanager.hook.pytest_xdist_auto_num_workers
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert hook(config=request.config) == 3
    monkeypatch.setattr("os.cpu_count", lambda: None)
    assert hook(config=request.config) == 2
