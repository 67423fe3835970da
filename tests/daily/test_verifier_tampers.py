"""examples/verify_daily.py against a real day on the test database, read through the API: it verifies the day
and a ranked game played on it, and it catches each tamper done to the database afterwards (a swapped seed
and commitment, an illegal computer move, a computer move that is legal but not normal's, a rewritten score, a
rewritten leaderboard result), naming the first wrong thing."""

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from django.db.models import F
from pytest_django import Settings
from rest_framework.test import APIClient

from daily import services
from daily.chain import season_seeds
from daily.models import DailyDeal, Submission
from games.models import Game, GameEvent
from games.services import player_create
from tests.support.daily import TODAY, Clock, play_to_the_end
from tests.support.verifier import BASE_URL, client_fetch, verifier

AFTER_THE_REVEAL = datetime(2026, 3, 6, 2, 0, tzinfo=UTC)


@dataclass
class PlayedDay:
    token: str
    game_id: str
    anchor: str
    commitments: Path

    def verify(
        self, *, game: bool = True, anchor: bool = False, commitments: bool = False
    ) -> tuple[int, str]:
        """The verifier's exit status and output on TODAY, trusting what is asked."""
        module = verifier()
        trust = module.Trust()
        if anchor:
            trust.anchor = self.anchor
        if commitments:
            trust.commitments = module.load_commitments(str(self.commitments))
            trust.commitments_path = str(self.commitments)
        lines: list[str] = []
        code = module.verify(
            BASE_URL,
            TODAY.isoformat(),
            game_id=self.game_id if game else None,
            token=self.token if game else None,
            trust=trust,
            out=lines.append,
            fetch=client_fetch(APIClient()),
        )
        output = "\n".join(lines)
        print(output)  # what the closing note quotes: `pytest -s` shows it
        return code, output


def _play(daily_clock: Clock, tmp_path: Path, turns: int | None = None) -> PlayedDay:
    """Before the day: the season's anchor and the month's commitments saved. During it: a ranked attempt
    played through the API to its end (or for `turns` turns). Then the day is over and its seed revealed."""
    anonymous = APIClient()
    anchor = anonymous.get("/api/v1/daily/anchor").json()["anchor"]
    saved = tmp_path / "commitments.json"
    saved.write_text(json.dumps(anonymous.get(f"/api/v1/daily/commitments?from={TODAY}").json()))
    player, token = player_create(name="Ada")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    attempt = client.post(f"/api/v1/daily/{TODAY}/attempts").json()
    assert attempt["ranked"] is True
    game = play_to_the_end(Game.objects.get(id=attempt["game"]["id"]), client, turns=turns)
    assert game.status == ("finished" if turns is None else "playing")
    daily_clock.set(AFTER_THE_REVEAL)
    return PlayedDay(token=token, game_id=str(game.id), anchor=anchor, commitments=saved)


@pytest.fixture
def played(daily_clock: Clock, db: None, tmp_path: Path) -> PlayedDay:
    return _play(daily_clock, tmp_path)


def _events(played: PlayedDay) -> list[GameEvent]:
    """The game's log as stored: each event's type in its own column, the rest in `data`."""
    return list(GameEvent.objects.filter(game_id=played.game_id).order_by("seq"))


def test_the_verifier_verifies_the_day_and_the_ranked_game_trusting_the_saved_anchor_and_commitments(
    played: PlayedDay,
) -> None:
    code, out = played.verify(anchor=True, commitments=True)
    assert code == 0, out
    assert "Trust: the anchor you saved" in out and "the commitments you saved" in out
    assert "computer moves checked" in out and "leaderboard: rank 1" in out
    assert out.endswith("to the result recorded.")


@pytest.mark.django_db
def test_a_ranked_hand_left_unfinished_is_verified_as_closed_at_the_deadline(
    daily_clock: Clock, tmp_path: Path, settings: Settings
) -> None:
    settings.DAILY_SECRET = "fair-play-50"  # a deal whose hand lasts five turns of seat 0
    played = _play(daily_clock, tmp_path, turns=2)
    code, out = played.verify(anchor=True)
    assert code == 2, out
    assert "is not on the leaderboard yet" in out
    services.daily_deals_close_due()
    code, out = played.verify(anchor=True)
    assert code == 0, out
    assert "the hand was left unfinished: closed at the deadline with" in out
    assert "turns, closed, as the hand gives" in out


def test_the_verifier_cannot_verify_a_day_whose_seed_is_still_secret(
    played: PlayedDay, daily_clock: Clock
) -> None:
    daily_clock.set(AFTER_THE_REVEAL - timedelta(hours=2))
    code, out = played.verify(anchor=True)
    assert code == 2, out
    assert "CANNOT VERIFY: the seed of 2026-03-05 is not revealed yet" in out


