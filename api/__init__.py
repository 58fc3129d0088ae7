"""The REST API of Tapis (Django REST framework), mounted at /api/v1/."""
