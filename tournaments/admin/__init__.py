"""The admin of the tournaments app, one module per model group (bots, tournaments, tables,
ratings) on the shared pieces of :mod:`~tournaments.admin.base`: every model browsable,
searchable and filterable; played tables and deals read-only; tournament actions (open,
start, cancel, re-run failed tables, audit) call the services.

Staff see nothing secret before it may be shown, as everyone else (``tournaments.visibility``
decides): a field of ``visibility.SECRET_FIELDS`` (a tournament's seed, a table's deal seed
and summary, a seat's results and bot log, everything of a deal, its tricks, decisions and
faults) is never a filter, a search or an ordering (``lookup_allowed`` refuses it: a yes or
no per request would reveal it bit by bit), nor is a relation to a model of
``visibility.SECRET_ROWS`` (whether an entry has faults), and a row shows it only once
``visibility.hidden_fields`` leaves it out. Deals and faults are listed once their table may
be shown, not before.
"""

from django.contrib import admin

from tournaments.admin import bots, ratings, tables, tournaments

# The admin's pages name the site, not the framework ("Django administration").
admin.site.site_header = "Tapis administration"
admin.site.site_title = "Tapis admin"
admin.site.index_title = "Tournaments, bots and accounts"

__all__ = ["bots", "ratings", "tables", "tournaments"]
