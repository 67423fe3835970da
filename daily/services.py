"""The writes of `daily`: creating the deals, starting attempts, recording ranked results and closing the
ranked attempts left unfinished at their day's finishing deadline."""

import logging
from collections import Counter
from collections.abc import Callable
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F, QuerySet

from daily import clock, persistence
from daily.errors import NoDailyDeal, RankedAttemptOpen
from daily.models import Attempt, DailyDeal, DailyPar, ResultCount, Submission
from daily.seasons import day_seed
from daily.selectors.game_checks import game_attempt, ranked_attempt_open
from daily.selectors.par import daily_deal_revealed
from daily.selectors.submissions import closing_submission, closing_submission_of, result_and_turns
from games.engine import (
    DIRECT,
    PLAYING,
    Rules,
    State,
    commitment,
    make_rules,
)
from games.engine.par import PLAYER_SEAT, LineOutcome, ParError, RevealedDeal, par_search, replay_line
from games.engine.players import NAMES
from games.models import Game, GameMove, Player
from games.services import game_create
from games.services.person_feed import person_broadcast

DAILY_RULE_SET = "classic"

logger = logging.getLogger(__name__)


def daily_deal_number(*, day: date) -> int:
    return (day - settings.DAILY_EPOCH).days + 1


def daily_deal_get_or_create(*, day: date) -> DailyDeal:
    """The deal of `day`, created if it does not exist yet. Every caller (the beat job, the API's first
    request of a day, the management command) comes here, so a deal is the same whoever creates it, and
    the unique date makes concurrent callers end up with the one row. A stored deal is never re-derived:
    its seed is the one its games were dealt from."""
    if day < settings.DAILY_EPOCH:
        raise NoDailyDeal(f"The first daily deal is that of {settings.DAILY_EPOCH.isoformat()}.")
    # Made once a day: every later call reads it, in one prepared statement.
    stored = persistence.deal_of_day(day)
    if stored is not None:
        return stored
    seed = day_seed(day)
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


def _day_broadcast(kind: str, day: date, **fields: object) -> bool:
    """Tells every person stream of a day's event (`daily_deal`, `daily_revealed`, `daily_par`,
    `daily_closed`), once a day and kind and the values of `fields` (a better par is told again), in the
    current transaction."""
    key = ":".join([kind, day.isoformat(), *(str(fields[name]) for name in sorted(fields))])
    return person_broadcast(type=kind, key=key, data={"date": day.isoformat(), **fields})


def daily_events_announce() -> list[str]:
    """The beat job's part of the person streams' daily events that no write causes: today's deal once the
    day has started (`daily_deal`, the deal made if it is missing) and the seed of the last day over
    revealed (`daily_revealed`). Each is told once; the broadcasts it made, as `kind:date`."""
    today = clock.today()
    made = []
    with transaction.atomic():
        if today >= settings.DAILY_EPOCH:
            daily_deal_get_or_create(day=today)
            if _day_broadcast("daily_deal", today):
                made.append(f"daily_deal:{today.isoformat()}")
        over = clock.last_day_over()
        if DailyDeal.objects.filter(date=over).exists() and _day_broadcast("daily_revealed", over):
            made.append(f"daily_revealed:{over.isoformat()}")
    return made


def daily_deals_create_upcoming() -> list[DailyDeal]:
    """Today's and tomorrow's deals, so that the next day's deal exists before its day starts."""
    today = clock.today()
    return [daily_deal_get_or_create(day=day) for day in (today, today + timedelta(days=1))]


def daily_deal_get_started(*, day: date) -> DailyDeal:
    """The deal of a day that has started: today's or an earlier one. It is created if it is missing (the
    one write a read may cause: a deal is a pure function of its date and the server's secret); nothing else
    is written, not even past the finishing deadline, where the reads show unfinished ranked attempts as
    closed before the beat job records them."""
    if not clock.started(day):
        raise NoDailyDeal("That day's deal has not started yet.")
    return daily_deal_get_or_create(day=day)


def _has_ranked_attempt(*, player: Player, deal: DailyDeal) -> bool:
    return Attempt.objects.filter(player=player, deal=deal, ranked=True).exists()


def daily_game_create(*, player: Player, deal: DailyDeal) -> Game:
    """A game dealt from the deal, as every attempt at it is: one hand shuffled from the day's seed itself,
    the player against the deal's computer players, under its rules."""
    return game_create(
        player=player,
        levels=[opponent["level"] for opponent in deal.opponents],
        rules=Rules.from_json(deal.rules),
        target_score=None,
        seed=bytes.fromhex(deal.seed),
        seed_scheme=DIRECT,
    )


