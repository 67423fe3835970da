"""Player names as the API takes them: normalised to NFKC, and refused when they show no letter or digit,
stack combining marks, or mix scripts within a word."""

import unicodedata

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
