"""OpenSkill Plackett-Luce ratings from table places (no database)."""

from __future__ import annotations

import pytest

from tournaments.ratings import DEFAULT_MU, DEFAULT_SIGMA, Skill, preset_family, rate_table


def test_a_new_rating_is_the_models_prior() -> None:
    skill = Skill()
    assert (skill.mu, skill.sigma) == (DEFAULT_MU, DEFAULT_SIGMA)
    assert skill.ordinal == pytest.approx(0.0)


def test_places_order_the_new_means_and_every_player_grows_surer() -> None:
    before = [Skill(), Skill(), Skill(), Skill()]
    after = rate_table(before, [1, 2, 3, 4])
    assert after[0].mu > after[1].mu > after[2].mu > after[3].mu
    assert all(a.sigma < b.sigma for a, b in zip(after, before, strict=True))


def test_shared_places_give_equal_updates_to_equal_players() -> None:
    after = rate_table([Skill()] * 4, [1, 2, 2, 4])
    assert after[1].mu == pytest.approx(after[2].mu)
    assert after[0].mu > after[1].mu > after[3].mu


def test_beating_a_stronger_player_gains_more() -> None:
    strong, weak = Skill(mu=35.0, sigma=3.0), Skill(mu=20.0, sigma=3.0)
    upset = rate_table([Skill(), strong], [1, 2])[0].mu
    expected = rate_table([Skill(), weak], [1, 2])[0].mu
    assert upset > expected > DEFAULT_MU


def test_repeated_wins_raise_the_ordinal() -> None:
    a, b = Skill(), Skill()
    for _ in range(10):
        a, b = rate_table([a, b], [1, 2])
    assert a.ordinal > 10 > b.ordinal


def test_small_tables_and_bad_input() -> None:
    assert rate_table([Skill(mu=30.0)], [1]) == [Skill(mu=30.0)]
    with pytest.raises(ValueError, match="one place per rated player"):
        rate_table([Skill(), Skill()], [1])


def test_preset_families() -> None:
    assert preset_family("hearts", "whisthub") == "hearts/whisthub"
    assert preset_family("hearts", "classic-fr-sourdine") == preset_family("hearts", "classic-fr")
