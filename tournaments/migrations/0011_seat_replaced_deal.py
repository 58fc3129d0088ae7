from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0010_tournament_summary_audit"),
    ]

    operations = [
        migrations.AddField(
            model_name="seat",
            name="replaced_deal",
            field=models.PositiveSmallIntegerField(
                blank=True,
                help_text="The deal (from 0) from which the seat was replaced: it forfeits the "
                "rest of the table (docs/tournaments.md, 'A fault never pays').",
                null=True,
            ),
        ),
    ]
