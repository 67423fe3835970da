"""Computer players: each level's character, seeded replays, and that a player sees only its own seat."""

import hashlib
import inspect
import itertools
import random
from collections.abc import Callable

import pytest

from games.engine import (
    DECK,
    END_TURN,
    OPTIONS,
    PILES,
    PLAYING,
    SIDES,
    Event,
    Move,
    MovePile,
    Play,
    Rules,
    SeededStream,
    State,
    make_rules,
    new_game,
    observe,
    position_moves,
    step,
)
from games.engine.masks import ALL_CARDS, FITTERS, TARGETS, builds_on, built_on, card_count
from games.engine.players import (
    DEFAULT_NODE_BUDGET,
    LEVELS,
    NAMES,
    Budget,
    best_spot,
    best_turn,
    choose_turn,
    decide,
    play_turn,
    turn_stream,
)
from games.engine.players.normal import normal_move
from games.engine.players.search import search
from games.engine.players.table import (
    TOP,
    Piles,
    TableMove,
    TableRules,
    apply_move,
    bits,
    cards_mask,
    engine_move,
    penalty_of,
    playable,
    table_moves,
    table_piles,
)
from tests.support.players import moves_by_kind, random_search_table, random_table

Position = Callable[..., State]

OPTION_SETS = [dict(zip(OPTIONS, values, strict=True)) for values in itertools.product(*OPTIONS.values())]
RULE_SETS = [
    make_rules(options)
    for options in OPTION_SETS
    if not (options["draw"] == "until_playable" and options["draw_timing"] == "end")
]


def rules_id(rules: Rules) -> str:
    return "-".join(map(str, rules.options().values()))


def table(**piles: list[str]) -> dict[str, list[str]]:
    return {name: list(piles.get(name, [])) for name in PILES}


def apply_turn(state: State, moves: list[Move]) -> State:
    """Applies a computer turn through the engine, which refuses any illegal move."""
    seat = state.current_seat
    for move in moves:
        state, _ = step(state, move, seat=seat)
    return state


# Sharp's decisions in these tests are limited by a small budget of work alone, never by the clock, so that
# they replay exactly however busy the machine is.
NO_CUTOFF = Budget(samples=8, cutoff_ms=60_000)


def play_hand(levels: list[str], rules: Rules, game_seed: bytes) -> tuple[State, list[Event]]:
    """One hand, each player seeing its own observation and the hand's events as its seat saw them."""
    state, events = new_game(rules=rules, players=len(levels), seed=game_seed, target_score=None)
    for _ in range(1000):
        if state.status != PLAYING:
            return state, events
        state, turn_events = play_turn(state, levels[state.current_seat], game_seed, events, budget=NO_CUTOFF)
        events.extend(turn_events)
    raise AssertionError("the hand did not end")


# --- the fast table agrees with the engine --------------------------------------------------------------


@pytest.mark.parametrize("rules", RULE_SETS, ids=rules_id)
def test_fast_move_generation_equals_position_moves(rules: Rules) -> None:
    rng = random.Random(repr(rules))
    for _ in range(300):
        hand, piles = random_table(rng)
        fast = [
            engine_move(move)
            for move in table_moves(TableRules.of(rules), cards_mask(hand), table_piles(piles))
        ]
        engine = position_moves(rules, hand, piles)
        assert len(fast) == len(set(fast))
        assert set(fast) == set(engine)


def up_to_spaces(moves: list[TableMove], encoded: Piles) -> set[tuple[int, int, int | str]]:
    """The moves with every empty side named alike, and every empty corner."""
    return {
        (kind, a, b if encoded[b] >= 0 else "side" if PILES[b] in SIDES else "corner") for kind, a, b in moves
    }


