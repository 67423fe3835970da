"""Sharp's sampling: what it infers from the public events, the deals it samples, and its time cutoff."""

import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from games.engine import (
    DECK,
    END_TURN,
    PLAYING,
    Event,
    Rules,
    State,
    make_rules,
    new_game,
    observe,
    observe_event,
    step,
)
from games.engine.masks import ALL_CARDS
from games.engine.players import Budget, best_spot, best_turn, decide, play_turn, turn_stream
from games.engine.players.inference import HandKnowledge, infer
from games.engine.players.rollout import (
    PlayOutRandom,
    SharedDraws,
    Table,
    draw_sample,
    draw_shuffle,
    sample_deal,
)
from games.engine.players.table import TableRules, bits, cards_mask, table_cards

Position = Callable[..., State]

# Decisions in these tests are limited by their budget of work alone, never by the clock.
NO_CUTOFF = Budget(cutoff_ms=60_000)


def normal_hand(rules: Rules, seed: bytes, players: int = 4) -> list[tuple[State, list[Event]]]:
    """Every position of one hand among normal players, each with the events that led to it."""
    state, events = new_game(rules=rules, players=players, seed=seed, target_score=None)
    positions = []
    while state.status == PLAYING:
        positions.append((state, list(events)))
        state, played = play_turn(state, "normal", seed)
        events.extend(played)
    return positions


def knowledge_of(state: State, events: list[Event], seat: int) -> HandKnowledge:
    history = [observe_event(event, seat) for event in events]
    return infer(TableRules.of(state.rules), state.players, state.rules.draw_timing == "end", history)


@pytest.mark.parametrize("preset", ["classic", "any_space", "casual"])
def test_nothing_inferred_about_a_normal_players_hand_is_ever_wrong(preset: str) -> None:
    rules = make_rules(preset)
    inferred = 0
    for index in range(12):
        for state, events in normal_hand(rules, hashlib.sha256(preset.encode() + bytes([index])).digest()):
            seat = state.current_seat
            knowledge = knowledge_of(state, events, seat)
            for other in range(state.players):
                if other == seat:
                    continue
                hand = cards_mask(state.hands[other])
                recent = knowledge.recent[other]
                # Every card it holds was held when its newest draw was made, and all but its draws since
                # the first moves that spoke about them were held from the deal.
                assert not hand & (recent[0] if recent else knowledge.excluded[other])
                assert (hand & knowledge.excluded[other]).bit_count() <= len(recent)
                inferred += knowledge.excluded[other].bit_count()
    assert inferred > 0


def test_a_player_ending_its_turn_holds_no_card_it_could_have_played(position: Position) -> None:
    state = position(
        hands=[["2C"], ["4H", "2S"], ["5C"]],
        piles={"N": ["TS"], "E": ["6D"], "S": ["QH"], "W": ["8H"], "NE": ["KD"]},
        stock=["AC", "AD", "AH"],
        current_seat=1,
    )
    piles = {name: list(pile) for name, pile in state.piles.items()}
    deal: Event = {"type": "deal", "hand_number": 1, "dealer": 0, "piles": piles, "stock": len(state.stock)}
    state, events = step(state, END_TURN, seat=1)
    knowledge = knowledge_of(state, [deal, {"type": "turn_start", "seat": 1, "turn": 1}, *events], 2)
    # On TS, 6D, QH, 8H and KD: the red nines, the black fives, the black jacks, the black sevens and the
    # black queens; and with three corners empty, any King.
    fitting = {"9H", "9D", "5C", "5S", "JC", "JS", "7C", "7S", "QC", "QS", "KC", "KD", "KH", "KS"}
    assert {card for card in DECK if knowledge.excluded[1] & cards_mask([card])} == fitting
    assert knowledge.excluded[0] == knowledge.excluded[2] == 0


def test_what_is_inferred_never_reads_the_card_of_another_seats_draw() -> None:
    rules = make_rules("classic")
    seed = hashlib.sha256(b"draws").digest()
    for state, events in normal_hand(rules, seed)[::3]:
        seat = state.current_seat
        table_rules = TableRules.of(rules)
        seen = [observe_event(event, seat) for event in events]
        assert infer(table_rules, 4, False, seen) == infer(table_rules, 4, False, events)


