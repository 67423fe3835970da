# The abandonment rule of tables without a turn clock: `abandon_seconds` (null at a clocked table, whose clock
# plays an absent person's turns) and `turn_started_at`, when the person to move began their turn. A game in
# play when this runs has its turn taken as begun at its last write (at a clocked table, its deadline less
# its turn's seconds, so that the deadline stays as it was).

from datetime import timedelta

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def _backfill(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    game_model = apps.get_model("games", "Game")
    game_model.objects.filter(turn_seconds__isnull=False).update(abandon_seconds=None)
    game_model.objects.filter(status="playing", turn_deadline__isnull=True).update(
        turn_started_at=models.F("updated_at")
    )
    clocked = game_model.objects.filter(turn_deadline__isnull=False).only(
        "id", "turn_deadline", "turn_seconds"
    )
    for game in clocked.iterator(chunk_size=500):
        game_model.objects.filter(pk=game.pk).update(
            turn_started_at=game.turn_deadline - timedelta(seconds=game.turn_seconds)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0011_player_discriminator"),
    ]

    operations = [
        migrations.AddField(
            model_name="game",
            name="abandon_seconds",
            field=models.PositiveIntegerField(
                blank=True,
                default=86400,
                help_text="At a table without a clock: seconds a person's turn may last before another "
                "seated person may hand their seat to a computer; null at a clocked table (the clock plays "
                "an absent person's turns).",
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="game",
            name="turn_started_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When the person to move began their turn; null: no person is to move.",
                null=True,
            ),
        ),
        migrations.RunPython(_backfill, migrations.RunPython.noop, elidable=True),
    ]
