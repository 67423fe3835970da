"""The writes of `daily`: creating the deals, starting attempts and recording ranked results."""

from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F

from daily import clock
from daily.models import Attempt, DailyDeal, ResultCount, Submission
from games.engine import DIRECT, Rules, State, commitment, daily_result, daily_seed, make_rules
from games.engine.players import NAMES
from games.models import Game, Player
from games.services import game_create
from kingscorner.errors import ApiProblem

DAILY_RULE_SET = "classic"


def daily_deal_number(*, day: date) -> int:
    return (day - settings.DAILY_EPOCH).days + 1


def daily_deal_get_or_create(*, day: date) -> DailyDeal:
    """The deal of `day`, created if it does not exist yet. Every caller (the beat job, the API's first
    request of a day, the management command) comes here, so a deal is the same whoever creates it, and
    the unique date makes concurrent callers end up with the one row."""
    if day < settings.DAILY_EPOCH:
        raise ApiProblem(
            status=404,
            code="no_daily_deal",
            detail=f"The first daily deal is that of {settings.DAILY_EPOCH.isoformat()}.",
        )
    seed = daily_seed(settings.DAILY_SECRET, day)
    level = settings.DAILY_OPPONENT_LEVEL
    # get_or_create inserts in a savepoint and, when a concurrent insert wins, reads the winner's row.
    deal, _ = DailyDeal.objects.get_or_create(
        date=day,
        defaults={
            "number": daily_deal_number(day=day),
            "rules": make_rules(DAILY_RULE_SET).to_json(),
            "opponents": [{"name": name, "level": level} for name in NAMES],
            "seed": seed.hex(),
            "commitment": commitment(seed),
        },
    )
    return deal


def daily_deals_create_upcoming() -> list[DailyDeal]:
    """Today's and tomorrow's deals, so that the next day's deal exists before its day starts."""
    today = clock.today()
    return [daily_deal_get_or_create(day=day) for day in (today, today + timedelta(days=1))]


def daily_deal_get_started(*, day: date) -> DailyDeal:
    """The deal of a day that has started: today's or an earlier one."""
    if day > clock.today():
        raise ApiProblem(status=404, code="no_daily_deal", detail="That day's deal has not started yet.")
    return daily_deal_get_or_create(day=day)


@transaction.atomic
def attempt_start(*, player: Player, day: date) -> Attempt:
    """A new game on the deal of `day`. The first attempt at today's deal is ranked and exists from now
    on, finished or not; later ones, and any at an earlier day's deal, are unranked."""
    deal = daily_deal_get_started(day=day)
    game = game_create(
        player=player,
        levels=[opponent["level"] for opponent in deal.opponents],
        rules=Rules.from_json(deal.rules),
        target_score=None,
        seed=bytes.fromhex(deal.seed),
        seed_scheme=DIRECT,
    )
    started_at = clock.now()
    if (
        deal.date == clock.today()
        and not Attempt.objects.filter(player=player, deal=deal, ranked=True).exists()
    ):
        try:
            with transaction.atomic():
                return Attempt.objects.create(
                    player=player, deal=deal, game=game, ranked=True, started_at=started_at
                )
        except IntegrityError:
            # A parallel request of the same player took the ranked attempt first; this one is practice.
            pass
    return Attempt.objects.create(player=player, deal=deal, game=game, ranked=False, started_at=started_at)


def submission_record(*, attempt: Attempt, result: int, turns: int, finished_at: datetime) -> Submission:
    """Records the finish of a ranked attempt and counts it in its deal's result counts, in the caller's
    transaction. The deal is the attempt's, so a hand finished after midnight counts for the day it
    started."""
    if not attempt.ranked:
        raise ValueError("only a ranked attempt is submitted")
    with transaction.atomic():
        submission = Submission.objects.create(
            attempt=attempt,
            deal_id=attempt.deal_id,
            player_id=attempt.player_id,
            result=result,
            turns=turns,
            finished_at=finished_at,
        )
        _result_count_increment(deal_id=attempt.deal_id, result=result)
    return submission


def _result_count_increment(*, deal_id: int, result: int) -> None:
    counts = ResultCount.objects.filter(deal_id=deal_id, result=result)
    if counts.update(count=F("count") + 1):
        return
    try:
        with transaction.atomic():
            ResultCount.objects.create(deal_id=deal_id, result=result, count=1)
    except IntegrityError:
        # A concurrent first submission of this result created the row; add to it.
        counts.update(count=F("count") + 1)


def attempt_hand_over(*, game: Game, state: State) -> Submission | None:
    """Runs in the transaction of the move that ended a game's hand: records the submission when the game
    is a ranked daily attempt. Practice and archive games are not submitted."""
    attempt = Attempt.objects.filter(game=game, ranked=True).first()
    if attempt is None or Submission.objects.filter(attempt=attempt).exists():
        return None
    hand: dict[str, Any] = state.hand_results[-1]
    return submission_record(
        attempt=attempt,
        result=daily_result(state, 0),
        turns=int(hand["turns_taken"][0]),
        finished_at=clock.now(),
    )
