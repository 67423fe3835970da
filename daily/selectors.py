"""The reads of `daily`: deals as the API shows them, the leaderboard, a player's rank and history.

Ranks come from the per-day result counts: a submission's rank is 1 + the number of submissions with a
strictly higher result, a sum over at most a few hundred small rows, whatever the number of submissions.
Leaderboard pages are read by keyset from the index on (deal, -result, closed, turns, finished_at,
public_id)."""

import base64
import binascii
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import BooleanField, Q, QuerySet, Sum
from django.db.models.expressions import RawSQL

from daily import clock
from daily.errors import NoRankedResult, ParNotReady
from daily.models import Attempt, DailyDeal, DailyPar, ResultCount, Submission
from games.engine import DIRECT, PLAYING, Rules, State, daily_result, hand_penalty, observe
from games.engine.par import PLAYER_SEAT, RevealedDeal, dealt, line_steps
from games.errors import InvalidCursor, InvalidLimit
from games.models import Game, Player
from kingscorner import json_depth

LEADERBOARD_LIMIT_DEFAULT = 50
LEADERBOARD_LIMIT_MAX = 100
INTEGER_MIN, INTEGER_MAX = -(2**31), 2**31 - 1


def daily_deal_seed_revealed(*, deal: DailyDeal) -> bool:
    """A deal's seed is public once its day is over for the leaderboard: at its finishing deadline, after
    which no ranked attempt at it can be played on."""
    return clock.is_over(deal.date)


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
    return Submission(
        attempt=attempt,
        deal_id=attempt.deal_id,
        player_id=attempt.player_id,
        result=result,
        turns=turns,
        finished_at=clock.finish_deadline(attempt.deal.date),
        closed=True,
    )


def closing_submission_of(*, attempt: Attempt, hand: list[str], turns: int) -> Submission:
    """closing_submission of a hand still in play, from seat 0's hand and turns alone."""
    return Submission(
        attempt=attempt,
        deal_id=attempt.deal_id,
        player_id=attempt.player_id,
        result=-hand_penalty(hand),
        turns=turns,
        finished_at=clock.finish_deadline(attempt.deal.date),
        closed=True,
    )


def _expired_unrecorded(attempts: QuerySet[Attempt]) -> QuerySet[Attempt]:
    """Of `attempts`, the ranked ones past their day's finishing deadline that the close job has not
    recorded yet."""
    return attempts.filter(
        ranked=True, submission__isnull=True, deal__date__lte=clock.last_day_over()
    ).select_related("deal", "game")


def player_submission(*, player: Player, deal: DailyDeal) -> Submission | None:
    """The player's ranked result on the deal: recorded, or, past the deadline, the one the close job will
    record for a ranked attempt left unfinished; None while there is none."""
    submission = Submission.objects.filter(player=player, deal=deal).first()
    if submission is not None:
        return submission
    attempt = _expired_unrecorded(Attempt.objects.filter(player=player, deal=deal)).first()
    if attempt is None:
        return None
    return closing_submission(attempt=attempt, state=State.from_json(attempt.game.state))


LEADERBOARD_STATUSES = ["open", "closing", "final"]


def leaderboard_status(*, deal: DailyDeal) -> str:
    """`open` while ranked attempts may still finish, `closing` from the finishing deadline until the close
    job has recorded every unfinished one, then `final`."""
    if not clock.is_over(deal.date):
        return "open"
    return "final" if deal.attempts_closed_at is not None else "closing"


