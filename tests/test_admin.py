"""The admin pages: every list and page loads with data and never shows a token or its hash; searches and
filters select what they say; history is read-only; deletions that would cut into history are refused."""

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.contrib import admin
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from daily import clock
from daily.models import Attempt, DailyDeal, DailyPar, ResultCount, Submission
from daily.services import attempt_start, daily_deal_get_or_create, daily_par_compute
from games.engine import PLAYING, SeededStream, State, make_rules, observe
from games.engine.players import choose_turn
from games.models import Game, GameEvent, GameMove, IdempotentRequest, Player
from games.services import game_create, game_moves_apply, player_create
from games.tokens import token_hash

TODAY = date(2026, 3, 5)
NOON = datetime(2026, 3, 5, 12, 0, tzinfo=UTC)
# Deals whose hand is still in play after seat 0's first turn and the computers' answers.
CASUAL_SEED = bytes.fromhex("ad" * 32)
SHARP_SEED = bytes.fromhex("c1" * 32)
OTHER_SEED = bytes.fromhex("d1" * 32)
HISTORY = [
    GameMove,
    GameEvent,
    IdempotentRequest,
    Game,
    DailyDeal,
    Attempt,
    Submission,
    ResultCount,
    DailyPar,
]


@dataclass
class Site:
    ada: Player
    tokens: list[str]
    casual_game: Game
    sharp_game: Game
    daily_game: Game


def _one_turn(game: Game, idempotency_key: str | None = None) -> None:
    state = State.from_json(game.state)
    moves = [move.to_json() for move in choose_turn(observe(state, 0), "normal", SeededStream(b"\x00" * 32))]
    game_moves_apply(
        game_id=game.id,
        player=game.player,
        moves=moves,
        expected_version=game.version,
        idempotency_key=idempotency_key,
    )
    game.refresh_from_db()


def _play_to_the_end(game: Game) -> None:
    while State.from_json(game.state).status == PLAYING:
        _one_turn(game)


def _new_player(name: str, tokens: list[str]) -> Player:
    player, token = player_create(name=name)
    tokens.append(token)
    return player


@pytest.fixture
def site(db: None, monkeypatch: pytest.MonkeyPatch) -> Site:
    """Two players, a game in play with a retried request, a game against sharp players, and a ranked daily
    attempt played to the end beside an earlier day's deal."""
    monkeypatch.setattr(clock, "now", lambda: NOON)
    tokens: list[str] = []
    ada = _new_player("Ada", tokens)
    _new_player("Bob", tokens)
    # Fixed seeds: a random deal can end the casual game's single hand in its first round (the tests need it
    # still in play, its seed secret, and the daily game the only finished one).
    casual_game = game_create(
        player=ada, levels=["easy", "easy"], rules=make_rules("casual"), target_score=None, seed=CASUAL_SEED
    )
    _one_turn(casual_game, idempotency_key="retry-me")
    assert casual_game.status == Game.Status.PLAYING
    sharp_game = game_create(
        player=ada, levels=["sharp"], rules=make_rules("classic"), target_score=50, seed=SHARP_SEED
    )
    daily_game = attempt_start(player=ada, day=TODAY).game
    _play_to_the_end(daily_game)
    # An earlier day, revealed, with its par.
    daily_par_compute(deal=daily_deal_get_or_create(day=TODAY - timedelta(days=2)), node_budget=50)
    return Site(ada=ada, tokens=tokens, casual_game=casual_game, sharp_game=sharp_game, daily_game=daily_game)


def _url(model: type[Any], view: str, *args: Any) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


def _assert_no_token(html: str, site: Site) -> None:
    for token in site.tokens:
        assert token not in html
        assert token_hash(token) not in html


def _listed(client: Client, model: type[Any], query: str = "") -> list[Any]:
    response = client.get(f"{_url(model, 'changelist')}{query}")
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


def test_admin_site_is_titled_for_the_service(admin_client: Client) -> None:
    response = admin_client.get(reverse("admin:index"))
    assert response.status_code == 200
    assert "Kings Corner API administration" in response.content.decode()


def test_every_list_and_page_loads_with_data_and_shows_no_token(admin_client: Client, site: Site) -> None:
    models = [model for model in admin.site._registry if model._meta.app_label in {"games", "daily"}]
    assert set(models) == {Player, *HISTORY}
    for model in models:
        listed = admin_client.get(_url(model, "changelist"))
        assert listed.status_code == 200, model
        _assert_no_token(listed.content.decode(), site)
        row = model._default_manager.first()
        assert row is not None, model
        page = admin_client.get(_url(model, "change", row.pk))
        assert page.status_code == 200, model
        _assert_no_token(page.content.decode(), site)


