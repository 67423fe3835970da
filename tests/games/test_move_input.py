"""The moves and new-hand endpoints read a plain body without their input serializers: whatever that fast
path takes, the serializer takes with the same values, and anything else goes through the serializer."""

from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from rest_framework.exceptions import ValidationError

from games import services
from games.apis.moves import GameHandDealApi, GameMovesApi, _moves_input, _version_input
from games.errors import TooManyMoves

MOVE = {"type": "end_turn"}

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=2**40),
    st.floats(allow_nan=False),
    st.text(max_size=3),
    st.just({}),
)
move_lists = st.one_of(
    st.lists(st.one_of(st.just(MOVE), values), max_size=3),
    st.integers(min_value=services.MAX_MOVES - 1, max_value=services.MAX_MOVES + 1).map(lambda n: [MOVE] * n),
)
bodies = st.one_of(
    st.dictionaries(
        st.sampled_from(["moves", "expected_version", "extra"]),
        st.one_of(values, move_lists),
        max_size=3,
    ),
    values,
    move_lists,
)


def _outcome(read: Any) -> Any:
    try:
        return ("taken", read())
    except ValidationError as error:
        return ("refused", error.detail)
    except TooManyMoves as error:
        return ("too_many", error.detail)


def _serializer_moves(body: Any) -> Any:
    checked = GameMovesApi.GameMovesInputSerializer(data=body)
    checked.is_valid(raise_exception=True)
    return checked.validated_data["moves"], checked.validated_data.get("expected_version")


def _serializer_version(body: Any) -> Any:
    checked = GameHandDealApi.GameHandDealInputSerializer(data=body)
    checked.is_valid(raise_exception=True)
    return checked.validated_data.get("expected_version")


@given(bodies)
def test_a_moves_body_is_read_as_the_serializer_reads_it(body: Any) -> None:
    request: Any = SimpleNamespace(data=body)
    fast = _outcome(lambda: _moves_input(request, GameMovesApi.GameMovesInputSerializer))
    assert fast == _outcome(lambda: _serializer_moves(body))
    if fast[0] == "taken":
        assert [type(value) for value in fast[1]] == [list, type(_serializer_moves(body)[1])]


@given(bodies)
def test_a_new_hand_body_is_read_as_the_serializer_reads_it(body: Any) -> None:
    request: Any = SimpleNamespace(data=body)
    fast = _outcome(lambda: _version_input(request, GameHandDealApi.GameHandDealInputSerializer))
    assert fast == _outcome(lambda: _serializer_version(body))
