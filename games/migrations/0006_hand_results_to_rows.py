# Moves each game's finished hands' results out of its state into GameHand rows, leaving the state the last
# one only (the view shows it). Games whose state holds one result or none still get their row.

from django.db import migrations
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def _hands_to_rows(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    game_model = apps.get_model("games", "Game")
    hand_model = apps.get_model("games", "GameHand")
    for game in game_model.objects.only("id", "state").iterator(chunk_size=500):
        results = game.state.get("hand_results") or []
        if not results:
            continue
        hand_model.objects.bulk_create(
            [hand_model(game=game, hand_number=result["hand_number"], result=result) for result in results],
            ignore_conflicts=True,
        )
        if len(results) > 1:
            game.state["hand_results"] = results[-1:]
            game.save(update_fields=["state"])


class Migration(migrations.Migration):
    dependencies = [("games", "0005_game_hand")]

    operations = [migrations.RunPython(_hands_to_rows, migrations.RunPython.noop, elidable=True)]