def reference_normal_move(
    rules: TableRules, hand: int, piles: Piles, stream: SeededStream
) -> TableMove | None:
    """Normal's rule read straight from the list of every move: Kings into corners, then what fits, then pile
    moves, then the highest card into a space."""
    moves = table_moves(rules, hand, piles, every_space=False)
    kings, builds, pile_moves, fills = moves_by_kind(moves, piles)
    for choices in (kings, builds, pile_moves):
        if choices:
            return choices[stream.uniform(len(choices))]
    if fills:
        top_card = max(card for _, card, _ in fills)
        return next(move for move in fills if move[1] == top_card)
    return None


@pytest.mark.parametrize("preset", ["classic", "casual", "any_space"])
def test_normals_fast_rule_chooses_as_the_list_of_every_move_does(preset: str) -> None:
    rules = TableRules.of(make_rules(preset))
    rng = random.Random(preset)
    for index in range(2000):
        hand, piles = random_table(rng)
        position = (rules, cards_mask(hand), table_piles(piles))
        seed = index.to_bytes(4, "big")
        expected = reference_normal_move(*position, SeededStream(seed))
        assert normal_move(*position, SeededStream(seed)) == expected


def test_sharp_searches_one_empty_side_and_one_empty_corner_of_each_kind_of_move() -> None:
    rules = make_rules("any_space")
    rng = random.Random(3)
    for _ in range(500):
        hand, piles = random_table(rng)
        encoded = table_piles(piles)
        every = table_moves(TableRules.of(rules), cards_mask(hand), encoded)
        pruned = table_moves(TableRules.of(rules), cards_mask(hand), encoded, every_space=False)
        assert set(pruned) <= set(every)
        assert up_to_spaces(pruned, encoded) == up_to_spaces(every, encoded)


def test_builds_on_is_the_union_of_the_cards_that_fit_each_card() -> None:
    rng = random.Random(5)
    for _ in range(2000):
        mask = rng.getrandbits(52)
        union = 0
        for card in bits(mask):
            union |= FITTERS[card]
        assert builds_on(mask) == union


def test_built_on_is_the_union_of_the_cards_each_card_builds_on() -> None:
    rng = random.Random(6)
    for _ in range(2000):
        mask = rng.getrandbits(52)
        union = 0
        for card in bits(mask):
            union |= TARGETS[card]
        assert built_on(mask) == union


def test_card_count_counts_the_bits_of_any_mask_up_to_62_bits() -> None:
    rng = random.Random(7)
    masks = [0, 1, ALL_CARDS, (1 << 62) - 1, 1 << 61]
    masks += [rng.getrandbits(rng.randint(1, 62)) for _ in range(5000)]
    for mask in masks:
        assert card_count(mask) == mask.bit_count()


def reference_search(
    rules: TableRules, hand: int, piles: Piles, unseen: int, threat: float, node_budget: int, keep: int
) -> tuple[list[tuple[tuple[TableMove, ...], tuple[int, float]]], int, bool]:
    """Sharp's search read plainly: the moves from the list of every move (Kings into the first empty
    corner, builds, pile moves, then fills of the first empty corner and side, highest first), each distinct
    position visited once depth first within the node budget, and each position scored by its penalty, the
    cards held for piles that wait for the player, and the gift to the next player."""
    seen: set[tuple[int, ...]] = set()
    best: dict[int, tuple[tuple[int, float], int, tuple[TableMove, ...]]] = {}
    reached = [False]

    def score(hand: int, piles: Piles, pile_can_move: bool) -> tuple[int, float]:
        if not hand:
            return 1, 0.0
        tops = [encoded & TOP for encoded in piles if encoded >= 0]
        held = count = 0
        while tops:
            fitting = FITTERS[tops.pop()]
            mine = fitting & hand & ~held
            if not fitting & unseen and mine:
                held |= mine & -mine
                count += 1
                tops.append((mine & -mine).bit_length() - 1)
        level = playable(rules, piles) | (rules.side_cards if pile_can_move else 0)
        level &= unseen
        counted, gift = level, 0.0
        for weight in (1.0, 0.8, 0.5):
            gift += weight * level.bit_count()
            level = builds_on(level) & unseen & ~counted
            counted |= level
        return 0, -penalty_of(hand) + 5.0 * count - 3.0 * threat * gift

    def visit(hand: int, piles: Piles, path: tuple[TableMove, ...]) -> bool:
        key = (hand, *sorted(piles[:4]), *sorted(piles[4:]))
        if key in seen:
            return False
        if len(seen) >= node_budget:
            reached[0] = True
            return True
        seen.add(key)
        kings, builds, moving, fills = moves_by_kind(
            table_moves(rules, hand, piles, every_space=False), piles
        )
        fills.sort(key=lambda move: (move[2] < 4, -move[1]))
        value = score(hand, piles, bool(moving))
        if hand not in best or value > best[hand][0]:
            best[hand] = (value, len(seen), path)
        if not hand:
            return True
        return any(
            visit(*apply_move(hand, piles, move), (*path, move)) for move in kings + builds + moving + fills
        )

    visit(hand, piles, ())
    ranked = sorted(best.values(), key=lambda entry: (-entry[0][0], -entry[0][1], entry[1]))
    return [(moves, value) for value, _, moves in ranked[:keep]], len(seen), reached[0]