def test_a_player_page_has_no_token_field_and_changes_only_the_name(admin_client: Client, site: Site) -> None:
    url = _url(Player, "change", site.ada.pk)
    page = admin_client.get(url).content.decode()
    assert "token_hash" not in page
    assert "Recent games" in page and "all of the player&#x27;s games" in page
    hash_before = site.ada.token_hash

    response = admin_client.post(url, {"name": "Ada L.", "token_hash": "0" * 64, "_save": "Save"})

    assert response.status_code == 302
    site.ada.refresh_from_db()
    assert site.ada.name == "Ada L."
    assert site.ada.token_hash == hash_before


@pytest.mark.parametrize("model", [Player, *HISTORY], ids=lambda model: model.__name__)
def test_no_list_makes_a_query_per_row(admin_client: Client, site: Site, model: type[Any]) -> None:
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(_url(model, "changelist")).status_code == 200
        return len(captured)

    before = queries()
    for name in ("Cy", "Di"):
        player = _new_player(name, site.tokens)
        game = game_create(
            player=player, levels=["easy"], rules=make_rules("classic"), target_score=None, seed=OTHER_SEED
        )
        _one_turn(game, name)
        _play_to_the_end(attempt_start(player=player, day=TODAY).game)

    assert queries() == before


def test_the_player_list_counts_each_players_games(admin_client: Client, site: Site) -> None:
    counts = {player.name: player.game_count for player in _listed(admin_client, Player)}
    assert counts == {"Ada": 3, "Bob": 0}


def test_a_game_page_shows_state_and_seed_read_only_with_the_move_log_in_order(
    admin_client: Client, site: Site
) -> None:
    game = site.casual_game
    page = admin_client.get(_url(Game, "change", game.pk)).content.decode()

    assert 'name="state"' not in page and 'name="seed"' not in page and 'name="version"' not in page
    assert "&quot;hand_number&quot;: 1" in page  # pretty-printed, escaped JSON
    assert f"{game.seed} (secret: the player does not see it yet)" in page
    assert f"?game={game.pk}" in page and f"{game.event_seq} events" in page
    shown = [int(seq) for seq in re.findall(r'<td class="field-seq">\s*<p>(\d+)</p>', page)]
    assert shown == list(range(1, game.move_seq + 1))


def test_a_finished_daily_games_seed_stays_labelled_secret_until_its_day_is_over(
    admin_client: Client, site: Site
) -> None:
    game = site.daily_game
    assert game.status == Game.Status.FINISHED
    page = admin_client.get(_url(Game, "change", game.pk)).content.decode()
    assert "(secret: the player does not see it yet)" in page


def test_games_are_searched_by_id_player_id_and_player_name(admin_client: Client, site: Site) -> None:
    every_game = {site.casual_game, site.sharp_game, site.daily_game}
    assert set(_listed(admin_client, Game, f"?q={site.casual_game.pk}")) == {site.casual_game}
    assert set(_listed(admin_client, Game, f"?q={site.ada.pk}")) == every_game
    assert set(_listed(admin_client, Game, "?q=ad")) == every_game
    assert _listed(admin_client, Game, "?q=nobody") == []
    assert set(_listed(admin_client, Player, f"?q={site.ada.pk}")) == {site.ada}
    assert {player.name for player in _listed(admin_client, Player, "?q=bo")} == {"Bob"}


def test_games_are_filtered_by_status_rule_set_opponent_level_and_date(
    admin_client: Client, site: Site
) -> None:
    assert set(_listed(admin_client, Game, "?status=finished")) == {site.daily_game}
    assert set(_listed(admin_client, Game, "?rules_preset=casual")) == {site.casual_game}
    assert set(_listed(admin_client, Game, "?opponent_level=sharp")) == {site.sharp_game}
    assert set(_listed(admin_client, Game, "?opponent_level=easy")) == {site.casual_game}
    created = site.casual_game.created_at
    assert len(_listed(admin_client, Game, f"?created_at__year={created.year}")) == 3
    assert set(_listed(admin_client, Game, f"?player={site.ada.pk}&rules_preset=classic")) == {
        site.sharp_game,
        site.daily_game,
    }


