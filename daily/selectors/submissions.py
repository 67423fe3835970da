"""What a player's ranked result is or will be: recorded, or, for a ranked attempt past its deadline, the
one the close job will record."""

from collections.abc import Iterable

from django.db.models import Count, QuerySet

from daily import clock
from daily.models import Attempt, DailyDeal, Submission
from games.engine import PLAYING, State, daily_result, hand_penalty
from games.models import Player


def result_and_turns(state: State) -> tuple[int, int]:
    """Seat 0's daily result and turns: those of the hand once it is over; while it is in play, those of a
    player who did not go out, as the hand stands (docs/rules.md)."""
    if state.status == PLAYING:
        return -hand_penalty(state.hands[0]), state.turns_taken[0]
    return daily_result(state, 0), int(state.hand_results[-1]["turns_taken"][0])


def closing_submission(*, attempt: Attempt, state: State) -> Submission:
    """The submission of a ranked attempt unfinished at its finishing deadline, built from its game's state:
    a player who did not go out, as the hand stands, finished at the deadline and marked closed. The close
    job records exactly this; reads before the job show it unsaved, so nobody sees the attempt as open."""
    result, turns = result_and_turns(state)
    return _closed_submission(attempt, result, turns)


def closing_submission_of(*, attempt: Attempt, hand: list[str], turns: int) -> Submission:
    """closing_submission of a hand still in play, from seat 0's hand and turns alone."""
    return _closed_submission(attempt, -hand_penalty(hand), turns)


def _closed_submission(attempt: Attempt, result: int, turns: int) -> Submission:
    return Submission(
        attempt=attempt,
        deal_id=attempt.deal_id,
        player_id=attempt.player_id,
        result=result,
        turns=turns,
        finished_at=clock.finish_deadline(attempt.deal.date),
        closed=True,
    )


def expired_unrecorded(attempts: QuerySet[Attempt]) -> QuerySet[Attempt]:
    """Of `attempts`, the ranked ones past their day's finishing deadline that the close job has not
    recorded yet."""
    return attempts.filter(
        ranked=True, submission__isnull=True, deal__date__lte=clock.last_day_over()
    ).select_related("deal", "game")


def unrecorded_counts(deals: Iterable[DailyDeal]) -> dict[int, int]:
    """For each of `deals` that is `closing` (past its finishing deadline, the close job not done), how
    many ranked attempts at it are unfinished and not recorded yet: each counts in the day's `count`
    everywhere (the leaderboard, leaderboard/me, the deal's result, the history) from the deadline on, as
    the close job will record it, though only recorded results are on the board's pages. One query, and
    none when no deal is closing."""
    closing = [deal.pk for deal in deals if clock.is_over(deal.date) and deal.attempts_closed_at is None]
    if not closing:
        return {}
    rows = (
        expired_unrecorded(Attempt.objects.filter(deal_id__in=closing))
        .order_by()
        .values("deal_id")
        .annotate(unrecorded=Count("pk"))
        .values_list("deal_id", "unrecorded")
    )
    return dict(rows)


def player_submission(*, player: Player, deal: DailyDeal) -> Submission | None:
    """The player's ranked result on the deal: recorded, or, past the deadline, the one the close job will
    record for a ranked attempt left unfinished; None while there is none."""
    submission = Submission.objects.filter(player=player, deal=deal).first()
    if submission is not None:
        return submission
    if deal.date > clock.last_day_over():
        # Its deadline has not passed: no attempt at it is expired (expired_unrecorded), and no query asks.
        return None
    attempt = expired_unrecorded(Attempt.objects.filter(player=player, deal=deal)).first()
    if attempt is None:
        return None
    return closing_submission(attempt=attempt, state=State.from_json(attempt.game.state))