@pytest.mark.parametrize("preset", ["classic", "casual", "any_space"])
def test_sharps_search_finds_what_the_plain_reading_of_it_finds(preset: str) -> None:
    rules = TableRules.of(make_rules(preset))
    rng = random.Random(preset + "search")
    for _ in range(400):
        hand_mask, encoded, unseen = random_search_table(rng)
        threat, budget, keep = rng.random() * 2, rng.randint(1, 80), rng.choice((1, 3, 6))
        found = search(rules, hand_mask, encoded, unseen, threat=threat, node_budget=budget, keep=keep)
        candidates, nodes, reached = reference_search(rules, hand_mask, encoded, unseen, threat, budget, keep)
        assert [(candidate.moves, candidate.score) for candidate in found.candidates] == candidates
        assert (found.nodes, found.budget_reached) == (nodes, reached)


# --- the levels' characters -----------------------------------------------------------------------------


def test_players_are_millie_roy_and_bess_at_three_levels() -> None:
    assert NAMES == ("Millie", "Roy", "Bess")
    assert LEVELS == ("easy", "normal", "sharp")


def test_easy_sometimes_ends_its_turn_with_plays_left(position: Position) -> None:
    state = position(
        hands=[["7H", "6S", "4D", "9C"], ["2C"]],
        piles={"N": ["8S"], "E": ["7D"], "S": ["5C"], "W": ["TD"]},
    )
    stopped_with_plays_left = played = 0
    for turn in range(60):
        moves = choose_turn(observe(state, 0), "easy", turn_stream(b"easy", 1, 0, turn))
        after = apply_turn(state, moves[:-1])
        played += len(moves) > 1
        stopped_with_plays_left += moves[-1] == END_TURN and bool(
            position_moves(after.rules, after.hands[0], after.piles)
        )
    assert stopped_with_plays_left > 0
    assert played > 0


def test_normal_puts_a_king_in_a_free_corner(position: Position) -> None:
    state = position(
        hands=[["KH", "2C"], ["3D"]],
        piles={"N": ["9D"], "E": ["7D"], "S": ["5H"], "W": ["TD"], "NE": ["KS"]},
    )
    for turn in range(10):
        moves = choose_turn(observe(state, 0), "normal", turn_stream(b"normal", 1, 0, turn))
        assert moves[0] == Play("KH", "SE")


def test_normal_moves_a_pile_and_fills_the_space_it_opens_with_its_highest_card(position: Position) -> None:
    state = position(
        hands=[["JC", "4D"], ["3D"]],
        piles={"N": ["8S"], "E": ["7H"], "S": ["2C"], "W": ["5H"], "NE": ["KS"]},
    )
    moves = choose_turn(observe(state, 0), "normal", turn_stream(b"normal", 1, 0, 1))
    assert moves == [MovePile("E", "N"), Play("JC", "E"), END_TURN]


