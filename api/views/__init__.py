"""Views of the API, one module per resource (routed in :mod:`api.urls`)."""