def test_the_logs_are_filtered_by_type_and_searched_by_game_id(admin_client: Client, site: Site) -> None:
    draws = _listed(admin_client, GameEvent, "?type=draw")
    assert draws and {event.type for event in draws} == {"draw"}
    ends = _listed(admin_client, GameMove, "?type=end_turn")
    assert ends and {move.move["type"] for move in ends} == {"end_turn"}

    game = site.sharp_game
    found = _listed(admin_client, GameEvent, f"?q={game.pk}")
    assert found and {event.game_id for event in found} == {game.pk}
    assert _listed(admin_client, GameEvent, "?q=draw") == []

    one_game = _listed(admin_client, GameEvent, f"?game={game.pk}")
    assert [event.seq for event in one_game] == list(range(1, game.event_seq + 1))
    assert [move.seq for move in _listed(admin_client, GameMove, f"?game={game.pk}")] == list(
        range(1, game.move_seq + 1)
    )


def test_idempotent_requests_are_searched_by_key_and_player(admin_client: Client, site: Site) -> None:
    assert [row.key for row in _listed(admin_client, IdempotentRequest, "?q=retry")] == ["retry-me"]
    assert len(_listed(admin_client, IdempotentRequest, f"?q={site.ada.pk}")) == 1
    assert _listed(admin_client, IdempotentRequest, "?q=bob") == []


def test_daily_deals_list_their_attempts_and_submissions_and_label_the_seed(
    admin_client: Client, site: Site
) -> None:
    deals = {deal.date: deal for deal in _listed(admin_client, DailyDeal)}
    today, earlier = deals[TODAY], deals[TODAY - timedelta(days=2)]
    assert (today.attempt_count, today.submission_count) == (1, 1)
    assert (earlier.attempt_count, earlier.submission_count) == (0, 0)

    page = admin_client.get(_url(DailyDeal, "change", today.pk)).content.decode()
    assert f"{today.seed} (secret until the day is over" in page
    page = admin_client.get(_url(DailyDeal, "change", earlier.pk)).content.decode()
    assert f"{earlier.seed} (public: the day is over)" in page


def test_attempts_and_submissions_are_filtered_by_deal_and_searched_by_player(
    admin_client: Client, site: Site
) -> None:
    deal = DailyDeal.objects.get(date=TODAY)
    attempt = Attempt.objects.get(game=site.daily_game)
    assert _listed(admin_client, Attempt, f"?ranked__exact=1&deal__id__exact={deal.pk}") == [attempt]
    assert _listed(admin_client, Attempt, "?ranked__exact=0") == []
    assert _listed(admin_client, Attempt, f"?q={site.daily_game.pk}") == [attempt]
    assert [s.attempt_id for s in _listed(admin_client, Submission, "?q=ada")] == [attempt.pk]
    assert _listed(admin_client, Submission, "?q=bob") == []
    assert len(_listed(admin_client, ResultCount, f"?deal__id__exact={deal.pk}")) == 1


def test_submissions_of_a_day_are_listed_in_the_leaderboards_order(admin_client: Client, site: Site) -> None:
    for name in ("Cy", "Di", "Ed"):
        _play_to_the_end(attempt_start(player=_new_player(name, site.tokens), day=TODAY).game)
    deal = DailyDeal.objects.get(date=TODAY)

    listed = _listed(admin_client, Submission, f"?deal__id__exact={deal.pk}")

    assert len(listed) == 4
    keys = [(-row.result, row.turns, row.finished_at, row.pk) for row in listed]
    assert keys == sorted(keys)


@pytest.mark.parametrize("model", HISTORY, ids=lambda model: model.__name__)
def test_history_cannot_be_added_changed_or_deleted(
    admin_client: Client, site: Site, model: type[Any]
) -> None:
    row = model._default_manager.first()
    listed = admin_client.get(_url(model, "changelist")).content.decode()
    assert _url(model, "add") not in listed

    assert admin_client.get(_url(model, "add")).status_code == 403
    assert admin_client.post(_url(model, "change", row.pk), {}).status_code == 403
    assert admin_client.post(_url(model, "delete", row.pk), {"post": "yes"}).status_code == 403
    assert model._default_manager.filter(pk=row.pk).exists()


def test_players_are_not_added_in_the_admin_and_one_with_games_is_not_deleted(
    admin_client: Client, site: Site
) -> None:
    assert admin_client.get(_url(Player, "add")).status_code == 403

    response = admin_client.post(_url(Player, "delete", site.ada.pk), {"post": "yes"})

    assert response.status_code == 403
    assert Player.objects.filter(pk=site.ada.pk).exists()