def test_normal_plays_until_nothing_is_left_to_play() -> None:
    for index in range(40):
        game_seed = hashlib.sha256(b"normal" + bytes([index])).digest()
        state, _ = new_game(rules=make_rules(), players=3, seed=game_seed, target_score=None)
        while state.status == PLAYING:
            seat = state.current_seat
            moves = choose_turn(observe(state, seat), "normal", turn_stream(game_seed, 1, seat, state.turn))
            before_end = apply_turn(state, moves[:-1]) if moves[-1] == END_TURN else None
            if before_end is not None:
                assert position_moves(before_end.rules, before_end.hands[seat], before_end.piles) == []
            state = apply_turn(state, moves)


def greedy_goes_out(
    rules: Rules, hand: list[str], piles: dict[str, list[str]], order: tuple[int, ...]
) -> bool:
    """A fixed greedy order: move classes by priority (King into a corner, play onto a pile, pile move, card
    into a space), then the first or the last move of the class."""
    *priority, last = order
    hand, piles = list(hand), {name: list(pile) for name, pile in piles.items()}
    while hand:
        moves = position_moves(rules, hand, piles)
        if not moves:
            return False

        def kind(move: Move) -> int:
            if isinstance(move, MovePile):
                return 2
            assert isinstance(move, Play) and move.to is not None
            if piles[move.to]:
                return 1
            return 0 if move.card[0] == "K" and move.to not in SIDES else 3

        best = min(priority.index(kind(move)) for move in moves)
        choices = [move for move in moves if priority.index(kind(move)) == best]
        move = choices[-1] if last else choices[0]
        if isinstance(move, Play):
            assert move.to is not None
            hand.remove(move.card)
            piles[move.to].append(move.card)
        else:
            assert isinstance(move, MovePile)
            piles[move.to].extend(piles[move.source])
            piles[move.source] = []
    return True


def test_sharp_goes_out_by_a_line_that_no_fixed_greedy_order_finds(position: Position) -> None:
    # 6S fits on 7H at once, but the way out starts by moving the 6C pile onto 7H, which that play blocks.
    piles = table(N=["3H"], E=["6C"], S=["AC"], W=["7H"])
    hand = ["8C", "6S", "4C"]
    rules = make_rules()
    assert not any(
        greedy_goes_out(rules, hand, piles, (*priority, last))
        for priority in itertools.permutations(range(4))
        for last in (0, 1)
    )
    state = position(hands=[hand, ["2D"]], piles=piles)
    for turn in range(20):
        normal = choose_turn(observe(state, 0), "normal", turn_stream(b"sharp", 1, 0, turn))
        assert normal[-1] == END_TURN
    moves = choose_turn(observe(state, 0), "sharp", turn_stream(b"sharp", 1, 0, 1))
    assert END_TURN not in moves
    assert moves[0] == MovePile("E", "W")
    assert apply_turn(state, moves).hand_results[-1]["out_seat"] == 0


def test_sharp_holds_a_card_for_a_pile_that_waits_for_it_alone_but_plays_it_to_go_out() -> None:
    # Only 7H and 7D fit on 8S, and 7D lies on the table: the N pile waits for whoever holds 7H.
    piles = table(N=["8S"], E=["9C"], S=["8C", "7D"], W=["JH"], NE=["KD"])
    assert best_turn(make_rules(), ["7H", "2C"], piles) == [END_TURN]
    assert best_turn(make_rules(), ["7H"], piles) == [Play("7H", "N")]


def test_sharp_puts_kings_in_corners() -> None:
    piles = table(N=["8S"], E=["9C"], S=["5H"], W=["QC"])
    moves = best_turn(make_rules(), ["KH", "2C", "3C"], piles)
    assert Play("KH", "NE") in moves


def test_sharp_moves_a_pile_rather_than_leave_it_to_the_next_player_and_fills_the_space() -> None:
    piles = table(N=["8S"], E=["7H"], S=["5H"], W=["JH"], NE=["KD"])
    assert best_turn(make_rules(), ["2C", "3C"], piles) == [MovePile("E", "N"), Play("2C", "E"), END_TURN]