def daily_deal_view(*, deal: DailyDeal, player: Player | None) -> dict[str, Any]:
    view: dict[str, Any] = {
        "date": deal.date,
        "number": deal.number,
        "rules": deal.rules,
        "opponents": [{"seat": seat, **opponent} for seat, opponent in enumerate(deal.opponents, start=1)],
        "commitment": deal.commitment,
        "seed": deal.seed if daily_deal_seed_revealed(deal=deal) else None,
        "seed_revealed_at": clock.finish_deadline(deal.date),
        "next_deal_in": clock.seconds_until_next_day(),
        "par": daily_par_view(deal=deal),
    }
    if player is not None:
        attempts = Attempt.objects.filter(player=player, deal=deal)
        view["attempts"] = [
            {
                "id": attempt.public_id,
                "game_id": attempt.game_id,
                "ranked": attempt.ranked,
                "started_at": attempt.started_at,
            }
            for attempt in attempts.order_by("started_at", "id")
        ]
        submission = player_submission(player=player, deal=deal)
        view["result"] = None if submission is None else _submission_standing(submission=submission)
    return view


# The leaderboard.


@dataclass(frozen=True)
class LeaderboardCursor:
    """The last entry of a page; the next page starts after it in the leaderboard's order."""

    result: int
    closed: bool
    turns: int
    finished_at: datetime
    public_id: uuid.UUID

    def encode(self) -> str:
        text = json.dumps(
            [self.result, self.closed, self.turns, self.finished_at.isoformat(), str(self.public_id)]
        )
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> "LeaderboardCursor":
        invalid = InvalidCursor("The cursor is not one this API gave.")
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            result, closed, turns, finished_at, public_id = json_depth.loads(raw)
            if not isinstance(public_id, str):
                raise TypeError("a public id is a string")
            cursor = cls(result, closed, turns, datetime.fromisoformat(finished_at), uuid.UUID(public_id))
            # Converting to UTC overflows for an instant outside the years 1..9999 there.
            cursor.finished_at.astimezone(UTC)
        # JsonTooDeep is a ValueError: a cursor this API gave nests one level.
        except (binascii.Error, ValueError, TypeError, OverflowError) as error:
            raise invalid from error
        # The values go to the database as they are: each must fit its column, or the query would fail.
        within = (
            (result, INTEGER_MIN, INTEGER_MAX),
            (turns, 0, INTEGER_MAX),
        )
        if (
            type(closed) is not bool
            or cursor.finished_at.tzinfo is None
            or any(type(value) is not int or not low <= value <= high for value, low, high in within)
        ):
            raise invalid
        return cursor


def leaderboard_limit(value: str | None) -> int:
    if value is None:
        return LEADERBOARD_LIMIT_DEFAULT
    # ASCII digits only: str.isdigit() also accepts "²", which int() refuses.
    if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= LEADERBOARD_LIMIT_MAX:
        raise InvalidLimit(f"limit is a whole number from 1 to {LEADERBOARD_LIMIT_MAX}.")
    return int(value)


def _better_counts(*, deal: DailyDeal) -> tuple[dict[int, int], int]:
    """For each result reached on the deal, how many submissions did strictly better; and the total."""
    better: dict[int, int] = {}
    total = 0
    for result, count in (
        ResultCount.objects.filter(deal=deal).order_by("-result").values_list("result", "count")
    ):
        better[result] = total
        total += count
    return better, total


def leaderboard_querysets(*, deal: DailyDeal, cursor: LeaderboardCursor | None) -> list[QuerySet[Submission]]:
    """What a page is read from, in order: without a cursor the whole board; after one, the rest of the
    cursor's result group and then the lower results, each one range of the board's index."""
    board = (
        Submission.objects.filter(deal=deal)
        .select_related("player")
        .only("public_id", "result", "closed", "turns", "finished_at", "player__id", "player__name")
        .order_by("-result", "closed", "turns", "finished_at", "public_id")
    )
    if cursor is None:
        return [board]
    # A row comparison, so that PostgreSQL reads the rest of the group as an index range, not a filter. Raw
    # SQL gets no field's conversion, so the finish time is written as the column stores it: on SQLite that
    # is naive UTC text, and an aware value would compare unequal to it.
    table = Submission._meta.db_table
    after = RawSQL(
        f'("{table}"."closed", "{table}"."turns", "{table}"."finished_at", "{table}"."public_id")'
        " > (%s, %s, %s, %s)",
        (
            cursor.closed,
            cursor.turns,
            connection.ops.adapt_datetimefield_value(cursor.finished_at),
            Submission._meta.get_field("public_id").get_db_prep_value(cursor.public_id, connection),
        ),
        output_field=BooleanField(),
    )
    return [board.filter(after, result=cursor.result), board.filter(result__lt=cursor.result)]


