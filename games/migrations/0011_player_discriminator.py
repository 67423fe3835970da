"""Players numbered apart within a name skeleton (`Ada#4821`): the skeleton and a drawn discriminator for
every player there is, and the persons' seats showing that display name."""

import random
from typing import Any

from django.db import migrations, models

from games.names import name_skeleton

DISCRIMINATOR_MIN = 1000
DISCRIMINATOR_MAX = 9999


def players_numbered(apps: Any, schema_editor: Any) -> None:
    Player = apps.get_model("games", "Player")
    draw = random.SystemRandom()
    taken: dict[str, set[int]] = {}
    for player in Player.objects.order_by("created_at", "id").iterator():
        player.name_skeleton = name_skeleton(player.name)
        used = taken.setdefault(player.name_skeleton, set())
        free = [n for n in range(DISCRIMINATOR_MIN, DISCRIMINATOR_MAX + 1) if n not in used]
        player.discriminator = draw.choice(free)
        used.add(player.discriminator)
        player.save(update_fields=["name_skeleton", "discriminator"])


def seats_named(apps: Any, schema_editor: Any) -> None:
    """A person's seat shows the display name, in its row and in the game's `seating`."""
    Player = apps.get_model("games", "Player")
    GameSeat = apps.get_model("games", "GameSeat")
    Game = apps.get_model("games", "Game")
    shown = {
        str(pk): f"{name}#{number}"
        for pk, name, number in Player.objects.values_list("id", "name", "discriminator").iterator()
    }
    for seat in GameSeat.objects.filter(player__isnull=False).iterator():
        seat.name = shown[str(seat.player_id)]
        seat.save(update_fields=["name"])
    for game in Game.objects.filter(seating__isnull=False).iterator():
        seating = [
            [seat, kind, level, shown[str(who)] if who is not None else name, who]
            for seat, kind, level, name, who in game.seating
        ]
        if seating != game.seating:
            game.seating = seating
            game.save(update_fields=["seating"])


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0010_idempotent_request_kind"),
    ]

    operations = [
        migrations.AddField(
            model_name="player",
            name="name_skeleton",
            field=models.TextField(null=True, editable=False),
        ),
        migrations.AddField(
            model_name="player",
            name="discriminator",
            field=models.PositiveSmallIntegerField(null=True, editable=False),
        ),
        migrations.AlterField(
            model_name="gameseat",
            name="name",
            field=models.CharField(
                blank=True,
                help_text="A person's display name (`Ada#4821`), a computer's name (`Millie`); empty while a "
                "person's seat is free.",
                max_length=40,
            ),
        ),
        migrations.RunPython(players_numbered, migrations.RunPython.noop),
        migrations.RunPython(seats_named, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="player",
            name="name_skeleton",
            field=models.TextField(
                editable=False,
                help_text="The name as names that look alike share it (games.names.name_skeleton).",
            ),
        ),
        migrations.AlterField(
            model_name="player",
            name="discriminator",
            field=models.PositiveSmallIntegerField(
                editable=False, help_text="1000-9999, one player's of a name skeleton."
            ),
        ),
        migrations.AddConstraint(
            model_name="player",
            constraint=models.UniqueConstraint(
                fields=("name_skeleton", "discriminator"), name="player_name_discriminator"
            ),
        ),
        migrations.AddConstraint(
            model_name="player",
            constraint=models.CheckConstraint(
                condition=models.Q(("discriminator__gte", 1000), ("discriminator__lte", 9999)),
                name="player_discriminator_range",
            ),
        ),
    ]
