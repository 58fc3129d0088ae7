"""The public, read-only site: one thin view per page (a selector of
``tournaments.page_selectors`` and a template of ``templates/pages/``). URLs in
``tournaments/urls.py``; docs/pages.md is the guide for organisers and spectators."""