def _board_rows(*, deal: DailyDeal, cursor: LeaderboardCursor | None, limit: int) -> list[Submission]:
    rows: list[Submission] = []
    for queryset in leaderboard_querysets(deal=deal, cursor=cursor):
        rows += queryset[: limit - len(rows)]
        if len(rows) == limit:
            break
    return rows


def leaderboard_page(*, deal: DailyDeal, cursor: str | None, limit: int) -> dict[str, Any]:
    """One page of the deal's leaderboard: higher results first; equal results share a rank and are
    ordered finished before closed at the deadline, then by fewer turns, then earlier finish. `next_cursor`
    is None on the last page. While the day is `closing`, the attempts the close job has not recorded yet
    are not on it."""
    after = None if cursor is None else LeaderboardCursor.decode(cursor)
    rows = _board_rows(deal=deal, cursor=after, limit=limit + 1)
    better, count = _better_counts(deal=deal)
    page = rows[:limit]
    next_cursor = None
    if len(rows) > limit:
        last = page[-1]
        next_cursor = LeaderboardCursor(
            last.result, last.closed, last.turns, last.finished_at, last.public_id
        ).encode()
    return {
        "date": deal.date,
        "status": leaderboard_status(deal=deal),
        "count": count,
        "entries": [
            {
                "rank": better.get(submission.result, 0) + 1,
                "player": {"id": submission.player.id, "name": submission.player.name},
                "result": submission.result,
                "turns": submission.turns,
                "finished_at": submission.finished_at,
                "closed": submission.closed,
            }
            for submission in page
        ],
        "next_cursor": next_cursor,
    }


def _percentile(*, better: int, count: int) -> float:
    """The percentage of the day's submissions with a result at or below this one, this one included."""
    return round(100 * (count - better) / count, 1)


def _better_and_count(day_counts: list[tuple[int, int]], result: int) -> tuple[int, int]:
    """From a day's (result, count) rows: how many submissions did strictly better than `result`, and how
    many there are in all."""
    better = sum(count for other, count in day_counts if other > result)
    return better, sum(count for _, count in day_counts)


def _submission_standing(*, submission: Submission) -> dict[str, Any]:
    """Where a submission stands on its day; one the close job has not recorded yet counts itself in."""
    day_counts = list(ResultCount.objects.filter(deal_id=submission.deal_id).values_list("result", "count"))
    if submission.pk is None:
        day_counts.append((submission.result, 1))
    better, count = _better_and_count(day_counts, submission.result)
    return {
        "rank": better + 1,
        "result": submission.result,
        "turns": submission.turns,
        "finished_at": submission.finished_at,
        "closed": submission.closed,
        "percentile": _percentile(better=better, count=count),
        "count": count,
    }


def leaderboard_me(*, deal: DailyDeal, player: Player) -> dict[str, Any]:
    submission = player_submission(player=player, deal=deal)
    if submission is None:
        raise NoRankedResult(f"You have no ranked result on the deal of {deal.date.isoformat()}.")
    return _submission_standing(submission=submission)


# A player's history.


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


def player_daily_history(*, player: Player) -> dict[str, Any]:
    """The player's ranked results, newest first, with the rank each has now; streaks; mean result; and
    the share text of the latest one."""
    submissions = list(Submission.objects.filter(player=player).select_related("deal"))
    # Past the deadline, a ranked attempt the close job has not recorded yet is shown as it will record it.
    for attempt in _expired_unrecorded(Attempt.objects.filter(player=player)):
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
    for submission in submissions:
        if submission.pk is None:
            counts[submission.deal_id].append((submission.result, 1))
    history = []
    for submission in submissions:
        better, count = _better_and_count(counts[submission.deal_id], submission.result)
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


