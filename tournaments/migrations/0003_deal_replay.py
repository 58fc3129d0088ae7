"""DealReplay: each recorded deal's replay, rendered once as the API serves it.

The deals recorded before this migration get theirs here, on PostgreSQL, in one statement
(``BACKFILL``: the same document as ``tournaments.selectors.deal_replay_documents``, built by
the database). Elsewhere (the SQLite demo) the API renders a missing replay when it is asked.
"""

import django.db.models.deletion
from django.db import migrations, models

# The replays of the deals of finished tables (``{where}``: more conditions on d, the deal,
# and t, its table), as selectors.deal_replay_documents renders them (tests/api check that
# both give the same JSON).
BACKFILL = """
INSERT INTO tournaments_dealreplay (deal_id, document)
SELECT d.id, json_build_object(
    'id', d.id,
    'tournament', t.tournament_id,
    'round', r.number,
    'table', t.id,
    'index', d.index,
    'game', COALESCE(NULLIF(t.result #>> '{{replay_header,game}}', ''), tn.game),
    'preset', COALESCE(NULLIF(t.result #>> '{{replay_header,preset}}', ''), tn.preset),
    'options', COALESCE(t.result #> '{{replay_header,options}}', '{{}}'::jsonb),
    'seed', d.seed,
    'seats', COALESCE((
      SELECT json_agg(json_build_object(
        'position', s.position,
        'entry', s.entry_id,
        'bot', CASE
          WHEN s.entry_id IS NULL THEN 'house:' || s.house_bot
          WHEN s.substitute THEN 'house:' || s.house_bot || ' for ' || b.name || ' v' || v.number
          ELSE b.name || ' v' || v.number END,
        'house', s.entry_id IS NULL,
        'substitute', s.substitute) ORDER BY s.position)
      FROM tournaments_seat s
      LEFT JOIN tournaments_entry e ON e.id = s.entry_id
      LEFT JOIN tournaments_botversion v ON v.id = e.version_id
      LEFT JOIN tournaments_bot b ON b.id = v.bot_id
      WHERE s.table_id = t.id), '[]'),
    'hands', CASE WHEN jsonb_typeof(d.record) = 'object' THEN d.record -> 'hands' END,
    'record', CASE WHEN jsonb_typeof(d.record) = 'object' THEN d.record ELSE '{{}}'::jsonb END,
    'passes', d.passes,
    'tricks', COALESCE((
      SELECT json_agg(json_build_object(
        'number', k.number, 'leader', k.leader, 'cards', k.cards,
        'winner', k.winner, 'points', k.points) ORDER BY k.number)
      FROM tournaments_trick k WHERE k.deal_id = d.id), '[]'),
    'decisions', COALESCE((
      SELECT json_agg(json_build_object(
        'step', a.i - 1,
        'seat', a.v -> 0,
        'action', a.v -> 1,
        'seconds', COALESCE(tm.v, '0.0'::jsonb),
        'fault', COALESCE(fs.kind, '')) ORDER BY a.i)
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(l.log -> 'actions') = 'array'
                                     THEN l.log -> 'actions' ELSE '[]' END)
           WITH ORDINALITY a(v, i)
      LEFT JOIN jsonb_array_elements(CASE WHEN jsonb_typeof(l.log -> 'times') = 'array'
                                          THEN l.log -> 'times' ELSE '[]' END)
           WITH ORDINALITY tm(v, i) ON tm.i = a.i
      LEFT JOIN (
        SELECT DISTINCT ON (f.v -> 'step') f.v -> 'step' AS step,
               COALESCE(f.v ->> 'kind', '') AS kind
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(l.log -> 'faults') = 'array'
                                       THEN l.log -> 'faults' ELSE '[]' END)
             WITH ORDINALITY f(v, i)
        WHERE jsonb_typeof(f.v) = 'object'
        ORDER BY f.v -> 'step', f.i DESC
      ) fs ON fs.step = to_jsonb(a.i - 1)), '[]'),
    'faults', COALESCE((
      SELECT json_agg(f.v ORDER BY f.i)
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(l.log -> 'faults') = 'array'
                                     THEN l.log -> 'faults' ELSE '[]' END)
           WITH ORDINALITY f(v, i)
      WHERE jsonb_typeof(f.v) = 'object'), '[]'),
    'points', d.points,
    'log', CASE WHEN jsonb_typeof(l.log) = 'object' THEN l.log ELSE '{{}}'::jsonb END
  )::text
FROM tournaments_deal d
JOIN tournaments_table t ON t.id = d.table_id
JOIN tournaments_round r ON r.id = t.round_id
JOIN tournaments_tournament tn ON tn.id = t.tournament_id
CROSS JOIN LATERAL (SELECT d.log OFFSET 0) l
WHERE t.status = 'done' {where}
ON CONFLICT (deal_id) DO NOTHING
"""


def backfill(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return  # rendered by the API on the first request
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(BACKFILL.format(where=""))


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0002_bots_tournaments_deals_ratings"),
    ]

    operations = [
        migrations.CreateModel(
            name="DealReplay",
            fields=[
                (
                    "deal",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="replay",
                        serialize=False,
                        to="tournaments.deal",
                    ),
                ),
                ("document", models.TextField()),
            ],
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True),
    ]
