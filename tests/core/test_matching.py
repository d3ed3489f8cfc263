"""The one verdict: match / equivalent / mismatch under each matching policy, with its reason."""

from __future__ import annotations

import pytest

from replay_tui.matching import (
    MATCH_POLICIES,
    MatchSettings,
    MatchSpecError,
    actions_match,
    judge,
    keyword_lemmas,
)


def verdict(expected: str, predicted: str, policy: str) -> str:
    return judge(expected, predicted, policy).verdict  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", MATCH_POLICIES)
def test_the_same_action_is_a_match_under_every_policy(policy: str) -> None:
    result = judge("click[Next >]", "  click[Next  >] ", policy)  # type: ignore[arg-type]
    assert result.verdict == "match" and result.match and result.accepted and result.part is None


@pytest.mark.parametrize("policy", MATCH_POLICIES)
def test_a_different_product_noun_is_a_mismatch_under_every_policy(policy: str) -> None:
    result = judge("search[vintage beauty salon chair]", "search[vintage beauty salon table]", policy)  # type: ignore[arg-type]
    assert result.verdict == "mismatch" and not result.accepted
    assert result.part == "argument"
    assert "search keywords differ" in result.reason


def test_exact_never_tolerates_and_says_which_policy_would() -> None:
    result = judge("click[Next >]", "click[next >]", "exact")
    assert result.verdict == "mismatch"
    assert "differs only in letter case" in result.reason and "typed or tolerant" in result.reason
    plural = judge("search[salon chair]", "search[salon chairs]", "exact")
    assert plural.verdict == "mismatch" and "tolerant matching would call it equivalent" in plural.reason


@pytest.mark.parametrize(
    ("expected", "predicted", "lower", "env"),
    [
        ("click[Next >]", "click[next >]", "equivalent", "equivalent"),
        ("click[Next >]", "CLICK[next >]", "equivalent", "mismatch"),  # env keeps the kind exact
        ("click[B09C337K8S]", "click[b09c337k8s]", "equivalent", "equivalent"),
        ("search[red shoes]", "search[red shoe]", "mismatch", "mismatch"),
    ],
)
def test_lower_and_env_policies(expected: str, predicted: str, lower: str, env: str) -> None:
    assert verdict(expected, predicted, "lower") == lower
    assert verdict(expected, predicted, "env") == env


@pytest.mark.parametrize(
    ("expected", "predicted", "typed", "tolerant", "why"),
    [
        # search keywords
        (
            "search[vintage beauty salon chair]",
            "search[vintage beauty salon chairs]",
            "mismatch",
            "equivalent",
            "plural",
        ),
        ("search[vintage beauty salon chair]", "search[salon chair vintage beauty]", "mismatch", "equivalent", "order"),
        ("search[chair for the salon]", "search[salon chair]", "mismatch", "equivalent", "stop words"),
        ("search[Long Clip-In Hair Extension.]", "search[long clip in hair extension]", "equivalent", "equivalent", ""),
        ("search[women's running shoes]", "search[womens running shoe]", "mismatch", "equivalent", "plural"),
        ("search[3 pack socks]", "search[4 pack socks]", "mismatch", "mismatch", "missing 3"),
        ("search[red dress]", "search[red]", "mismatch", "mismatch", "missing dress"),
        ("search[the]", "search[a]", "mismatch", "mismatch", ""),  # nothing but stop words: never equivalent
        # buttons and options: any case
        ("click[Next >]", "click[next >]", "equivalent", "equivalent", "button"),
        ("click[Buy Now]", "click[buy  now]", "equivalent", "equivalent", "button"),
        ("click[natural black]", "click[Natural Black]", "equivalent", "equivalent", "option"),
        ("click[natural black]", "click[natural brown]", "mismatch", "mismatch", "option values differ"),
        # item ids: exact under typed, any case under tolerant (WebShop lowercases clicks)
        ("click[B09C337K8S]", "click[b09c337k8s]", "mismatch", "equivalent", "item id"),
        ("click[B09C337K8S]", "click[B09C337K8T]", "mismatch", "mismatch", "item ids differ"),
        # kinds and unparsable actions never become equivalent
        ("search[shoes]", "click[shoes]", "mismatch", "mismatch", "action kind differs"),
        ("search[shoes]", "shoes", "mismatch", "mismatch", "not of the form"),
        ("click[Next >]", "", "mismatch", "mismatch", "not of the form"),
    ],
)
def test_typed_and_tolerant_policies(expected: str, predicted: str, typed: str, tolerant: str, why: str) -> None:
    assert verdict(expected, predicted, "typed") == typed
    result = judge(expected, predicted, "tolerant")
    assert result.verdict == tolerant
    assert why in result.reason
    assert result.policy == "tolerant"


def test_equivalent_reasons_name_each_tolerated_difference() -> None:
    reason = judge(
        "search[6x9 ft digital photography background]", "search[6x9 ft backgrounds digital photography]", "tolerant"
    ).reason
    assert reason.startswith("same search keywords up to") and "singular/plural" in reason and "word order" in reason
    assert "stop words" in judge("search[oil for face]", "search[oil face]", "tolerant").reason
    assert "letter case" in judge("search[Red Shoes]", "search[red shoes]", "typed").reason


def test_keyword_lemmas_use_a_lemmatiser_not_suffix_rules() -> None:
    assert keyword_lemmas("children's batteries") == keyword_lemmas("child battery")
    assert keyword_lemmas("organic honey") != keyword_lemmas("organ honey")  # a stemmer would merge these
    assert keyword_lemmas("glasses for the kids") == keyword_lemmas("kid glass")


def test_actions_match_accepts_matches_and_equivalents() -> None:
    assert actions_match("click[next >]", "click[Next >]", "typed")
    assert not actions_match("click[next >]", "click[Next >]")
    assert not actions_match("search[table]", "search[chair]", "tolerant")


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown matching policy"):
        judge("a[b]", "a[b]", "fuzzy")  # type: ignore[arg-type]


def test_settings_pick_a_policy_per_state() -> None:
    settings = MatchSettings.parse(["Search=tolerant", "result=typed"])
    assert settings.policy_for("Search") == "tolerant"
    assert settings.policy_for("Result") == "typed"  # state names are matched without case
    assert settings.policy_for("Item") == "exact"
    assert settings.describe() == "exact, Result=typed, Search=tolerant"
    assert settings.judge("search[chair]", "search[chairs]", "Search").verdict == "equivalent"
    assert settings.judge("search[chair]", "search[chairs]", "Item").verdict == "mismatch"
    assert not settings.is_default and MatchSettings().is_default
    assert MatchSettings.parse(settings.specs()) == settings


def test_settings_a_later_spec_wins_and_a_bare_policy_sets_the_default() -> None:
    settings = MatchSettings.parse(["Search=typed", "tolerant", "Search=tolerant"])
    assert settings.default == "tolerant" and settings.by_state == ()
    assert MatchSettings.parse(["typed", "Search=exact"]).policy_for("Search") == "exact"


@pytest.mark.parametrize("spec", ["Search=fuzzy", "=typed", "loose"])
def test_settings_refuse_bad_specs(spec: str) -> None:
    with pytest.raises(MatchSpecError):
        MatchSettings.parse([spec])