@pytest.mark.parametrize("preset", ["classic", "any_space"])
def test_sampled_deals_hold_only_cards_the_seat_has_not_seen(preset: str) -> None:
    rules = make_rules(preset)
    rng = random.Random(preset)
    for index in range(6):
        for state, events in normal_hand(rules, hashlib.sha256(b"deals" + bytes([index])).digest()):
            seat = state.current_seat
            hand = cards_mask(state.hands[seat])
            seen = hand | table_cards(state.piles)
            unseen = ALL_CARDS & ~seen
            table = Table(TableRules.of(rules), state.players, seat, False, False, False)
            knowledge = knowledge_of(state, events, seat)
            counts = [len(cards) for cards in state.hands]
            deal = sample_deal(rng, table, hand, counts, unseen, len(state.stock), knowledge)
            assert deal.hands[seat] == hand
            others = [deal.hands[other] for other in range(state.players) if other != seat]
            assert [other.bit_count() for other in others] == [c for o, c in enumerate(counts) if o != seat]
            assert len(deal.stock) == len(state.stock)
            dealt = sum(others) + sum(1 << card for card in deal.stock)
            assert dealt == unseen
            assert not any(other & seen for other in others)
            assert not set(deal.stock) & set(bits(seen))


def test_draw_sample_and_draw_shuffle_make_the_draws_of_pythons_own() -> None:
    # Every population size a deal can have, every sample size, on both of random.sample's ways.
    for seed in range(3):
        for n in range(53):
            population = list(range(100, 100 + n))
            for k in range(n + 1):
                ours, theirs = random.Random(seed * 1000 + k), random.Random(seed * 1000 + k)
                assert draw_sample(ours, population, k) == theirs.sample(population, k)
                assert ours.getstate() == theirs.getstate()
            ours, theirs = random.Random(seed), random.Random(seed)
            mine, python = list(population), list(population)
            draw_shuffle(ours, mine)
            theirs.shuffle(python)
            assert mine == python
            assert ours.getstate() == theirs.getstate()
    with pytest.raises(ValueError):
        draw_sample(random.Random(0), [1, 2], 3)


@pytest.mark.parametrize("seed", [0, 1, 2**32 - 1, 2**32, 2**64 - 5])
def test_every_play_out_of_a_round_reads_its_generators_draws_from_the_first(seed: int) -> None:
    """...and those are random.Random(seed)'s draws (SharedDraws seeds random.Random's C base directly)."""
    draws = SharedDraws(seed)
    first, second = PlayOutRandom(draws), PlayOutRandom(draws)
    bounds = list(range(1, 40))
    # The second reads past the first's last draw, then the first reads on: both see one sequence.
    seen_first = [first.uniform(m) for m in bounds[:10]]
    seen_second = [second.uniform(m) for m in bounds]
    seen_first += [first.uniform(m) for m in bounds[10:]]
    generator = random.Random(seed)
    expected = [int(generator.random() * m) for m in bounds]
    assert seen_first == expected
    assert seen_second == expected


def test_sampled_hands_leave_out_the_cards_a_player_is_known_not_to_hold() -> None:
    rules = TableRules.of(make_rules())
    table = Table(rules, 3, 0, False, False, False)
    unseen = ALL_CARDS & ~cards_mask(["2C", "3C"])
    hearts = cards_mask([card for card in DECK if card[1] == "H"])
    knowledge = HandKnowledge((0, hearts, 0), ((), (), ()))
    rng = random.Random(1)
    for _ in range(50):
        deal = sample_deal(rng, table, cards_mask(["2C", "3C"]), [2, 7, 7], unseen, 36, knowledge)
        assert not deal.hands[1] & hearts


def test_a_position_laid_out_by_hand_sets_the_unseen_cards_left_over_aside() -> None:
    table = Table(TableRules.of(make_rules()), 2, 0, False, False, False)
    deal = sample_deal(random.Random(0), table, 0, [0, 7], ALL_CARDS, 10, HandKnowledge.nothing(2))
    assert deal.hands[1].bit_count() == 7
    assert len(deal.stock) == 10
    assert not deal.hands[1] & sum(1 << card for card in deal.stock)