def test_a_search_cut_short_by_its_budget_still_plays_a_legal_turn(position: Position) -> None:
    state = position(
        hands=[["2C", "3D", "4S", "5H", "6C", "7D", "8S", "9H", "TC", "JD"], ["2D"]],
        piles={"N": ["QH"], "E": ["9C"], "S": ["5D"], "NE": ["KS"]},
    )
    stream = turn_stream(b"budget", 1, 0, 1)
    decision = decide(observe(state, 0), "sharp", stream, budget=Budget(node_budget=5))
    assert decision.budget_reached
    assert decision.nodes == 5
    apply_turn(state, decision.moves)
    full = decide(observe(state, 0), "sharp", turn_stream(b"budget", 1, 0, 1))
    assert full.nodes <= DEFAULT_NODE_BUDGET


def test_best_turn_reads_the_unseen_cards_as_everything_off_the_table_and_out_of_hand() -> None:
    piles = table(N=["8S"], E=["9C"], S=["8C", "7D"], W=["JH"], NE=["KD"])
    hand = ["7H", "2C", "6D"]
    unseen = [card for card in DECK if card not in hand and all(card not in pile for pile in piles.values())]
    assert best_turn(make_rules(), hand, piles) == best_turn(make_rules(), hand, piles, unseen)


def test_best_spot_is_none_for_a_card_that_fits_nowhere_and_a_corner_for_a_king() -> None:
    piles = table(N=["8S"], E=["9C"], S=["5H"], W=["QC"], NE=["KD"])
    assert best_spot(make_rules(), ["2C", "KH"], piles, "2C") is None
    assert best_spot(make_rules(), ["2C", "KH"], piles, "KH") == "SE"
    with pytest.raises(ValueError):
        best_spot(make_rules(), ["2C"], piles, "3C")


def test_best_spot_is_where_the_best_turn_plays_the_card() -> None:
    # 8H fits on 9C and on 9S; either way 7S follows it and the hand goes out.
    piles = table(N=["9C"], E=["9S"], S=["5H"], W=["QC"], NE=["KD"])
    moves = best_turn(make_rules(), ["8H", "7S"], piles)
    assert moves == [Play("8H", "N"), Play("7S", "N")]
    assert best_spot(make_rules(), ["8H", "7S"], piles, "8H") == "N"


def test_best_spot_of_a_card_held_back_is_still_a_pile_it_fits() -> None:
    piles = table(N=["8S"], E=["9C"], S=["8C", "7D"], W=["JH"], NE=["KD"])
    assert best_turn(make_rules(), ["7H", "2C"], piles) == [END_TURN]
    assert best_spot(make_rules(), ["7H", "2C"], piles, "7H") == "N"


# --- seeded, replayable and blind to hidden cards -------------------------------------------------------


def test_turn_stream_is_seeded_from_the_game_seed_hand_seat_and_turn() -> None:
    game_seed = bytes(range(32))
    expected = SeededStream(
        hashlib.sha256(
            game_seed + b"players" + (3).to_bytes(4, "big") + bytes([2]) + (17).to_bytes(4, "big")
        ).digest()
    )
    stream = turn_stream(game_seed, 3, 2, 17)
    assert [stream.next_u64() for _ in range(5)] == [expected.next_u64() for _ in range(5)]


@pytest.mark.parametrize("preset", ["classic", "casual", "any_space"])
def test_the_same_seed_gives_the_same_choices(preset: str) -> None:
    levels = ["easy", "normal", "sharp", "easy"]
    for index in range(4):
        game_seed = hashlib.sha256(preset.encode() + bytes([index])).digest()
        first = play_hand(levels, make_rules(preset), game_seed)
        second = play_hand(levels, make_rules(preset), game_seed)
        assert first[1] == second[1]
        assert first[0].to_json() == second[0].to_json()


