"""Serializers of the API, one module per resource."""
