"""The ``organisers`` group exists from the start, with the tournaments' permissions it needs
(api/organisers.py: ORGANISER_PERMISSIONS); ``manage.py organiser USER`` adds members."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUP = "organisers"
PERMISSIONS = [
    ("tournaments", "add_tournament"),
    ("tournaments", "change_tournament"),
    ("tournaments", "view_tournament"),
    ("tournaments", "view_entry"),
    ("tournaments", "view_table"),
]


def make_group(apps, schema_editor):
    # Permissions are made after every migration ran; make those of tournaments now.
    config = apps.get_app_config("tournaments")
    config.models_module = True
    create_permissions(config, apps=apps, verbosity=0)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    for app_label, codename in PERMISSIONS:
        group.permissions.add(
            Permission.objects.get(content_type__app_label=app_label, codename=codename)
        )


def drop_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0002_hash_tokens_and_name_keys"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("tournaments", "0004_reliability"),
    ]

    operations = [migrations.RunPython(make_group, drop_group)]
