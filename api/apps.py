from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_save, pre_save


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "REST API"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model

        # Every path that creates or renames a user (the API's sign-up, the admin's forms,
        # createsuperuser, the shell) saves it: refuse a look-alike name before the row is
        # written, and keep the unique look-alike keys of api.models.UsernameKey.
        user_model = get_user_model()
        pre_save.connect(_refuse_lookalike_name, sender=user_model, dispatch_uid="api-name-check")
        post_save.connect(_store_name_keys, sender=user_model, dispatch_uid="api-name-keys")


def _sets_name(update_fields: Any) -> bool:
    return update_fields is None or "username" in update_fields


# Set on a user being saved whose name is new or changed (read by the post_save receiver).
_NAME_CHANGED = "_api_name_changed"


def _refuse_lookalike_name(
    sender: Any, instance: Any, raw: bool = False, update_fields: Any = None, **kwargs: Any
) -> None:
    setattr(instance, _NAME_CHANGED, False)
    if raw or not _sets_name(update_fields):
        return
    name = instance.get_username()
    if instance.pk is not None and (
        sender._default_manager.filter(pk=instance.pk, **{sender.USERNAME_FIELD: name}).exists()
    ):
        return  # the name is not changing: a password or a flag is
    from api import accounts

    accounts.username_check(username=name, user=instance)
    setattr(instance, _NAME_CHANGED, True)


def _store_name_keys(sender: Any, instance: Any, **kwargs: Any) -> None:
    if getattr(instance, _NAME_CHANGED, False):
        from api import accounts

        accounts.username_key_store(user=instance)
        setattr(instance, _NAME_CHANGED, False)
