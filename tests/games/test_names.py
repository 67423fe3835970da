"""Names that look alike share a skeleton (case, NFKC, variation selectors, Unicode's confusables folded), and
players of one skeleton are told apart by the discriminator the server draws (`Ada#4821`) in every view that
shows a person's name."""

import importlib
from importlib import resources
from typing import Any

import pytest
from django.apps import apps
from django.db import IntegrityError, transaction
from rest_framework.test import APIClient

from games import services
from games.models import DISCRIMINATOR_MAX, DISCRIMINATOR_MIN, Game, GameSeat, Player
from games.names import CONFUSABLES_FILE, CONFUSABLES_VERSION, confusables, name_skeleton
from tests.support.games import SEED, new_caller
from tests.support.problems import assert_problem
from tests.support.tables import PERSON, computer

# Names the API takes that display as Ada.
REGISTRABLE_ADAS = ["Ada", "ADA", "ada", "Ada\ufe0f", "ɑdɑ", "ᴀᴅᴀ", "Ａｄａ"]
# And two it refuses (a format character, mixed scripts), which share the skeleton all the same.
LOOKALIKES_OF_ADA = [*REGISTRABLE_ADAS, "A\u200bda", "\u0410d\u0430"]


def test_the_shipped_confusables_file_is_unicode_s_uts_39_data_of_the_version_named() -> None:
    text = resources.files("games").joinpath(CONFUSABLES_FILE).read_text(encoding="utf-8-sig")
    header = text.splitlines()[:10]
    assert header[0] == "# confusables.txt"
    assert "# Unicode Security Mechanisms for UTS #39" in header
    assert f"# Version: {CONFUSABLES_VERSION}" in header
    assert len(confusables()) > 6000
    assert confusables()["\u0251"] == "a" and confusables()["\u0430"] == "a"


@pytest.mark.parametrize("name", LOOKALIKES_OF_ADA)
def test_names_that_display_as_ada_share_ada_s_skeleton(name: str) -> None:
    assert name_skeleton(name) == name_skeleton("Ada")


@pytest.mark.parametrize("name", ["Adam", "Ida", "Bob", "Ad a", "アダ"])
def test_names_that_look_different_have_other_skeletons(name: str) -> None:
    assert name_skeleton(name) != name_skeleton("Ada")


def test_the_skeleton_follows_uts_39_through_several_prototypes() -> None:
    # U+0261 LATIN SMALL LETTER SCRIPT G is confusable with g; a fullwidth digit is NFKC's.
    assert name_skeleton("\u0261race７") == name_skeleton("grace7")
    assert name_skeleton("Zoe\u0308") == name_skeleton("ZOË")


@pytest.mark.django_db
def test_two_adas_get_different_discriminators_and_display_as_name_hash_four_digits() -> None:
    client = APIClient()
    bodies = [
        client.post("/api/v1/players", {"name": name}, format="json").json() for name in REGISTRABLE_ADAS
    ]
    discriminators = [body["discriminator"] for body in bodies]
    assert len(set(discriminators)) == len(bodies)
    for body in bodies:
        assert DISCRIMINATOR_MIN <= int(body["discriminator"]) <= DISCRIMINATOR_MAX
        assert body["display_name"] == f"{body['name']}#{body['discriminator']}"
    skeletons = set(Player.objects.values_list("name_skeleton", flat=True))
    assert skeletons == {name_skeleton("Ada")}


@pytest.mark.django_db
def test_the_database_refuses_a_second_player_with_a_skeleton_s_discriminator() -> None:
    player, _ = services.player_create(name="Ada")
    with pytest.raises(IntegrityError), transaction.atomic():
        Player.objects.create(
            name="ADA",
            name_skeleton=player.name_skeleton,
            discriminator=player.discriminator,
            token_hash="1" * 64,
        )


@pytest.mark.django_db
def test_a_skeleton_whose_discriminators_are_all_taken_refuses_the_next_name_with_409() -> None:
    skeleton = name_skeleton("Ada")
    Player.objects.bulk_create(
        Player(name="Ada", name_skeleton=skeleton, discriminator=number, token_hash=f"{number:064d}")
        for number in range(DISCRIMINATOR_MIN, DISCRIMINATOR_MAX + 1)
    )
    response = APIClient().post("/api/v1/players", {"name": "ᴀᴅᴀ"}, format="json")
    assert_problem(response, 409, "name_crowded")
    assert Player.objects.count() == DISCRIMINATOR_MAX - DISCRIMINATOR_MIN + 1
    assert APIClient().post("/api/v1/players", {"name": "Adam"}, format="json").status_code == 201


