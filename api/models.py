"""The accounts' own tables: hashed API tokens and the look-alike key of each user name.

Everything else the API serves belongs to the tournaments app.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """An API token, kept as the SHA-256 digest of its key: the database holds no usable token.

    The key (``secrets.token_urlsafe(32)``, 256 random bits) is shown once, when it is made
    (``api.accounts.token_issue``). A presented key is hashed and looked up by its digest; a
    salt or a slow hash would add nothing to a random key of that length, and would make every
    API request pay for it. ``prefix`` is the key's first characters, for people to tell their
    tokens apart (the admin shows it and nothing else).
    """

    PREFIX_LENGTH = 8

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=PREFIX_LENGTH, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "API token"
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user_id})"


class UsernameKey(models.Model):
    """A user's name as compared for look-alikes (``api.accounts.username_keys``), unique.

    The unique index is the database's guarantee that no two accounts have names that only
    differ by case, width, accents or a look-alike letter: every save of a user that sets its
    name writes this row in the same transaction (``api.apps``).
    """

    MAX_LENGTH = 255

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="username_key",
    )
    key = models.CharField(max_length=MAX_LENGTH, unique=True)
    capital_key = models.CharField(max_length=MAX_LENGTH, unique=True)

    class Meta:
        verbose_name = "user name key"

    def __str__(self) -> str:
        return self.key
