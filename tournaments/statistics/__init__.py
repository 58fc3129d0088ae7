"""Statistics of tournament results: how sure the standings are, and how many deals it takes.

Pure functions over plain records (numpy and scipy, no Django), one job a module:

* :mod:`~tournaments.statistics.scores`: the records and the scores they give (the input);
* :mod:`~tournaments.statistics.standings`: standings with intervals and rank chances;
* :mod:`~tournaments.statistics.crosstable`: every pair of entries compared;
* :mod:`~tournaments.statistics.stored`: the JSON form a finished tournament keeps;
* :mod:`~tournaments.statistics.spread`: the spread of a score per deal;
* :mod:`~tournaments.statistics.resolution`: what a tournament's settings tell apart;
* :mod:`~tournaments.statistics.sprt`: the sequential test of a match.

docs/tournaments.md ("Statistics") explains the figures in plain words.
"""

#: The level of every interval unless a caller asks for another.
CONFIDENCE = 0.95