def attempt_start(*, player: Player, day: date) -> Attempt:
    """A new game on the deal of `day`. The first attempt at today's deal is ranked and exists from now
    on, finished or not; later ones, and any at an earlier day's deal, are unranked practice. No attempt is
    started at a deal while the player's ranked attempt at it is unfinished: computer players are a function
    of the seed and the table, so practice at the same deal would show the ranked game's future draws."""
    deal = daily_deal_get_started(day=day)
    with transaction.atomic():
        # One start at a time per player, so that parallel starts see each other's ranked attempt instead of
        # colliding on the one-ranked-attempt constraint. NO KEY UPDATE leaves the player's other writes,
        # which only reference the row, free to go on.
        Player.objects.select_for_update(no_key=True).get(pk=player.pk)
        has_ranked = _has_ranked_attempt(player=player, deal=deal)
        if has_ranked and ranked_attempt_open(player=player, deal=deal):
            raise RankedAttemptOpen()
        game = daily_game_create(player=player, deal=deal)
        started_at = clock.now()
        # Ranked only while today's finishing deadline is ahead: with a negative finishing grace (the quick
        # start's recipe for seeing a day end) today can be over already, and an attempt there is practice.
        if not has_ranked and deal.date == clock.today() and not clock.is_over(deal.date):
            try:
                with transaction.atomic():
                    return Attempt.objects.create(
                        player=player, deal=deal, game=game, ranked=True, started_at=started_at
                    )
            except IntegrityError:
                # A parallel start the player lock did not hold back (SQLite has no row locks) took the
                # ranked attempt first: this one is practice.
                pass
        return Attempt.objects.create(
            player=player, deal=deal, game=game, ranked=False, started_at=started_at
        )


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
        _result_count_add(deal_id=attempt.deal_id, result=result, count=1)
    return submission


def _result_count_add(*, deal_id: int, result: int, count: int) -> None:
    counts = ResultCount.objects.filter(deal_id=deal_id, result=result)
    if counts.update(count=F("count") + count):
        return
    try:
        with transaction.atomic():
            ResultCount.objects.create(deal_id=deal_id, result=result, count=count)
    except IntegrityError:
        # A concurrent first submission of this result created the row; add to it.
        counts.update(count=F("count") + count)


def attempt_hand_over(*, game: Game, state: State) -> Submission | None:
    """Runs in the transaction of the move that ended a game's hand: records the submission when the game
    is a ranked daily attempt. Practice and archive games are not submitted."""
    attempt = game_attempt(game=game)
    if attempt is None or not attempt.ranked or Submission.objects.filter(attempt=attempt).exists():
        return None
    result, turns = result_and_turns(state)
    return submission_record(attempt=attempt, result=result, turns=turns, finished_at=clock.now())


# Closing the ranked attempts left unfinished at the finishing deadline: the beat job's work, never a read's.
# Any number of closers may run at once. Each batch takes the attempts no other closer holds (SKIP LOCKED, so
# two workers split the day between them), then their game rows, which a move's write holds until it commits
# (the move's deadline guard looks again once it holds the row), so an attempt is closed as the player left
# it; and it is closed only if it has no submission once both are held. The attempts are locked FOR NO KEY
# UPDATE: a move that ends the hand inserts a submission that references its attempt (a KEY SHARE lock), and
# must not wait for a closer that waits for its game.

CLOSE_BATCH_SIZE = 1000


def _unfinished_ranked(*, deal: DailyDeal) -> QuerySet[Attempt]:
    return Attempt.objects.filter(deal=deal, ranked=True, submission__isnull=True)


@transaction.atomic
def _attempts_close_batch(*, deal: DailyDeal, size: int, after: int) -> tuple[int | None, int]:
    """Closes up to `size` of the deal's unfinished ranked attempts after id `after` that no other closer
    holds; returns the last id it took (None when there was none) and how many it closed. Walking the ids
    upwards keeps each batch one index range, however many attempts the earlier batches closed."""
    attempts = list(
        _unfinished_ranked(deal=deal)
        .filter(id__gt=after)
        .select_for_update(no_key=True, skip_locked=True, of=("self",))
        .order_by("id")[:size]
    )
    if not attempts:
        return None, 0
    # The game rows in id order, as every closer takes them. Only what a closing result needs is read from
    # the state: seat 0's hand and turns while the hand is in play (the whole state of a game is kilobytes).
    games = {
        game["id"]: game
        for game in Game.objects.select_for_update()
        .filter(id__in=[attempt.game_id for attempt in attempts])
        .order_by("id")
        .values(
            "id", hand_status=F("state__status"), hand=F("state__hands__0"), turns=F("state__turns_taken__0")
        )
    }
    # Read after the locks are held: a hand that ended just before the deadline has its submission now.
    submitted = set(Submission.objects.filter(attempt__in=attempts).values_list("attempt_id", flat=True))
    submissions = []
    for attempt in attempts:
        if attempt.id in submitted:
            continue
        attempt.deal = deal
        game = games[attempt.game_id]
        if game["hand_status"] == PLAYING:
            submissions.append(closing_submission_of(attempt=attempt, hand=game["hand"], turns=game["turns"]))
        else:
            # Unreachable while hands end with their submission in the same transaction; kept exact anyway.
            state = State.from_json(Game.objects.get(id=attempt.game_id).state)
            submissions.append(closing_submission(attempt=attempt, state=state))
    Submission.objects.bulk_create(submissions)
    for result, count in sorted(Counter(submission.result for submission in submissions).items()):
        _result_count_add(deal_id=deal.id, result=result, count=count)
    return attempts[-1].id, len(submissions)


