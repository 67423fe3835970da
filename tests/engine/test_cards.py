"""Cards: canonical codes, the card parser, colour, fit and penalty."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from games.engine import DECK, CardError, fits, hand_penalty, is_red, parse_card, penalty, rank
from games.engine.cards import CARD_PATTERN

RANK_INPUTS = {**{r: r for r in "A23456789TJQK"}, **{r.lower(): r for r in "ATJQK"}, "10": "T"}
SUIT_INPUTS = {
    **{s: s for s in "CDHS"},
    **{s.lower(): s for s in "CDHS"},
    "♣": "C",
    "♦": "D",
    "♥": "H",
    "♠": "S",
}


def test_deck_holds_52_distinct_two_character_codes_in_shuffle_order() -> None:
    assert len(DECK) == 52
    assert len(set(DECK)) == 52
    assert all(len(card) == 2 for card in DECK)
    assert DECK[:3] == ("AC", "2C", "3C")
    assert DECK[12:14] == ("KC", "AD")
    assert DECK[-1] == "KS"


def test_every_canonical_code_parses_to_itself() -> None:
    assert [parse_card(card) for card in DECK] == list(DECK)


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("10♦", "TD"),
        ("10D", "TD"),
        ("10d", "TD"),
        ("td", "TD"),
        ("qh", "QH"),
        ("A♠", "AS"),
        ("7♣", "7C"),
        ("k♥", "KH"),
        ("Jc", "JC"),
        ("2♦", "2D"),
        ("10♣", "TC"),
    ],
)
def test_parser_accepts_ten_lower_case_and_suit_symbols(text: str, card: str) -> None:
    assert parse_card(text) == card


def test_parser_accepts_every_combination_of_rank_and_suit_spellings() -> None:
    for rank_text, rank_symbol in RANK_INPUTS.items():
        for suit_text, suit_symbol in SUIT_INPUTS.items():
            assert parse_card(rank_text + suit_text) == rank_symbol + suit_symbol


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Q",
        "D",
        "♦",
        "1D",
        "11D",
        "01D",
        "0H",
        "1OD",
        "ZZ",
        "QX",
        "QDD",
        "DQ",
        "♦Q",
        "10",
        "Q 10",
        "JOKER",
        "Aſ",
        "ßC",
        "KK",
        "XS",
        "1♦0",
    ],
)
def test_parser_refuses_anything_else_with_invalid_card(text: str) -> None:
    with pytest.raises(CardError) as refusal:
        parse_card(text)
    assert refusal.value.code == "invalid_card"


@pytest.mark.parametrize("value", [None, 12, b"QD", ["QD"], {"card": "QD"}])
def test_parser_refuses_what_is_not_a_string_with_invalid_card(value: object) -> None:
    with pytest.raises(CardError) as refusal:
        parse_card(value)
    assert refusal.value.code == "invalid_card"


@given(st.text(max_size=4))
def test_parser_returns_a_canonical_code_or_refuses_with_invalid_card(text: str) -> None:
    try:
        card = parse_card(text)
    except CardError as refusal:
        assert refusal.code == "invalid_card"
    else:
        assert card in DECK


def test_ranks_run_from_ace_low_to_king_high_and_colours_split_by_suit() -> None:
    assert [rank(card) for card in DECK[:13]] == list(range(1, 14))
    assert [is_red(card) for card in ("AC", "AD", "AH", "AS")] == [False, True, True, False]


def test_a_card_fits_when_one_rank_lower_and_of_the_opposite_colour() -> None:
    assert fits("QD", "KC")
    assert fits("5C", "6H")
    assert not fits("QS", "KC")
    assert not fits("JD", "KC")
    assert not fits("KD", "QC")


def test_nothing_fits_on_an_ace() -> None:
    assert not any(fits(card, top) for card in DECK for top in ("AC", "AD", "AH", "AS"))


def test_penalty_is_ten_per_king_and_one_per_other_card() -> None:
    assert penalty("KD") == 10
    assert {penalty(card) for card in DECK if card[0] != "K"} == {1}
    assert hand_penalty(["KS", "KD", "2C", "QH"]) == 22
    assert hand_penalty([]) == 0


_CARD_TEXT = st.text(
    alphabet=st.sampled_from("A1023456789TJQKatjqkCDHScdhs♣♦♥♠♧♢♡♤\ufe0e\ufe0f \t\n\u00a0\u3000\ufeffſx"),
    max_size=8,
)


@given(st.one_of(_CARD_TEXT, st.from_regex(CARD_PATTERN), st.text(max_size=6)))
def test_the_card_pattern_of_the_schema_matches_exactly_what_the_parser_reads(text: str) -> None:
    try:
        parse_card(text)
    except CardError:
        read = False
    else:
        read = True
    assert bool(re.search(CARD_PATTERN, text)) == read