def test_a_swapped_seed_and_commitment_are_caught_by_the_saved_anchor_and_the_saved_commitments(
    played: PlayedDay, settings: Settings
) -> None:
    # The day's seed swapped with its commitment for those of a chain of another secret, which the server
    # now runs on, so that its anchor agrees with the swap: only what was saved before can tell.
    settings.DAILY_SECRET = "another secret"
    other = season_seeds("another secret", date(2026, 1, 1), 3652)[63]
    DailyDeal.objects.filter(date=TODAY).update(
        seed=other.hex(), commitment=hashlib.sha256(other).hexdigest()
    )

    code, out = played.verify(game=False)
    assert code == 0, out
    assert "Trust: only the server's word" in out

    code, out = played.verify(game=False, anchor=True)
    assert code == 1, out
    assert "MISMATCH: the seed of 2026-03-05, day 63 of the season of 2026-01-01, hashes forward to" in out
    assert f"not to the anchor you saved {played.anchor}" in out

    code, out = played.verify(game=False, commitments=True)
    assert code == 1, out
    assert "the commitment you saved for 2026-03-05 is" in out


def test_a_seed_and_commitment_swapped_in_the_database_alone_miss_even_the_servers_anchor(
    played: PlayedDay,
) -> None:
    other = hashlib.sha256(b"another seed").digest()
    DailyDeal.objects.filter(date=TODAY).update(
        seed=other.hex(), commitment=hashlib.sha256(other).hexdigest()
    )

    code, out = played.verify()
    assert code == 1, out
    assert "not to the server's anchor" in out


def _piles_before(events: list[GameEvent], seq: int) -> dict[str, list[str]]:
    piles: dict[str, list[str]] = {}
    for event in events:
        if event.seq == seq:
            return piles
        data = event.data
        if event.type == "deal":
            piles = {name: list(pile) for name, pile in data["piles"].items()}
        elif event.type == "play":
            piles[data["to"]].append(data["card"])
        elif event.type == "move_pile":
            piles[data["to"]].extend(piles[data["from"]])
            piles[data["from"]] = []
    raise AssertionError(f"no event {seq}")


def test_an_illegal_computer_move_is_named(played: PlayedDay) -> None:
    events = _events(played)
    # A computer's card that is not a King, moved into an empty corner: only a King may go there.
    for event in events:
        data = event.data
        if event.type == "play" and data["seat"] != 0 and data["card"][0] != "K":
            empty = [name for name in ("NE", "SE", "SW", "NW") if not _piles_before(events, event.seq)[name]]
            if empty:
                break
    else:
        pytest.fail("no computer play with an empty corner in this game")
    event.data = {**data, "to": empty[0]}
    event.save()

    code, out = played.verify(anchor=True)
    assert code == 1, out
    assert (
        f"MISMATCH: event {event.seq} (play): illegal: seat {data['seat']} may not play {data['card']} on "
        f"{empty[0]}: only a King opens an empty corner" in out
    )


def test_a_legal_computer_move_that_is_not_normals_choice_is_named(played: PlayedDay) -> None:
    events = _events(played)
    # A computer that ends its turn where it played a card: legal, but normal plays what fits.
    turn = 0
    for event in events:
        if event.type == "turn_start":
            turn = event.data["turn"]
        if event.type == "play" and event.data["seat"] != 0:
            break
    else:
        pytest.fail("no computer play in this game")
    played_card = event.data
    event.type = "end_turn"
    event.data = {"seat": played_card["seat"], "turn": turn}
    event.save()

    code, out = played.verify(anchor=True)
    assert code == 1, out
    assert (
        f"MISMATCH: event {event.seq} (end_turn): seat {played_card['seat']} (normal) chose to end its turn; "
        f"normal's rule chooses to play {played_card['card']} on {played_card['to']}" in out
    )


def test_a_rewritten_score_is_named(played: PlayedDay) -> None:
    hand_over = next(event for event in _events(played) if event.type == "hand_over")
    true_penalties = hand_over.data["penalties"]
    # Seat 1 the winner: no penalty for it, its penalty moved onto seat 0, in the log and the state together.
    forged = list(true_penalties)
    forged[0], forged[1] = forged[0] + forged[1] + 1, 0
    hand_over.data = {**hand_over.data, "penalties": forged, "scores": forged}
    hand_over.save()
    game = Game.objects.get(id=played.game_id)
    game.state = {**game.state, "scores": forged, "winners": [1]}
    game.save()

    code, out = played.verify(anchor=True)
    assert code == 1, out
    assert f"MISMATCH: event {hand_over.seq} (hand_over): penalties is {forged!r}, the rules give" in out


def test_a_rewritten_leaderboard_result_is_named(played: PlayedDay) -> None:
    submission = Submission.objects.get(attempt__game_id=played.game_id)
    Submission.objects.filter(id=submission.id).update(result=F("result") + 7)

    code, out = played.verify(anchor=True)
    assert code == 1, out
    assert (
        f"MISMATCH: the leaderboard shows {submission.result + 7:+d} in {submission.turns} turns (closed "
        f"False); the hand gives {submission.result:+d} in {submission.turns} turns, finished" in out
    )
