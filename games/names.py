"""Player names as the API takes them: normalised to NFKC, and refused when they show no letter or digit,
stack combining marks, or mix scripts within a word; and a name's skeleton, the form that names which look
alike share, under which the server numbers players apart (`Ada#4821`)."""

import functools
import unicodedata
from importlib import resources

NAME_MAX_LENGTH = 32
# Letters by their category that show nothing (Unicode's default-ignorable Hangul fillers): a name made of
# them looks blank, so they are refused anywhere in a name.
INVISIBLE_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
# Marks on one base character: written languages use at most a few (Vietnamese two, after NFKC composes
# what it can); more is a tower drawn over the neighbouring lines.
MAX_MARKS_ON_A_CHARACTER = 3
# Scripts that one word writes together: Japanese mixes kanji, hiragana and katakana.
_SCRIPT_FAMILIES = {
    name: "CJK" for name in ("HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HALFWIDTH", "IDEOGRAPHIC")
}


class NameRefused(ValueError):
    pass


def _script(letter: str) -> str | None:
    """A letter's script, read from its Unicode name (LATIN SMALL LETTER A, CYRILLIC CAPITAL LETTER A):
    Python's unicodedata has no Script property. None for a letter whose name says no script."""
    name = unicodedata.name(letter, "")
    if not name or name.startswith("MODIFIER"):
        return None
    first = name.split(" ", 1)[0]
    return _SCRIPT_FAMILIES.get(first, first)


def name_normalised(name: str) -> str:
    """The name in NFKC with the whitespace around it dropped; NameRefused says why a name is not taken."""
    name = unicodedata.normalize("NFKC", name).strip()
    if not 1 <= len(name) <= NAME_MAX_LENGTH:
        raise NameRefused(f"A name is 1 to {NAME_MAX_LENGTH} characters once normalised (NFKC).")
    if not name.isprintable():
        raise NameRefused("A name is printable characters only.")
    if INVISIBLE_LETTERS.intersection(name):
        raise NameRefused("A name may not hold invisible filler characters.")
    marks = 0
    for character in name:
        marks = marks + 1 if unicodedata.category(character) in ("Mn", "Me") else 0
        if marks > MAX_MARKS_ON_A_CHARACTER:
            raise NameRefused(f"At most {MAX_MARKS_ON_A_CHARACTER} combining marks on one character.")
    if not any(unicodedata.category(character)[0] in "LN" for character in name):
        raise NameRefused("A name shows at least one letter or digit.")
    for word in name.split():
        scripts = {script for c in word if unicodedata.category(c).startswith("L") and (script := _script(c))}
        if len(scripts) > 1:
            raise NameRefused(
                f"A word of a name is written in one script; {word!r} mixes {', '.join(sorted(scripts))}."
            )
    return name


# Unicode's confusables.txt (UTS #39), shipped as published; tests/games/test_names.py checks its header.
CONFUSABLES_FILE = "data/confusables.txt"
# The Unicode version of the shipped confusables.txt, as its header names it.
CONFUSABLES_VERSION = "13.0.0"
# Characters a name may carry that draw nothing or only choose a glyph's presentation: variation selectors
# (U+FE00-FE0F, U+E0100-E01EF, Mongolian's U+180B-180D, 180F), joiners, and the other default-ignorable
# characters NFKC keeps (UTS #39 drops default-ignorables before it compares).
_IGNORED_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_SMALL_CAPITAL = "LATIN LETTER SMALL CAPITAL "


def _ignored(character: str) -> bool:
    point = ord(character)
    return any(low <= point <= high for low, high in _IGNORED_RANGES)


@functools.cache
def confusables() -> dict[str, str]:
    """confusables.txt's mapping: each source character to its prototype (one or more characters)."""
    text = resources.files("games").joinpath(CONFUSABLES_FILE).read_text(encoding="utf-8-sig")
    mapping: dict[str, str] = {}
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 3:
            continue
        source = "".join(chr(int(point, 16)) for point in fields[0].split())
        mapping[source] = "".join(chr(int(point, 16)) for point in fields[1].split())
    return mapping


def _folded(text: str) -> str:
    """NFKC, case folded, without ignorables; a small capital (ᴀ, which neither NFKC nor the confusables
    table relate to A) as the letter its Unicode name names."""
    folded = []
    for character in unicodedata.normalize("NFKC", text).casefold():
        if _ignored(character):
            continue
        name = unicodedata.name(character, "")
        if name.startswith(_SMALL_CAPITAL) and len(name) == len(_SMALL_CAPITAL) + 1:
            character = name[-1].lower()
        folded.append(character)
    return unicodedata.normalize("NFKC", "".join(folded)).casefold()


def name_skeleton(name: str) -> str:
    """The form two names share when they display alike: NFKC, case folded, without variation selectors and
    other default-ignorables, then UTS #39's skeleton (NFD, each character to its confusables.txt prototype,
    NFD), folded again since a prototype may be a capital (I → l, but А → A). `Ada`, `ADA`, `Ada\ufe0f`,
    `ɑdɑ`, `ᴀᴅᴀ` and Cyrillic `Аdа` share `ada`'s."""
    mapping = confusables()
    decomposed = unicodedata.normalize("NFD", _folded(name))
    mapped = unicodedata.normalize(
        "NFD", "".join(mapping.get(character, character) for character in decomposed)
    )
    return _folded(mapped)
