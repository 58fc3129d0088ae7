"""Existing accounts move to the new tables.

API tokens: every token of DRF's ``authtoken`` app (``authtoken_token``, which kept each key in
clear) is hashed in place: its SHA-256 digest and first 8 characters go to ``api_apitoken``,
so that issued tokens keep working; then ``authtoken_token`` is dropped and the app's
migration records deleted (the app is no longer installed). Not reversible: the keys are gone.

User names: each user's look-alike keys go to ``api_usernamekey``. Two existing accounts whose
names look alike cannot both have them: the older keeps them, the newer is named in the
migration's output for an operator to rename (docs/operations.md).
"""

import hashlib
import sys

from django.db import migrations

OLD_TABLE = "authtoken_token"


def hash_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if OLD_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("api", "ApiToken")
    quote = schema_editor.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {quote('key')}, user_id, created FROM {quote(OLD_TABLE)}")
        rows = cursor.fetchall()
    for key, user_id, created in rows:
        token = ApiToken.objects.create(
            user_id=user_id, digest=hashlib.sha256(key.encode()).hexdigest(), prefix=key[:8]
        )
        ApiToken.objects.filter(pk=token.pk).update(created_at=created)
    schema_editor.execute(f"DROP TABLE {quote(OLD_TABLE)}")
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {quote('django_migrations')} WHERE app = %s", ["authtoken"])
    if rows:
        print(f"\n  api: {len(rows)} API token(s) hashed, {OLD_TABLE} dropped", file=sys.stderr)


def store_name_keys(apps, schema_editor):
    from api.accounts import username_keys  # the rule as it is now, like the saves use

    User = apps.get_model("auth", "User")
    UsernameKey = apps.get_model("api", "UsernameKey")
    taken: dict[tuple[str, str], str] = {}
    for user_id, name in User.objects.order_by("date_joined", "pk").values_list("pk", "username"):
        small, capitals = username_keys(name)
        holder = taken.get(("small", small)) or taken.get(("capitals", capitals))
        if holder is not None:
            print(
                f"\n  api: user {name!r} (id {user_id}) looks like {holder!r}: rename one of them",
                file=sys.stderr,
            )
            continue
        taken[("small", small)] = taken[("capitals", capitals)] = name
        UsernameKey.objects.create(user_id=user_id, key=small, capital_key=capitals)


class Migration(migrations.Migration):
    dependencies = [("api", "0001_tokens_and_name_keys")]

    operations = [
        migrations.RunPython(hash_tokens, migrations.RunPython.noop),
        migrations.RunPython(store_name_keys, migrations.RunPython.noop),
    ]