def rich_turn(position: Position) -> State:
    """A turn with several ways to play and none that goes out."""
    return position(
        hands=[["2C", "3D", "9H", "KH", "7S", "JD"], ["2D", "4C"], ["5D", "AS"]],
        piles={"N": ["QH"], "E": ["9C"], "S": ["5C"], "W": ["TS"]},
        stock=["AC", "AD", "AH", "3H", "6H"],
    )


def test_sharp_chooses_the_same_from_the_same_seed_and_history() -> None:
    rules = make_rules("classic")
    seed = hashlib.sha256(b"same").digest()
    for state, events in normal_hand(rules, seed):
        seat = state.current_seat
        history = [observe_event(event, seat) for event in events]
        first, second = (
            decide(
                observe(state, seat),
                "sharp",
                turn_stream(seed, state.hand_number, seat, state.turn),
                history=history,
                budget=NO_CUTOFF,
            )
            for _ in range(2)
        )
        assert first == second
        assert not first.cut_off


def test_sharp_plays_out_its_candidates_within_its_budget(position: Position) -> None:
    state = rich_turn(position)
    decision = decide(observe(state, 0), "sharp", turn_stream(b"po", 1, 0, 1), budget=NO_CUTOFF)
    assert decision.play_outs > 0
    assert not decision.cut_off
    small = decide(observe(state, 0), "sharp", turn_stream(b"po", 1, 0, 1), budget=Budget(samples=1))
    assert 0 < small.play_outs <= Budget().candidates


def test_sharp_stops_playing_out_candidates_that_trail_far_behind(position: Position) -> None:
    state = rich_turn(position)
    observation, stream = observe(state, 0), turn_stream(b"po", 1, 0, 1)
    unlimited = Budget(samples=24, work=10**7, cutoff_ms=60_000)
    every = decide(observation, "sharp", stream, budget=replace(unlimited, prune=0))
    # Without pruning every candidate is played out on every deal.
    assert every.play_outs % 24 == 0 and every.play_outs >= 2 * 24
    pruned = decide(observation, "sharp", turn_stream(b"po", 1, 0, 1), budget=unlimited)
    assert 24 * 2 <= pruned.play_outs < every.play_outs
    assert pruned.moves == every.moves


def test_sharp_stops_sampling_once_pruning_leaves_one_candidate(position: Position) -> None:
    state = rich_turn(position)
    observation = observe(state, 0)
    budget = Budget(samples=48, work=10**7, cutoff_ms=60_000, prune=0.5)
    every = decide(observation, "sharp", turn_stream(b"po", 1, 0, 1), budget=replace(budget, prune=0))
    assert every.play_outs >= 2 * budget.samples
    pruned = decide(observation, "sharp", turn_stream(b"po", 1, 0, 1), budget=budget)
    # After the first deals one candidate leads the others by more than half a win: they are dropped, and
    # it is played without the deals left, where it alone would have been played out.
    assert pruned.play_outs < budget.samples
    assert pruned.moves == every.moves


def test_a_deadline_already_past_cuts_the_decision_short_whatever_the_budget(position: Position) -> None:
    state = rich_turn(position)
    decision = decide(
        observe(state, 0),
        "sharp",
        turn_stream(b"cut", 1, 0, 1),
        budget=NO_CUTOFF,
        deadline_ns=time.perf_counter_ns() - 1,
    )
    assert decision.cut_off
    assert decision.play_outs == 0


def test_a_cutoff_falls_back_to_a_legal_turn_and_says_so(position: Position) -> None:
    state = rich_turn(position)
    decision = decide(observe(state, 0), "sharp", turn_stream(b"cut", 1, 0, 1), budget=Budget(cutoff_ms=0))
    assert decision.cut_off
    assert decision.play_outs == 0
    for move in decision.moves:
        state, _ = step(state, move, seat=0)
    assert state.status != PLAYING or state.current_seat != 0


def test_a_hint_or_best_spot_past_its_cutoff_still_answers_legally(position: Position) -> None:
    state = rich_turn(position)
    hand = state.hands[0]
    # Past the deadline the search keeps only the position it started from: ending the turn there.
    assert best_turn(state.rules, hand, state.piles, cutoff_ms=0) == [END_TURN]
    assert best_spot(state.rules, hand, state.piles, "9H", cutoff_ms=0) == "W"
    assert best_spot(state.rules, hand, state.piles, "KH", cutoff_ms=0) in ("NE", "SE", "SW", "NW")