@transaction.atomic
def _deal_mark_closed(*, deal: DailyDeal) -> bool:
    """Marks the deal closed if no unfinished ranked attempt is left. Locking its row first waits for any
    transaction still inserting an attempt at it (each holds a key-share lock on the row), so that a ranked
    attempt started just before midnight and committed late is not missed."""
    locked = DailyDeal.objects.select_for_update().get(pk=deal.pk)
    if locked.attempts_closed_at is None:
        if _unfinished_ranked(deal=deal).exists():
            return False
        locked.attempts_closed_at = clock.now()
        locked.save(update_fields=["attempts_closed_at"])
        _day_broadcast("daily_revealed", deal.date)
        _day_broadcast("daily_closed", deal.date)
    deal.attempts_closed_at = locked.attempts_closed_at
    return True


def daily_deal_close(
    *,
    deal: DailyDeal,
    batch_size: int = CLOSE_BATCH_SIZE,
    on_batch: Callable[[int], None] | None = None,
) -> int:
    """Once the deal's finishing deadline has passed, closes its ranked attempts still unfinished, one
    transaction per batch, and marks the deal closed when none is left. Returns how many this call closed.
    Interrupted, it resumes where it stopped; run twice, or by two workers at once, each attempt is closed
    once. When attempts are left that another closer held, it leaves the marking to that closer (or to the
    next run)."""
    if deal.attempts_closed_at is not None or not clock.is_over(deal.date):
        return 0
    closed = 0
    after = 0
    while True:
        last, closed_now = _attempts_close_batch(deal=deal, size=batch_size, after=after)
        if last is None:
            _deal_mark_closed(deal=deal)
            return closed
        closed += closed_now
        after = last
        if on_batch is not None:
            on_batch(closed_now)


def daily_deals_close_due() -> dict[date, int]:
    """Closes every day whose finishing deadline has passed and that is not closed yet, oldest first, so a
    job that was down catches up; by day, how many attempts were closed."""
    due = DailyDeal.objects.filter(attempts_closed_at__isnull=True, date__lte=clock.last_day_over())
    return {deal.date: daily_deal_close(deal=deal) for deal in due.order_by("date")}


# Daily par: the best result known on a day's deal. Nothing of it is computed before the day's seed is
# revealed, so that neither a response nor its timing can tell anything of it while the day is played; and it
# is computed once the day's ranked attempts are closed, when the day's results are final (a ranked attempt
# finishes by the deadline at the latest, or is closed as it stood then), so that par is the better of the
# search and the day's best recorded line, and stays at least the day's best.


def submission_line(*, submission: Submission) -> list[dict[str, object]]:
    """The moves the player made in the ranked attempt's game, in order, from the server's move log."""
    return list(
        GameMove.objects.filter(game_id=submission.attempt.game_id, seat=PLAYER_SEAT, hand_number=1)
        .order_by("seq")
        .values_list("move", flat=True)
    )


def _best_player_line(
    *, deal: DailyDeal, revealed: RevealedDeal, above: int
) -> tuple[Submission, LineOutcome, list[dict[str, object]]] | None:
    """The best ranked result of the day above `above` whose line, replayed from the game's move log through
    the engine, reaches exactly the result recorded; None when no result is above."""
    better = (
        Submission.objects.filter(deal=deal, result__gt=above)
        .select_related("attempt")
        .order_by("-result", "closed", "turns", "finished_at", "id")
    )
    for submission in better:
        moves = submission_line(submission=submission)
        try:
            outcome = replay_line(revealed, moves)
        except ParError as error:
            logger.error("daily par: the line of submission %s does not replay: %s", submission.id, error)
            continue
        if (outcome.result, outcome.turns) != (submission.result, submission.turns):
            logger.error(
                "daily par: the line of submission %s replays to %+d in %d turns, not %+d in %d",
                submission.id,
                outcome.result,
                outcome.turns,
                submission.result,
                submission.turns,
            )
            continue
        return submission, outcome, moves
    return None


