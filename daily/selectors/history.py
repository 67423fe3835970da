"""A player's daily history: ranked results, streaks, the mean and the share text."""

from datetime import date, timedelta

from daily import clock
from daily.models import Attempt, ResultCount, Submission
from daily.selectors.leaderboard import better_and_count
from daily.selectors.submissions import closing_submission, expired_unrecorded, unrecorded_counts
from daily.shapes import History, HistoryEntry
from games.engine import State
from games.models import Player


def daily_streaks(days: list[date], *, today: date) -> tuple[int, int]:
    """The current and best runs of consecutive days in `days` (sorted, distinct). The current run is
    the one that reaches today or, while today's deal is not finished yet, yesterday."""
    best = run = 0
    previous: date | None = None
    for day in days:
        run = run + 1 if previous is not None and day - previous == timedelta(days=1) else 1
        best = max(best, run)
        previous = day
    current = run if previous is not None and today - previous <= timedelta(days=1) else 0
    return current, best


def share_text(*, number: int, result: int, rank: int, count: int, par: int | None = None) -> str:
    """What a player may post: the day, their result, the day's par once published, and their rank; nothing
    of the cards."""
    against = "" if par is None else f" · par {par:+d}"
    return f"Kings Corner Daily #{number}: {result:+d}{against} · rank {rank} of {count}"


def player_daily_history(*, player: Player) -> History:
    """The player's ranked results, newest first, with the rank each has now; streaks; mean result; and
    the share text of the latest one."""
    submissions = list(Submission.objects.filter(player=player).select_related("deal"))
    # Past the deadline, a ranked attempt the close job has not recorded yet is shown as it will record it.
    for attempt in expired_unrecorded(Attempt.objects.filter(player=player)):
        submission = closing_submission(attempt=attempt, state=State.from_json(attempt.game.state))
        submission.deal = attempt.deal
        submissions.append(submission)
    submissions.sort(key=lambda submission: submission.deal.date, reverse=True)
    deal_ids = [submission.deal_id for submission in submissions]
    counts: dict[int, list[tuple[int, int]]] = {deal_id: [] for deal_id in deal_ids}
    for deal_id, result, count in ResultCount.objects.filter(deal_id__in=deal_ids).values_list(
        "deal_id", "result", "count"
    ):
        counts[deal_id].append((result, count))
    # A closing day's count holds its unrecorded attempts (this player's too), as its leaderboard's does.
    deals = {submission.deal_id: submission.deal for submission in submissions}
    unrecorded = unrecorded_counts(deals.values())
    history: list[HistoryEntry] = []
    for submission in submissions:
        better, count = better_and_count(counts[submission.deal_id], submission.result)
        count += unrecorded.get(submission.deal_id, 0)
        history.append(
            {
                "date": submission.deal.date,
                "number": submission.deal.number,
                "result": submission.result,
                "rank": better + 1,
                "count": count,
                "closed": submission.closed,
            }
        )
    current, best = daily_streaks(sorted(entry["date"] for entry in history), today=clock.today())
    latest = history[0] if history else None
    return {
        "history": history,
        "current_streak": current,
        "best_streak": best,
        "mean_result": round(sum(entry["result"] for entry in history) / len(history), 2)
        if history
        else None,
        "share_text": None
        if latest is None
        else share_text(
            number=latest["number"], result=latest["result"], rank=latest["rank"], count=latest["count"]
        ),
    }
