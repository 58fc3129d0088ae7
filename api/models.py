"""The API keeps no models of its own: it serves those of the tournaments app."""
