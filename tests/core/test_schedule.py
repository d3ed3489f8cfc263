"""The suite's own schedule (tests/conftest.py): xdist hands out work in collection order, so the
collection puts the longest work first and keeps each xdist group together."""

from __future__ import annotations

import pytest

from tests.conftest import PLAIN, _unit, _weight


def test_the_longest_work_is_collected_first(request: pytest.FixtureRequest) -> None:
    items = request.session.items
    units = [_unit(item) for item in items]
    unit_weight: dict[str, int] = {}
    for unit, item in zip(units, items, strict=True):  # a unit weighs what its heaviest test does
        unit_weight[unit] = min(unit_weight.get(unit, _weight(item)), _weight(item))
    weights = [unit_weight[unit] for unit in units]
    assert weights == sorted(weights)
    assert request.config.getoption("loadscopereorder") is False  # xdist keeps that order


def test_an_xdist_group_is_collected_in_one_run(request: pytest.FixtureRequest) -> None:
    units = [_unit(item) for item in request.session.items]
    runs = [unit for i, unit in enumerate(units) if i == 0 or units[i - 1] != unit]
    assert len(runs) == len(set(runs))


def test_a_plain_test_weighs_least(request: pytest.FixtureRequest) -> None:
    assert _weight(request.node) == PLAIN
