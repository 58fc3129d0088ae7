"""The API registers nothing in the admin."""
