"""Deterministic deals against the test vectors, and how a hand is dealt and laid out."""

import hashlib
from collections.abc import Callable
from datetime import date
from functools import cache
from typing import Any

import pytest

from games.engine import (
    CORNERS,
    DIRECT,
    HAND_OVER,
    PILES,
    SIDES,
    SeededStream,
    State,
    commitment,
    daily_seed,
    hand_seed,
    is_king,
    make_rules,
    new_game,
    next_hand,
    shuffle,
    sorted_cards,
)

# --- the deal test vectors ----------------------------------------------------------------------------------


def test_shuffle_matches_every_vector(vectors: dict[str, Any]) -> None:
    assert vectors["shuffle"]
    for vector in vectors["shuffle"]:
        assert shuffle(bytes.fromhex(vector["seed"])) == vector["deck"]


def test_hand_seeds_and_their_decks_match_every_vector(vectors: dict[str, Any]) -> None:
    assert vectors["hand_seed"]
    for vector in vectors["hand_seed"]:
        seed = hand_seed(bytes.fromhex(vector["game_seed"]), vector["hand"])
        assert seed.hex() == vector["seed"]
        assert shuffle(seed) == vector["deck"]


def test_daily_seeds_commitments_and_decks_match_every_vector(vectors: dict[str, Any]) -> None:
    assert vectors["daily_seed"]
    for vector in vectors["daily_seed"]:
        seed = daily_seed(vector["secret"], vector["date"])
        assert seed.hex() == vector["seed"]
        assert daily_seed(vector["secret"].encode(), date.fromisoformat(vector["date"])) == seed
        assert commitment(seed) == vector["commitment"]
        assert shuffle(seed) == vector["deck"]


def test_daily_deal_is_shuffled_from_the_daily_seed_itself(vectors: dict[str, Any]) -> None:
    vector = vectors["daily_seed"][0]
    seed = bytes.fromhex(vector["seed"])
    state, _ = new_game(rules=make_rules(), players=4, seed=seed, target_score=None, seed_scheme=DIRECT)
    deck = vector["deck"]
    assert state.hands[1] == sorted_cards(deck[1:28:4])
    assert state.hands[3] == sorted_cards(deck[3:28:4])


def test_random_stream_reads_sha256_blocks_as_big_endian_integers() -> None:
    seed = bytes(range(32))
    blocks = b"".join(hashlib.sha256(seed + k.to_bytes(8, "big")).digest() for k in range(2))
    expected = [int.from_bytes(blocks[i : i + 8], "big") for i in range(0, 64, 8)]
    stream = SeededStream(seed)
    assert [stream.next_u64() for _ in range(8)] == expected


def test_uniform_rejects_draws_at_or_above_the_unbiased_limit() -> None:
    # For m = 2**63 + 1 the limit is 2**63 + 1 too, so about half the 64-bit values are rejected: the first
    # value below it, after those at or above it, is the one used.
    m = 2**63 + 1
    seed = next(bytes([i]) for i in range(256) if SeededStream(bytes([i])).next_u64() >= m)
    raw = SeededStream(seed)
    values = [raw.next_u64() for _ in range(64)]
    accepted = next(index for index, value in enumerate(values) if value < m)
    stream = SeededStream(seed)
    assert stream.uniform(m) == values[accepted] % m
    # The stream goes on from the draw after the accepted one.
    assert stream.next_u64() == values[accepted + 1]


# --- the deal -----------------------------------------------------------------------------------------------


def _game_seed(i: int) -> bytes:
    return i.to_bytes(32, "big")


def _first_deck(i: int) -> list[str]:
    return shuffle(hand_seed(_game_seed(i), 1))


@cache
def _seed_where(condition: Callable[[list[str]], bool]) -> int:
    """The first game seed, in a fixed search order, whose first hand's deck meets `condition`."""
    return next(i for i in range(100_000) if condition(_first_deck(i)))


def _no_king_turned(deck: list[str]) -> bool:
    return not any(is_king(card) for card in deck[28:32])


def _king_first_turned(deck: list[str]) -> bool:
    return is_king(deck[28]) and not any(is_king(card) for card in deck[29:33])


def _two_kings_first_turned(deck: list[str]) -> bool:
    return is_king(deck[28]) and is_king(deck[29]) and not any(is_king(card) for card in deck[30:34])


def _new_four_player_game(i: int, **options: Any) -> State:
    state, _ = new_game(rules=make_rules(options), players=4, seed=_game_seed(i), target_score=None)
    return state


@pytest.mark.parametrize("players", [2, 3, 4])
def test_dealer_of_the_first_hand_is_the_last_seat_and_seat_zero_plays_first(players: int) -> None:
    state, events = new_game(rules=make_rules(), players=players, seed=_game_seed(1), target_score=None)
    assert state.dealer == players - 1
    assert state.current_seat == 0
    assert state.hand_number == 1
    assert [event["type"] for event in events] == ["deal", "turn_start", "draw"]
    draw = events[2]
    assert draw["type"] == "draw" and draw["seat"] == 0


