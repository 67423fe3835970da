"""The daily seeds' reverse hash chain: the vectors of tests/vectors/chain.json, seasons and their
boundaries, the days before the first season, and the deals the server stores from them."""

import hashlib
import json
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from daily import seasons, services
from daily.chain import anchor_from, anchor_of, previous_seed, season_last_seed, season_seeds
from games.engine import daily_seed

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "vectors" / "chain.json").read_text("utf-8"))
SEASONS = VECTORS["seasons"]


def _id(season: dict[str, Any]) -> str:
    return f"{season['season_start']}+{season['days']}"


@pytest.mark.parametrize("season", SEASONS, ids=_id)
def test_every_vector_season_derives_its_seeds_commitments_and_anchor(season: dict[str, Any]) -> None:
    start = date.fromisoformat(season["season_start"])
    seeds = season_seeds(season["secret"], start, season["days"])
    assert season_last_seed(season["secret"], start).hex() == season["last_seed"] == seeds[-1].hex()
    assert anchor_of(seeds[0]).hex() == season["anchor"]
    assert season["days_shown"]
    for day in season["days_shown"]:
        seed = seeds[day["index"]]
        assert (start + timedelta(days=day["index"])).isoformat() == day["date"]
        assert seed.hex() == day["seed"]
        assert hashlib.sha256(seed).hexdigest() == day["commitment"]
        assert anchor_from(seed, day["index"]).hex() == season["anchor"]


def test_each_seed_is_the_hash_of_the_prefix_and_the_next_days_seed() -> None:
    seeds = season_seeds("a secret", date(2026, 1, 1), 4)
    chained = hashlib.sha256(b"kingscorner-chain:" + seeds[2]).digest()
    assert previous_seed(seeds[2]) == chained == seeds[1]
    # The anchor is the first day's commitment, and a commitment is never the previous day's seed.
    assert anchor_of(seeds[0]) == hashlib.sha256(seeds[0]).digest()
    assert hashlib.sha256(seeds[2]).digest() != seeds[1]


def test_a_seed_hashed_from_the_wrong_place_misses_the_anchor() -> None:
    seeds = season_seeds("a secret", date(2026, 1, 1), 10)
    anchor = anchor_of(seeds[0])
    assert anchor_from(seeds[5], 5) == anchor
    assert anchor_from(seeds[5], 4) != anchor
    assert anchor_from(seeds[5], 6) != anchor


@override_settings(DAILY_SECRET="season-secret", DAILY_SEASON_START=date(2026, 1, 1), DAILY_SEASON_DAYS=10)
def test_seasons_follow_each_other_and_each_has_its_own_chain() -> None:
    first = seasons.season_of(date(2026, 1, 10))
    second = seasons.season_of(date(2026, 1, 11))
    assert first == seasons.Season(date(2026, 1, 1), 10)
    assert second == seasons.Season(date(2026, 1, 11), 10)
    assert seasons.season_of(date(2026, 1, 25)) == seasons.Season(date(2026, 1, 21), 10)
    assert seasons.day_seed(date(2026, 1, 10)) == season_last_seed("season-secret", date(2026, 1, 1))
    assert seasons.day_seed(date(2026, 1, 20)) == season_last_seed("season-secret", date(2026, 1, 11))
    assert seasons.season_anchor(second) == anchor_from(seasons.day_seed(date(2026, 1, 15)), 4)
    assert seasons.season_anchor(first) != seasons.season_anchor(second)


@override_settings(DAILY_SECRET="season-secret", DAILY_SEASON_START=date(2026, 3, 1), DAILY_SEASON_DAYS=30)
def test_a_day_before_the_first_season_is_in_none_and_keeps_the_hmac_of_its_date() -> None:
    assert seasons.season_of(date(2026, 2, 28)) is None
    assert seasons.day_seed(date(2026, 2, 28)) == daily_seed("season-secret", date(2026, 2, 28))
    assert seasons.day_seed(date(2026, 3, 1)) == season_seeds("season-secret", date(2026, 3, 1), 30)[0]


@pytest.mark.django_db
@override_settings(
    DAILY_SECRET=SEASONS[1]["secret"], DAILY_SEASON_START=date(2026, 1, 1), DAILY_SEASON_DAYS=3652
)
def test_the_deal_of_a_season_day_is_dealt_from_its_chain_seed() -> None:
    shown = SEASONS[1]["days_shown"][2]
    deal = services.daily_deal_get_or_create(day=date.fromisoformat(shown["date"]))
    assert (deal.seed, deal.commitment) == (shown["seed"], shown["commitment"])
    assert seasons.season_anchor(seasons.first_season()).hex() == SEASONS[1]["anchor"]


DOCUMENT = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")


def _chain_section(heading: str) -> str:
    start = DOCUMENT.index(f"\n{heading}\n")
    following = re.search(r"\n#{1,3} ", DOCUMENT[start + len(heading) + 2 :])
    return DOCUMENT[start : start + len(heading) + 2 + following.start()] if following else DOCUMENT[start:]


def test_the_rules_documents_reference_chain_derives_every_vector() -> None:
    blocks = re.findall(r"```python\n(.*?)```", _chain_section("## The daily seed chain"), re.DOTALL)
    assert len(blocks) == 1
    reference: dict[str, Any] = {}
    exec(compile(blocks[0], "docs/rules.md", "exec"), reference)
    for season in SEASONS:
        start = date.fromisoformat(season["season_start"])
        seeds = reference["season_seeds"](season["secret"], start, season["days"])
        assert reference["last_seed"](season["secret"], start).hex() == season["last_seed"]
        for shown in season["days_shown"]:
            assert seeds[shown["index"]].hex() == shown["seed"]
            assert reference["anchor_from"](seeds[shown["index"]], shown["index"]).hex() == season["anchor"]


def test_the_rules_documents_worked_example_of_the_chain_is_a_vector() -> None:
    block = re.findall(r"```text\n(.*?)```", _chain_section("### Worked example of the chain"), re.DOTALL)[0]
    lines = dict(line.split(":", 1) for line in block.strip().splitlines())
    shown = {label.strip(): value.strip() for label, value in lines.items()}
    seeds = season_seeds("kingscorner-vector-secret", date(2026, 1, 1), 3652)
    assert shown == {
        "anchor": anchor_of(seeds[0]).hex(),
        "2026-03-04": seeds[62].hex(),
        "2026-03-05": seeds[63].hex(),
    }
    assert previous_seed(seeds[63]) == seeds[62]
    assert anchor_from(seeds[63], 63).hex() == shown["anchor"] == SEASONS[1]["anchor"]
