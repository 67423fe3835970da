"""docs/rules.md against the engine: its worked example, its reference shuffle, and its option table are what
the engine computes, so the document cannot drift from the code."""

import hashlib
import re
from pathlib import Path
from typing import Any

from games.engine import (
    DIRECT,
    OPTIONS,
    PRESETS,
    SeededStream,
    commitment,
    hand_seed,
    make_rules,
    new_game,
    shuffle,
)

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
TEXT = DOCUMENT.read_text(encoding="utf-8")


def _section(heading: str) -> str:
    start = TEXT.index(f"\n{heading}\n")
    following = re.search(r"\n#{1,3} ", TEXT[start + len(heading) + 2 :])
    return TEXT[start : start + len(heading) + 2 + following.start()] if following else TEXT[start:]


def _worked_example() -> dict[str, str]:
    """The `label: value` lines of the worked example's text blocks."""
    blocks = re.findall(r"```text\n(.*?)```", _section("### Worked example"), re.DOTALL)
    lines = [line for block in blocks for line in block.splitlines()]
    return {label.strip(): value.strip() for label, _, value in (line.partition(":") for line in lines)}


EXAMPLE = _worked_example()
SEED = bytes.fromhex(EXAMPLE["seed"])


def test_the_worked_examples_commitment_is_the_sha256_of_the_seeds_raw_bytes() -> None:
    assert len(SEED) == 32
    assert EXAMPLE["commitment"] == commitment(SEED) == hashlib.sha256(SEED).hexdigest()
    assert EXAMPLE["not the commitment"] == hashlib.sha256(EXAMPLE["seed"].encode()).hexdigest()
    assert EXAMPLE["not the commitment"] != EXAMPLE["commitment"]


def test_the_worked_examples_stream_and_cards_are_what_the_engine_deals() -> None:
    block = hashlib.sha256(SEED + (0).to_bytes(8, "big")).hexdigest()
    assert EXAMPLE["stream block 0"] == block
    assert int(EXAMPLE["first stream integer"]) == SeededStream(SEED).next_u64()
    deck = shuffle(SEED)
    assert EXAMPLE["first five cards"].split() == deck[:5]
    assert EXAMPLE["shuffled deck"].split() == deck
    assert EXAMPLE["hand 1 seed"] == hand_seed(SEED, 1).hex()
    assert EXAMPLE["hand 1 first five"].split() == shuffle(hand_seed(SEED, 1))[:5]


def test_the_worked_examples_daily_deal_is_what_the_engine_deals() -> None:
    state, _ = new_game(
        rules=make_rules("classic"), players=4, seed=SEED, target_score=None, seed_scheme=DIRECT
    )
    deck = shuffle(SEED)
    for seat in range(4):
        dealt = EXAMPLE[f"seat {seat} is dealt"].split()
        assert dealt == deck[seat:28:4]
        drawn = [deck[33]] if seat == 0 else []
        assert sorted(state.hands[seat]) == sorted(dealt + drawn)
    layout = dict(entry.split() for entry in EXAMPLE["layout"].split(","))
    assert layout == {name: pile[0] for name, pile in state.piles.items() if pile}
    assert all(len(pile) <= 1 for pile in state.piles.values())
    assert EXAMPLE["top of the stock"] == deck[33]


def _reference_code() -> dict[str, Any]:
    blocks = re.findall(r"```python\n(.*?)```", _section("## Deterministic deals"), re.DOTALL)
    assert len(blocks) == 1
    namespace: dict[str, Any] = {}
    exec(compile(blocks[0], str(DOCUMENT), "exec"), namespace)
    return namespace


def test_the_documents_reference_shuffle_deals_as_the_engine_does(vectors: dict[str, Any]) -> None:
    reference = _reference_code()
    for vector in vectors["shuffle"]:
        assert reference["shuffle"](bytes.fromhex(vector["seed"])) == vector["deck"]
    for vector in vectors["hand_seed"]:
        seed = reference["hand_seed"](bytes.fromhex(vector["game_seed"]), vector["hand"])
        assert seed.hex() == vector["seed"]
    assert reference["shuffle"](SEED) == shuffle(SEED)


def _table_rows(heading: str) -> dict[str, list[str]]:
    rows = re.findall(r"^\| `(\w+)` \| (.*?) \|", _section(heading), re.MULTILINE)
    return {name: re.findall(r"`([^`]+)`", cells) for name, cells in rows}


def test_the_documents_option_table_lists_every_option_with_its_values_default_first() -> None:
    rows = _table_rows("## Rule options")
    assert list(rows) == list(OPTIONS)
    for name, values in OPTIONS.items():
        assert rows[name] == [str(value).lower() if isinstance(value, bool) else value for value in values]


def test_the_documents_rule_sets_are_the_engines() -> None:
    rows = re.findall(r"^\| `(\w+)` \| (.*) \|$", _section("### The three rule sets"), re.MULTILINE)
    assert [name for name, _ in rows] == list(PRESETS)
    for name, cells in rows:
        named = dict(re.findall(r"`(\w+) = (\w+)`", cells))
        assert named == {option: str(value).lower() for option, value in PRESETS[name].items()}