@pytest.mark.parametrize("players", [2, 3, 4])
def test_seven_cards_are_dealt_one_at_a_time_from_the_dealers_left(players: int) -> None:
    i = _seed_where(_no_king_turned)
    deck = _first_deck(i)
    state, _ = new_game(rules=make_rules(), players=players, seed=_game_seed(i), target_score=None)
    dealt = 7 * players
    for seat in range(players):
        cards = deck[seat:dealt:players]
        if seat == 0:
            # Seat 0 opens the hand and has drawn the top of the stock.
            cards = [*cards, deck[dealt + 4]]
        assert state.hands[seat] == sorted_cards(cards)
    assert [state.piles[side] for side in SIDES] == [[card] for card in deck[dealt : dealt + 4]]
    assert state.stock == deck[dealt + 5 :]


def test_side_cards_are_turned_in_the_order_north_east_south_west_and_corners_start_empty() -> None:
    i = _seed_where(_no_king_turned)
    deck = _first_deck(i)
    state = _new_four_player_game(i)
    assert state.piles == {
        "N": [deck[28]],
        "E": [deck[29]],
        "S": [deck[30]],
        "W": [deck[31]],
        "NE": [],
        "SE": [],
        "SW": [],
        "NW": [],
    }


def test_turned_king_goes_to_a_corner_and_is_replaced_under_layout_king_replace() -> None:
    i = _seed_where(_king_first_turned)
    deck = _first_deck(i)
    state = _new_four_player_game(i, layout_king="replace")
    assert state.piles == {
        "N": [deck[29]],
        "E": [deck[30]],
        "S": [deck[31]],
        "W": [deck[32]],
        "NE": [deck[28]],
        "SE": [],
        "SW": [],
        "NW": [],
    }
    assert state.stock == deck[34:]


def test_turned_king_goes_to_a_corner_and_leaves_its_side_empty_under_layout_king_leave_empty() -> None:
    i = _seed_where(_king_first_turned)
    deck = _first_deck(i)
    state = _new_four_player_game(i, layout_king="leave_empty")
    assert state.piles == {
        "N": [],
        "E": [deck[29]],
        "S": [deck[30]],
        "W": [deck[31]],
        "NE": [deck[28]],
        "SE": [],
        "SW": [],
        "NW": [],
    }
    assert state.stock == deck[33:]


def test_two_turned_kings_each_take_their_own_corner_under_layout_king_replace() -> None:
    i = _seed_where(_two_kings_first_turned)
    deck = _first_deck(i)
    state = _new_four_player_game(i, layout_king="replace")
    assert state.piles == {
        "N": [deck[30]],
        "E": [deck[31]],
        "S": [deck[32]],
        "W": [deck[33]],
        "NE": [deck[28]],
        "SE": [deck[29]],
        "SW": [],
        "NW": [],
    }


def test_two_turned_kings_each_take_their_own_corner_under_layout_king_leave_empty() -> None:
    i = _seed_where(_two_kings_first_turned)
    deck = _first_deck(i)
    state = _new_four_player_game(i, layout_king="leave_empty")
    assert state.piles == {
        "N": [],
        "E": [],
        "S": [deck[30]],
        "W": [deck[31]],
        "NE": [deck[28]],
        "SE": [deck[29]],
        "SW": [],
        "NW": [],
    }


@pytest.mark.parametrize("layout_king", ["replace", "leave_empty"])
def test_no_side_pile_starts_with_a_king(layout_king: str) -> None:
    for i in range(200):
        state = _new_four_player_game(i, layout_king=layout_king)
        assert not any(is_king(card) for side in SIDES for card in state.piles[side])
        assert all(is_king(state.piles[corner][0]) for corner in CORNERS if state.piles[corner])
        empty_sides = sum(1 for side in SIDES if not state.piles[side])
        kings_in_corners = sum(len(state.piles[corner]) for corner in CORNERS)
        assert empty_sides == (0 if layout_king == "replace" else kings_in_corners)
        assert all(len(state.piles[name]) <= 1 for name in PILES)


def test_deal_passes_one_seat_to_the_left_after_each_hand(finish_hand: Callable[[State, int], State]) -> None:
    game_seed = _game_seed(7)
    state, _ = new_game(rules=make_rules(), players=4, seed=game_seed, target_score=1000)
    for hand_number, dealer in [(2, 0), (3, 1), (4, 2), (5, 3)]:
        state = finish_hand(state, hand_number)
        assert state.status == HAND_OVER
        state, _ = next_hand(state)
        deck = shuffle(hand_seed(game_seed, hand_number))
        assert (state.hand_number, state.dealer, state.current_seat) == (
            hand_number,
            dealer,
            (dealer + 1) % 4,
        )
        # The first card dealt goes to the dealer's left, who also opens the hand.
        for offset in range(1, 4):
            assert deck[offset - 1] in state.hands[(dealer + offset) % 4]
        assert deck[3] in state.hands[dealer]
