"""Rule options and the named rule sets of docs/rules.md, and how a client's rule choice is read."""

from dataclasses import dataclass, fields, replace
from typing import Any, Final

from games.engine.errors import RulesError

# Each option's allowed values, the default first.
OPTIONS: dict[str, tuple[Any, ...]] = {
    "layout_king": ("replace", "leave_empty"),
    "empty_side": ("no_king", "any"),
    "empty_corner": ("king", "any"),
    "king_pile_to_corner": (False, True),
    "draw": ("one", "until_playable"),
    "draw_timing": ("start", "end"),
    "blocked_scoring": ("fewest_exempt", "everyone"),
}

# What each option decides, for people: GET /api/v1/rules serves these, and docs/rules.md says the same.
OPTION_MEANINGS: dict[str, str] = {
    "layout_king": "A King turned up for a side pile in the deal goes to the first empty corner (NE, SE, SW, "
    "NW); replace turns up another card for that side until one is not a King, leave_empty leaves the side "
    "empty.",
    "empty_side": "Which cards from a hand may start an empty side pile: no_king, any card but a King; any, "
    "any card.",
    "empty_corner": "Which cards from a hand may start an empty corner pile: king, only a King; any, any "
    "card.",
    "king_pile_to_corner": "Whether a side pile whose bottom card is a King may move, whole, into an empty "
    "corner.",
    "draw": "one: draw one card; until_playable: draw one, then keep drawing while no card in hand can be "
    "played and the stock is not empty.",
    "draw_timing": "start: the draw opens the turn; end: it closes the turn (a player who goes out during "
    "the turn does not draw).",
    "blocked_scoring": "In a blocked hand, fewest_exempt: the players holding the fewest cards take no "
    "penalty; everyone: every player counts the cards left.",
}

PRESETS: dict[str, dict[str, Any]] = {
    "classic": {},
    "casual": {
        "layout_king": "leave_empty",
        "empty_side": "any",
        "king_pile_to_corner": True,
        "blocked_scoring": "everyone",
    },
    "any_space": {"empty_side": "any", "empty_corner": "any"},
}

RULE_SET_DESCRIPTIONS: dict[str, str] = {
    "classic": "Every option at its default; the daily deal's rules.",
    "casual": "A relaxed table: a King in the layout leaves its side empty, any card starts an empty side, a "
    "King-bottomed side pile may move into an empty corner, and a blocked hand counts everyone's cards.",
    "any_space": 'The house rule "any card, any space": classic with any card starting any empty pile.',
}

DEFAULT_PRESET = "classic"


@dataclass(frozen=True, slots=True)
class Rules:
    """One reading of the game: every option spelled out, and the rule set it started from."""

    layout_king: str = "replace"
    empty_side: str = "no_king"
    empty_corner: str = "king"
    king_pile_to_corner: bool = False
    draw: str = "one"
    draw_timing: str = "start"
    blocked_scoring: str = "fewest_exempt"
    preset: str = DEFAULT_PRESET

    def options(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in OPTIONS}

    def to_json(self) -> dict[str, Any]:
        # What dataclasses.asdict gives, spelled out: every observation carries the rules, and asdict's
        # generic deep copy was a fifth of a computer turn's cost.
        return {
            "layout_king": self.layout_king,
            "empty_side": self.empty_side,
            "empty_corner": self.empty_corner,
            "king_pile_to_corner": self.king_pile_to_corner,
            "draw": self.draw,
            "draw_timing": self.draw_timing,
            "blocked_scoring": self.blocked_scoring,
            "preset": self.preset,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Rules":
        # Every computer turn reads the rules from its observation: each reading is made once and shared
        # (Rules are immutable), as a frozen dataclass's construction costs more than the lookup.
        key = tuple([data.get(name, _ABSENT) for name in RULE_FIELDS])
        try:
            known = _READ.get(key)
        except TypeError:  # a value that cannot be hashed: not a rule option's
            known = None
        if known is not None:
            return known
        rules = cls(**{name: data[name] for name in RULE_FIELDS if name in data})
        if len(_READ) < _READ_LIMIT:
            try:
                _READ[key] = rules
            except TypeError:
                pass
        return rules


RULE_FIELDS: tuple[str, ...] = tuple(field.name for field in fields(Rules))
# Rules.from_json's readings, by their fields' values (_ABSENT for a field the data leaves out), at most
# _READ_LIMIT of them: there are a few dozen sets of valid options.
_ABSENT: Final = "\x00absent"
_READ: Final[dict[tuple[Any, ...], Rules]] = {}
_READ_LIMIT: Final = 512


def _option_value(name: str, value: Any) -> Any:
    allowed = OPTIONS[name]
    if isinstance(allowed[0], bool):
        # JSON's true or false only, as the schema says: the string "TRUE" is not a boolean.
        if not isinstance(value, bool):
            raise RulesError(
                "invalid_rule_value", f"Rule option '{name}' takes true or false, not {value!r}."
            )
        return value
    if not isinstance(value, str) or value not in allowed:
        choices = ", ".join(allowed)
        raise RulesError(
            "invalid_rule_value", f"Rule option '{name}' takes one of: {choices}; not {value!r}."
        )
    return value


def make_rules(spec: Any = None) -> Rules:
    """Reads a rule choice: None, a rule set's name, or {"preset": name, <option>: value, ...}."""
    if spec is None:
        spec = DEFAULT_PRESET
    if isinstance(spec, str):
        spec = {"preset": spec}
    if not isinstance(spec, dict):
        raise RulesError("invalid_rules", "Rules are a rule set's name or an object of options.")
    preset = spec.get("preset", DEFAULT_PRESET)
    if not isinstance(preset, str) or preset not in PRESETS:
        names = ", ".join(PRESETS)
        raise RulesError("unknown_rule_set", f"Unknown rule set {preset!r}; the rule sets are: {names}.")
    options: dict[str, Any] = {name: allowed[0] for name, allowed in OPTIONS.items()}
    options.update(PRESETS[preset])
    for name, value in spec.items():
        if name == "preset":
            continue
        if name not in OPTIONS:
            known = ", ".join(OPTIONS)
            raise RulesError(
                "unknown_rule_option", f"Unknown rule option {name!r}; the options are: {known}."
            )
        options[name] = _option_value(name, value)
    rules = replace(Rules(), preset=preset, **options)
    if rules.draw == "until_playable" and rules.draw_timing == "end":
        raise RulesError(
            "incompatible_rules",
            "draw=until_playable cannot be combined with draw_timing=end: "
            "drawing until a card can be played only makes sense before playing.",
        )
    return rules