# The checks `games` asks of a game through its hooks.


def _dealt_as_daily(game: Game) -> bool:
    """Only daily attempts deal a game straight from its seed, so any other game needs no look-up: the
    moves of every game pass the daily hooks, and most games are not daily ones."""
    return bool(game.state.get("seed_scheme") == DIRECT)


def game_attempt(*, game: Game) -> Attempt | None:
    """The daily attempt the game is played for, with its deal; None for any other game."""
    if not _dealt_as_daily(game):
        return None
    return Attempt.objects.filter(game=game).select_related("deal").first()


def game_seed_may_be_revealed(*, game: Game) -> bool:
    """A daily game shows its seed only once its deal's day is over for the leaderboard."""
    attempt = game_attempt(game=game)
    return attempt is None or daily_deal_seed_revealed(deal=attempt.deal)


def _open_ranked_attempts(*, player_id: Any) -> QuerySet[Attempt]:
    """The player's ranked attempts that may still be finished: none recorded, the day not over."""
    return Attempt.objects.filter(
        player_id=player_id, ranked=True, submission__isnull=True, deal__date__gt=clock.last_day_over()
    )


def ranked_attempt_open(*, player: Player, deal: DailyDeal) -> bool:
    """Whether the player's ranked attempt at the deal is unfinished and may still be finished."""
    return _open_ranked_attempts(player_id=player.pk).filter(deal=deal).exists()


def player_in_ranked_attempt(*, player: Player) -> bool:
    """Whether any ranked attempt of the player's is unfinished and may still be finished."""
    return _open_ranked_attempts(player_id=player.pk).exists()


def game_hints_refused(*, game: Game) -> bool:
    """Hints are refused while the player's ranked attempt at the game's deal is open: in the ranked game
    itself and in any other game at the same deal beside it."""
    attempt = game_attempt(game=game)
    if attempt is None or clock.is_over(attempt.deal.date):
        return False
    return Attempt.objects.filter(
        player_id=attempt.player_id, deal_id=attempt.deal_id, ranked=True, submission__isnull=True
    ).exists()


def game_moves_expired(*, game: Game) -> bool:
    """A ranked daily game still in play after its deal's finishing deadline takes no more moves: the
    attempt is closed as it stood at the deadline."""
    if game.status != PLAYING:
        return False
    attempt = game_attempt(game=game)
    return attempt is not None and attempt.ranked and clock.is_over(attempt.deal.date)


def expired_ranked_games() -> Q:
    """As a filter on games: the ranked daily games still in play past their day's finishing deadline."""
    return Q(
        status=Game.Status.PLAYING,
        daily_attempt__ranked=True,
        daily_attempt__deal__date__lte=clock.last_day_over(),
    )


# Daily par, as the reads show it: nothing of it, not even a look-up, before the day's seed is revealed.


def daily_deal_revealed(*, deal: DailyDeal) -> RevealedDeal:
    """The deal as the par search plays it: its seed, rules and computer opponents' levels."""
    return RevealedDeal(
        seed=bytes.fromhex(deal.seed),
        rules=Rules.from_json(deal.rules),
        levels=tuple(opponent["level"] for opponent in deal.opponents),
    )


def daily_par_revealed(*, deal: DailyDeal) -> DailyPar | None:
    """The day's par once its seed is revealed and par is computed; None before either."""
    if not daily_deal_seed_revealed(deal=deal):
        return None
    return DailyPar.objects.filter(deal=deal).first()


def daily_par_summary(*, par: DailyPar) -> dict[str, Any]:
    return {
        "result": par.result,
        "turns": par.turns,
        "finished": par.finished,
        "method": par.method,
        "node_budget": par.node_budget,
        "nodes": par.nodes,
        "computed_at": par.computed_at,
    }


