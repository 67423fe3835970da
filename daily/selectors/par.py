"""Daily par, as the reads show it: nothing of it, not even a look-up, before the day's seed is revealed."""

from django.db.models import Sum

from daily import clock
from daily.errors import ParNotReady
from daily.models import DailyDeal, DailyPar, ResultCount
from daily.selectors.history import player_daily_history, share_text
from daily.selectors.reveal import daily_deal_seed_revealed
from daily.shapes import (
    HistoryEntryWithPar,
    HistoryWithPar,
    LeaderboardEntryWithPar,
    LeaderboardPage,
    LeaderboardPageWithPar,
    ParReplay,
    ParSummary,
    ReplayStep,
    SeatView,
    Standing,
    StandingWithPar,
)
from games.engine import Rules, State, observe
from games.engine.par import PLAYER_SEAT, RevealedDeal, dealt, line_steps
from games.models import Player


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


def daily_par_summary(*, par: DailyPar) -> ParSummary:
    return {
        "result": par.result,
        "turns": par.turns,
        "finished": par.finished,
        "method": par.method,
        "node_budget": par.node_budget,
        "nodes": par.nodes,
        "computed_at": par.computed_at,
    }


def daily_par_view(*, deal: DailyDeal) -> ParSummary | None:
    par = daily_par_revealed(deal=deal)
    return None if par is None else daily_par_summary(par=par)


def par_reached_count(*, par: DailyPar) -> int:
    """How many of the day's ranked results reached par (par is at least the best of them, so: equal it)."""
    reached = ResultCount.objects.filter(deal_id=par.deal_id, result__gte=par.result).aggregate(Sum("count"))
    return int(reached["count__sum"] or 0)


def leaderboard_page_par(*, deal: DailyDeal, page: LeaderboardPage) -> LeaderboardPageWithPar:
    """The leaderboard page with the day's par, how many reached it and each result against it; all null
    until par is published."""
    par = daily_par_revealed(deal=deal)
    entries: list[LeaderboardEntryWithPar] = [
        {**entry, "vs_par": None if par is None else entry["result"] - par.result}
        for entry in page["entries"]
    ]
    return {
        **page,
        "par": None if par is None else par.result,
        "par_reached": None if par is None else par_reached_count(par=par),
        "entries": entries,
    }


def leaderboard_me_par(*, deal: DailyDeal, standing: Standing) -> StandingWithPar:
    """The player's standing with the day's par, their result against it and how many reached it; all null
    until par is published."""
    par = daily_par_revealed(deal=deal)
    return {
        **standing,
        "par": None if par is None else par.result,
        "vs_par": None if par is None else standing["result"] - par.result,
        "par_reached": None if par is None else par_reached_count(par=par),
    }


def player_daily_history_par(*, player: Player) -> HistoryWithPar:
    """The player's history with each day's par and their result against it (null until published), and
    the share text with the latest day's par."""
    history = player_daily_history(player=player)
    days = [entry["date"] for entry in history["history"] if clock.is_over(entry["date"])]
    pars = dict(DailyPar.objects.filter(deal__date__in=days).values_list("deal__date", "result"))
    entries: list[HistoryEntryWithPar] = []
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


def _seat_0_view(state: State) -> SeatView:
    """What the player saw of the table: their own hand, every hand's size, the piles and the stock's size."""
    seen = observe(state, PLAYER_SEAT)
    return {
        "current_seat": seen["current_seat"],
        "hand": seen["hand"],
        "hand_counts": seen["hand_counts"],
        "table": {"stock": seen["stock"], "piles": seen["piles"]},
    }


def daily_par_replay(*, deal: DailyDeal) -> ParReplay:
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
    steps: list[ReplayStep] = [
        {"seat": played.seat, "move": played.move.to_json(), **_seat_0_view(played.state)}
        for played in line_steps(game, par.moves)
    ]
    return {
        "date": deal.date,
        "number": deal.number,
        "seed": deal.seed,
        "rules": deal.rules,
        "opponents": [
            {"seat": seat, "name": opponent["name"], "level": opponent["level"]}
            for seat, opponent in enumerate(deal.opponents, start=1)
        ],
        "par": daily_par_summary(par=par),
        "start": _seat_0_view(dealt(game)),
        "steps": steps,
    }