def daily_par_compute(
    *, deal: DailyDeal, node_budget: int | None = None, again: bool = False
) -> DailyPar | None:
    """The day's par: computed and stored if the day has none yet (or, with `again`, searched anew and
    stored if better than the one stored). Only past the finishing deadline; the day's unfinished ranked
    attempts are closed first if the close job has not done it. Returns None when another worker holds the
    day (it is computing it) or its close is still in progress elsewhere. Run twice, or by two workers at
    once, the day has one par: the deal's row is held FOR NO KEY UPDATE while its par is computed, and a
    worker that finds it held moves on."""
    if not clock.is_over(deal.date):
        raise ValueError(f"the seed of {deal.date.isoformat()} is not revealed yet: par is not computed")
    if deal.attempts_closed_at is None:
        daily_deal_close(deal=deal)
        if deal.attempts_closed_at is None:
            return None
    budget = settings.DAILY_PAR_NODE_BUDGET if node_budget is None else node_budget
    if not _rows_lock():
        # SQLite locks the whole database for a transaction's writes from its start (the settings' IMMEDIATE
        # mode): a search inside one would hold every other write back for its seconds. So the search comes
        # first, and the transaction only checks what is stored and stores. Two searches of a day may then
        # overlap; the day still has one par, the better.
        stored = DailyPar.objects.filter(deal=deal).first()
        if stored is not None and not again:
            return stored
        values = _par_values(deal=deal, budget=budget)
        with transaction.atomic():
            return _par_store(deal=deal, values=values, stored=DailyPar.objects.filter(deal=deal).first())
    with transaction.atomic():
        # NO KEY UPDATE, so that starting an unranked attempt at the deal (a key-share lock) does not wait.
        held = DailyDeal.objects.select_for_update(no_key=True, skip_locked=True).filter(pk=deal.pk)
        if not held.exists():
            return None
        stored = DailyPar.objects.filter(deal=deal).first()
        if stored is not None and not again:
            return stored
        return _par_store(deal=deal, values=_par_values(deal=deal, budget=budget), stored=stored)


def _rows_lock() -> bool:
    """Whether the database locks rows (PostgreSQL), rather than the whole database for a write (SQLite)."""
    return bool(connection.features.has_select_for_update)


def _par_values(*, deal: DailyDeal, budget: int) -> dict[str, object]:
    """The par row's values: the search's line, or the day's best ranked line when it beats the search."""
    revealed = daily_deal_revealed(deal=deal)
    found = par_search(revealed, node_budget=budget)
    values: dict[str, object] = {
        "result": found.result,
        "turns": found.turns,
        "finished": found.finished,
        "moves": found.line_json(),
        "method": found.method,
        "submission": None,
    }
    player = _best_player_line(deal=deal, revealed=revealed, above=found.result)
    if player is not None:
        submission, outcome, moves = player
        values = {
            "result": outcome.result,
            "turns": outcome.turns,
            "finished": outcome.finished,
            "moves": moves,
            "method": DailyPar.Method.PLAYER,
            "submission": submission,
        }
    values.update(node_budget=budget, nodes=found.nodes, search_result=found.result, computed_at=clock.now())
    return values


def _par_store(*, deal: DailyDeal, values: dict[str, object], stored: DailyPar | None) -> DailyPar:
    """Stores the par unless the one stored is at least as good; the day's par."""
    result = values["result"]
    assert isinstance(result, int)
    if stored is not None and stored.result >= result:
        return stored
    par, _ = DailyPar.objects.update_or_create(deal=deal, defaults=values)
    _day_broadcast("daily_par", deal.date, par=par.result)
    return par


def daily_pars_due() -> QuerySet[DailyDeal]:
    """The days whose seed is revealed and that have no par yet, newest first: yesterday's is the one
    players are waiting for; older ones are caught up after it."""
    return DailyDeal.objects.filter(date__lte=clock.last_day_over(), par__isnull=True).order_by("-date")


def daily_pars_compute_due() -> dict[date, int | None]:
    """Computes the par of every day due, closing its unfinished ranked attempts first if the close job has
    not; by day, the par, or None for a day another worker holds, whose close is still in progress or whose
    search failed (logged: a day that fails must not hold back the older days behind it)."""
    computed: dict[date, int | None] = {}
    for deal in daily_pars_due():
        try:
            par = daily_par_compute(deal=deal)
        except Exception:
            logger.exception("daily par: computing the par of %s failed", deal.date.isoformat())
            par = None
        computed[deal.date] = None if par is None else par.result
    return computed
