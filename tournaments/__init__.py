"""Tournaments: the Django app that seats bots, plays tables through the judge and ranks them."""