def daily_par_view(*, deal: DailyDeal) -> dict[str, Any] | None:
    par = daily_par_revealed(deal=deal)
    return None if par is None else daily_par_summary(par=par)


def par_reached_count(*, par: DailyPar) -> int:
    """How many of the day's ranked results reached par (par is at least the best of them, so: equal it)."""
    reached = ResultCount.objects.filter(deal_id=par.deal_id, result__gte=par.result).aggregate(Sum("count"))
    return int(reached["count__sum"] or 0)


def leaderboard_page_par(*, deal: DailyDeal, page: dict[str, Any]) -> dict[str, Any]:
    """The leaderboard page with the day's par, how many reached it and each result against it; all null
    until par is published."""
    par = daily_par_revealed(deal=deal)
    entries = [
        {**entry, "vs_par": None if par is None else entry["result"] - par.result}
        for entry in page["entries"]
    ]
    return {
        **page,
        "par": None if par is None else par.result,
        "par_reached": None if par is None else par_reached_count(par=par),
        "entries": entries,
    }


def leaderboard_me_par(*, deal: DailyDeal, standing: dict[str, Any]) -> dict[str, Any]:
    """The player's standing with the day's par, their result against it and how many reached it; all null
    until par is published."""
    par = daily_par_revealed(deal=deal)
    return {
        **standing,
        "par": None if par is None else par.result,
        "vs_par": None if par is None else standing["result"] - par.result,
        "par_reached": None if par is None else par_reached_count(par=par),
    }


def player_daily_history_par(*, player: Player) -> dict[str, Any]:
    """The player's history with each day's par and their result against it (null until published), and
    the share text with the latest day's par."""
    history = player_daily_history(player=player)
    days = [entry["date"] for entry in history["history"] if clock.is_over(entry["date"])]
    pars = dict(DailyPar.objects.filter(deal__date__in=days).values_list("deal__date", "result"))
    entries = []
    for entry in history["history"]:
        par = pars.get(entry["date"])
        entries.append({**entry, "par": par, "vs_par": None if par is None else entry["result"] - par})
    latest = entries[0] if entries else None
    return {
        **history,
        "history": entries,
        "share_text": None
        if latest is None
        else share_text(
            number=latest["number"],
            result=latest["result"],
            rank=latest["rank"],
            count=latest["count"],
            par=latest["par"],
        ),
    }


def _seat_0_view(state: State) -> dict[str, Any]:
    """What the player saw of the table: their own hand, every hand's size, the piles and the stock's size."""
    seen = observe(state, PLAYER_SEAT)
    return {
        "current_seat": seen["current_seat"],
        "hand": seen["hand"],
        "hand_counts": seen["hand_counts"],
        "table": {"stock": seen["stock"], "piles": seen["piles"]},
    }


def daily_par_replay(*, deal: DailyDeal) -> dict[str, Any]:
    """The par line as a replay: the deal as the player saw it, then every move of the hand, the computer
    players' included, each with the table as the player saw it after it. Only what seat 0 saw then: never
    a card in another hand or in the stock."""
    revealed = daily_deal_seed_revealed(deal=deal)
    par = daily_par_revealed(deal=deal)
    if par is None:
        raise ParNotReady(
            f"The par of {deal.date.isoformat()} is computed shortly after its seed is revealed."
            if revealed
            else f"The par of {deal.date.isoformat()} is published once its seed is revealed, at "
            f"{clock.finish_deadline(deal.date).isoformat()}."
        )
    game = daily_deal_revealed(deal=deal)
    steps = [
        {"seat": played.seat, "move": played.move.to_json(), **_seat_0_view(played.state)}
        for played in line_steps(game, par.moves)
    ]
    return {
        "date": deal.date,
        "number": deal.number,
        "seed": deal.seed,
        "rules": deal.rules,
        "opponents": [{"seat": seat, **opponent} for seat, opponent in enumerate(deal.opponents, start=1)],
        "par": daily_par_summary(par=par),
        "start": _seat_0_view(dealt(game)),
        "steps": steps,
    }
