"""Ratings: OpenSkill's Plackett-Luce model over the places of each ranked table.

Pure Python (no Django). A bot has one rating per game and preset family; every table it plays
in a tournament updates it from the table's places (house seats are left out: they are never
rated). Ratings are shown as an ordinal ``mu - 3 * sigma``, a conservative estimate that grows
as a bot proves itself.

>>> new = rate_table([Skill(), Skill(), Skill()], [1, 2, 3])
>>> new[0].mu > 25 > new[2].mu
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import cache

from openskill.models import PlackettLuce

DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3.0

# Presets that only differ by a variant rated together: (game, preset) -> family.
PRESET_FAMILIES: dict[tuple[str, str], str] = {
    ("hearts", "classic-fr-sourdine"): "classic-fr",
}


def preset_family(game: str, preset: str) -> str:
    """The family a preset is rated in (``game/family``).

    >>> preset_family("hearts", "classic-fr-sourdine"), preset_family("roi", "standard")
    ('hearts/classic-fr', 'roi/standard')
    """
    return f"{game}/{PRESET_FAMILIES.get((game, preset), preset)}"


@dataclasses.dataclass(frozen=True, slots=True)
class Skill:
    """A rating: the model's mean and uncertainty."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA

    @property
    def ordinal(self) -> float:
        """The conservative rating shown in tables: mu - 3 sigma."""
        return self.mu - 3.0 * self.sigma


@cache
def _model() -> PlackettLuce:
    return PlackettLuce(mu=DEFAULT_MU, sigma=DEFAULT_SIGMA)


def rate_table(skills: Sequence[Skill], places: Sequence[int]) -> list[Skill]:
    """New ratings of the players of one table from their places (1 = best, ties share).

    A table with fewer than two rated players changes nothing.

    >>> a, b = rate_table([Skill(), Skill()], [1, 1])
    >>> round(a.mu, 6) == round(b.mu, 6)
    True
    """
    if len(skills) != len(places):
        raise ValueError("one place per rated player")
    if len(skills) < 2:
        return list(skills)
    model = _model()
    teams = [[model.rating(mu=s.mu, sigma=s.sigma)] for s in skills]
    rated = model.rate(teams, ranks=[float(p) for p in places])
    return [Skill(mu=team[0].mu, sigma=team[0].sigma) for team in rated]
