# Gives every existing game its seat rows: seat 0 its player (the creator), seats 1.. the computer players of
# `Game.opponents`, in order. Games that already have seats are left as they are.

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def _backfill_seats(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    game_model = apps.get_model("games", "Game")
    seat_model = apps.get_model("games", "GameSeat")
    games = (
        game_model.objects.filter(seats__isnull=True)
        .select_related("player")
        .only("id", "created_at", "opponents", "player__name")
    )
    batch = []
    for game in games.iterator(chunk_size=500):
        batch.append(
            seat_model(
                game=game,
                seat=0,
                kind="person",
                player_id=game.player_id,
                name=game.player.name,
                joined_at=game.created_at,
            )
        )
        for seat, opponent in enumerate(game.opponents, start=1):
            batch.append(
                seat_model(
                    game=game, seat=seat, kind="computer", level=opponent["level"], name=opponent["name"]
                )
            )
        if len(batch) >= 2000:
            seat_model.objects.bulk_create(batch, ignore_conflicts=True)
            batch = []
    seat_model.objects.bulk_create(batch, ignore_conflicts=True)


class Migration(migrations.Migration):
    dependencies = [("games", "0007_game_seats")]

    operations = [migrations.RunPython(_backfill_seats, migrations.RunPython.noop, elidable=True)]