def test_easy_choices_follow_the_stream(position: Position) -> None:
    state = position(
        hands=[["7H", "6S", "4D", "9C"], ["2C"]],
        piles={"N": ["8S"], "E": ["7D"], "S": ["5C"], "W": ["TD"]},
    )
    turns = {
        tuple(choose_turn(observe(state, 0), "easy", turn_stream(b"seed", 1, 0, turn))) for turn in range(30)
    }
    assert len(turns) > 1


def test_choose_turn_is_given_an_observation_and_a_stream_never_the_state() -> None:
    assert list(inspect.signature(choose_turn).parameters) == ["observation", "level", "stream", "history"]
    assert "State" not in str(inspect.signature(choose_turn))


def moves_of(events: list[Event], seat: int) -> list[Event]:
    return [
        event
        for event in events
        if (event["type"] == "play" or event["type"] == "move_pile") and event["seat"] == seat
    ]


@pytest.mark.parametrize("level", LEVELS)
def test_players_choose_the_same_whatever_the_hidden_cards(level: str) -> None:
    """Two states that differ only in cards the player cannot see (other hands, the stock's order) lead to the
    same choices."""
    rng = random.Random(level)
    checked = 0
    for index in range(30):
        game_seed = hashlib.sha256(b"hidden" + bytes([index])).digest()
        rules = rng.choice(RULE_SETS)
        state, events = new_game(rules=rules, players=rng.randint(2, 4), seed=game_seed, target_score=None)
        for _ in range(rng.randint(0, 6)):
            if state.status != PLAYING:
                break
            state, played = play_turn(state, "normal", game_seed)
            events.extend(played)
        if state.status != PLAYING:
            continue
        seat = state.current_seat
        # The twin's history names other cards in the other seats' draws: the player never sees them.
        twin_events: list[Event] = [
            {**event, "card": hidden_card} if event["type"] == "draw" and event["seat"] != seat else event
            for event, hidden_card in zip(events, itertools.cycle(DECK))
        ]
        hidden = [card for other, hand in enumerate(state.hands) if other != seat for card in hand]
        hidden += state.stock
        rng.shuffle(hidden)
        twin = state.copy()
        for other in range(state.players):
            if other != seat:
                size = len(twin.hands[other])
                twin.hands[other], hidden = sorted(hidden[:size]), hidden[size:]
        twin.stock = hidden
        _, mine = play_turn(state, level, game_seed, events, budget=NO_CUTOFF)
        _, theirs = play_turn(twin, level, game_seed, twin_events, budget=NO_CUTOFF)
        assert moves_of(mine, seat) == moves_of(theirs, seat)
        checked += 1
    assert checked > 10


def test_a_player_refuses_to_choose_out_of_turn(position: Position) -> None:
    state = position(hands=[["2C"], ["3D"]], piles={"N": ["8S"]})
    with pytest.raises(ValueError):
        choose_turn(observe(state, 1), "sharp", turn_stream(b"x", 1, 1, 1))
    with pytest.raises(ValueError):
        choose_turn(observe(state, 0), "expert", turn_stream(b"x", 1, 0, 1))


@pytest.mark.parametrize("rules", RULE_SETS[::3], ids=rules_id)
def test_every_level_plays_legal_turns_and_every_hand_ends(rules: Rules) -> None:
    for index, levels in enumerate(itertools.permutations(LEVELS)):
        game_seed = hashlib.sha256(repr(rules).encode() + bytes([index])).digest()
        state, events = play_hand(list(levels), rules, game_seed)
        assert state.hand_results[-1]["reason"] in ("out", "blocked")
        assert events[-1]["type"] == "game_over"


def test_moves_for_the_whole_turn_end_with_end_turn_unless_they_go_out(position: Position) -> None:
    state = position(hands=[["7H", "2C"], ["3D"]], piles={"N": ["8S"], "E": ["3H"]})
    for level in LEVELS:
        moves = choose_turn(observe(state, 0), level, turn_stream(b"end", 1, 0, 1))
        out = apply_turn(state, [move for move in moves if move != END_TURN])
        if out.status == PLAYING:
            assert moves[-1] == END_TURN
        else:
            assert END_TURN not in moves