@pytest.mark.django_db
def test_a_draw_that_lost_a_race_draws_again(monkeypatch: pytest.MonkeyPatch) -> None:
    first, _ = services.player_create(name="Ada")
    draws = iter([first.discriminator, first.discriminator, 4821 if first.discriminator != 4821 else 4822])
    # The race: the first draws see the set as it was before `first` took its number.
    real_filter = Player.objects.filter
    monkeypatch.setattr(
        "games.services.players.Player.objects.filter",
        lambda **kwargs: real_filter(pk=None) if "name_skeleton" in kwargs else real_filter(**kwargs),
    )
    monkeypatch.setattr("games.services.players._RANDOM.choice", lambda free: next(draws))
    second, _ = services.player_create(name="ADA")
    assert second.discriminator != first.discriminator


def _person_names(value: Any) -> list[str]:
    """Every `name` of a person's seat or event anywhere in a response body."""
    found: list[str] = []
    if isinstance(value, dict):
        if (
            value.get("kind") == "person"
            and value.get("name")
            or value.get("type") in ("seat_taken", "seat_left")
        ):
            found.append(value["name"])
        for member in value.values():
            found += _person_names(member)
    elif isinstance(value, list):
        for item in value:
            found += _person_names(item)
    return found


@pytest.mark.django_db
def test_every_view_of_a_table_shows_its_people_with_their_discriminators() -> None:
    ada = new_caller("Ada")
    other_ada = new_caller("ADA")
    mine, theirs = (caller.get("/api/v1/players/me").json() for caller in (ada, other_ada))
    assert mine["discriminator"] != theirs["discriminator"]
    shown = {mine["display_name"], theirs["display_name"]}
    made = ada.create_game(seats=[PERSON, PERSON, computer()], seed=SEED)
    joined = other_ada.post(made["invitation"]["join"])
    assert joined.status_code in (200, 201), joined.content
    views = [
        made,
        joined.json(),
        ada.get(f"/api/v1/games/{made['id']}").json(),
        other_ada.get(f"/api/v1/games/{made['id']}").json(),
        ada.get(f"/api/v1/games/{made['id']}/events?after=0&limit=50").json(),
        ada.get("/api/v1/games").json(),
    ]
    for view in views:
        names = _person_names(view)
        assert names and set(names) <= shown, (names, view)
    seats = ada.get(f"/api/v1/games/{made['id']}").json()["seats"]
    assert [seat["name"] for seat in seats if seat["kind"] == "computer"] == ["Roy"]


@pytest.mark.django_db
def test_the_migration_numbers_every_existing_player_and_names_their_seats() -> None:
    ada = new_caller("Ada")
    made = ada.create_game(opponents=1, seed=SEED)
    new_caller("ɑdɑ")
    # As before the migration: no skeleton told, seats showing the bare name.
    for number, name in enumerate(["Ada", "ɑdɑ"]):
        old = {"name_skeleton": f"old {number}", "discriminator": DISCRIMINATOR_MIN}
        Player.objects.filter(name=name).update(**old)
    GameSeat.objects.filter(player__isnull=False).update(name="Ada")
    game = Game.objects.get(id=made["id"])
    assert game.seating is not None
    before = [[row[0], row[1], row[2], "Ada" if row[4] else row[3], row[4]] for row in game.seating]
    Game.objects.filter(id=made["id"]).update(seating=before)
    migration = importlib.import_module("games.migrations.0011_player_discriminator")
    migration.players_numbered(apps, None)
    migration.seats_named(apps, None)
    players = list(Player.objects.all())
    assert {player.name_skeleton for player in players} == {name_skeleton("Ada")}
    assert len({player.discriminator for player in players}) == 2
    shown = Player.objects.get(id=ada.player_id).display_name
    assert list(GameSeat.objects.filter(player__isnull=False).values_list("name", flat=True)) == [shown]
    assert Game.objects.get(id=made["id"]).seating == [
        [0, "person", None, shown, ada.player_id],
        [1, "computer", "normal", "Millie", None],
    ]
    assert _person_names(ada.get(f"/api/v1/games/{made['id']}").json()["seats"]) == [shown]


@pytest.mark.django_db
def test_a_rename_keeps_the_discriminator_unless_a_look_alike_has_it_and_renames_the_seats() -> None:
    ada = new_caller("Ada")
    made = ada.create_game(opponents=1, seed=SEED)
    player = Player.objects.get(id=ada.player_id)
    kept = player.discriminator
    services.player_rename(player=player, name="Ada L.")
    assert player.discriminator == kept and player.name_skeleton == name_skeleton("Ada L.")
    other, _ = services.player_create(name="Grace")
    Player.objects.filter(pk=other.pk).update(discriminator=kept)
    services.player_rename(player=player, name="GRACE")
    assert player.name_skeleton == other.name_skeleton and player.discriminator != kept
    assert _person_names(ada.get(f"/api/v1/games/{made['id']}").json()["seats"]) == [player.display_name]
    stored = Game.objects.get(id=made["id"]).seating
    assert stored is not None and stored[0][3] == player.display_name == "GRACE#" + str(player.discriminator)
