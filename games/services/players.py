"""The writes of players: a new player and its token, and the token's rotation."""

import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from games import notifications
from games.errors import InvalidToken, NameCrowded, TokenRotated
from games.models import DISCRIMINATOR_MAX, DISCRIMINATOR_MIN, Game, GameSeat, Player, TokenRotation
from games.names import name_skeleton
from games.rotation_replay import replay_horizon, replay_opened, replayed_token
from games.tokens import TokenHash, token_hash, token_new, token_seal


def token_check(token: TokenHash) -> None:
    """Raises InvalidToken unless a player has the token: for a request refused before its service looked
    the token up, so that a bad token is a 401 whatever else is wrong with the request."""
    if not Player.objects.filter(token_hash=token.value).exists():
        raise InvalidToken()


@contextmanager
def token_checked_on_refusal(token: TokenHash) -> Iterator[None]:
    """Around what refuses a request before its token was looked up (its body, its headers): a refusal is
    preceded by the token's check, so that a bad token is a 401 whatever else is wrong, as where
    authentication runs first."""
    try:
        yield
    except Exception:
        token_check(token)
        raise


# Draws of a discriminator that another registration took first before giving up (only a crowd of
# registrations of one skeleton at once collides, each time a little less likely).
DISCRIMINATOR_DRAWS = 20
_RANDOM = random.SystemRandom()


def player_create(*, name: str) -> tuple[Player, str]:
    """A new player and its token, which is shown this once: only its hash is stored. The name is as the
    API's input serializer normalised and checked it (games.names). The player's discriminator is drawn at
    random from those no player of the name's skeleton has (the database's unique constraint decides a race:
    the loser draws again); NameCrowded when none is left."""
    token = token_new()
    player = Player(name=name, name_skeleton=name_skeleton(name), token_hash=token_hash(token))
    _numbered_and_saved(player, force_insert=True)
    return player, token


def _numbered_and_saved(player: Player, *, force_insert: bool = False, keep: int | None = None) -> None:
    """Saves the player with a discriminator no other player of its skeleton has: `keep` if it is free,
    otherwise one drawn at random from the free ones."""
    every = range(DISCRIMINATOR_MIN, DISCRIMINATOR_MAX + 1)
    for _ in range(DISCRIMINATOR_DRAWS):
        others = Player.objects.filter(name_skeleton=player.name_skeleton).exclude(pk=player.pk)
        taken = set(others.values_list("discriminator", flat=True))
        free = [number for number in every if number not in taken]
        if not free:
            raise NameCrowded(count=len(every))
        player.discriminator = keep if keep in free else _RANDOM.choice(free)
        try:
            with transaction.atomic():
                player.save(force_insert=force_insert)
        except IntegrityError:
            keep = None
            continue
        return
    raise NameCrowded(count=len(every))


def player_rename(*, player: Player, name: str) -> None:
    """Gives the player another name (the admin's change page): its discriminator stays unless another
    player of the new name's skeleton has it, and the seats it holds show the new display name."""
    with transaction.atomic():
        player.name = name
        player.name_skeleton = name_skeleton(name)
        _numbered_and_saved(player, keep=player.discriminator)
        shown = player.display_name
        for seat in GameSeat.objects.filter(player=player).select_related("game"):
            seat.name = shown
            seat.save(update_fields=["name"])
            game = seat.game
            if game.seating is not None:
                game.seating = [
                    [row[0], row[1], row[2], shown if row[4] == str(player.pk) else row[3], row[4]]
                    for row in game.seating
                ]
                Game.objects.filter(pk=game.pk).update(seating=game.seating)


@dataclass(frozen=True, slots=True)
class NewToken:
    """A rotation's new token; `replayed` when it is the one an earlier rotation with the same
    Idempotency-Key gave."""

    token: str
    replayed: bool = False


def _replay(player: Player, token: str, previous_hash: str, idempotency_key: str | None) -> NewToken | None:
    """The answer to a rotation from a token already rotated within the replay window (the first's new token
    again, for its Idempotency-Key), None when no such rotation is there; TokenRotated without a key."""
    rotation = TokenRotation.objects.filter(
        previous_token_hash=previous_hash, created_at__gte=replay_horizon()
    ).first()
    if rotation is None:
        return None
    if not idempotency_key:
        raise TokenRotated()
    return NewToken(token=replayed_token(rotation, player, token, idempotency_key), replayed=True)


def player_token_rotate(*, player: Player, token: str, idempotency_key: str | None = None) -> NewToken:
    """Replaces the player's token `token` with a new one; the old one stops working at once. Only the current
    token is rotated from (a conditional update), so of concurrent rotations one wins and the others are
    refused. A retry sent with the replaced token and the winner's Idempotency-Key gets the same new token,
    within ROTATION_REPLAY_SECONDS and until that token is used (games/rotation_replay.py)."""
    previous_hash = token_hash(token)
    with transaction.atomic():
        replay = _replay(player, token, previous_hash, idempotency_key)
        if replay is not None:
            return replay
        new = token_new()
        # PostgreSQL holds a concurrent rotation's UPDATE until this one commits, then finds no row whose hash
        # is still the old one.
        replaced = Player.objects.filter(pk=player.pk, token_hash=previous_hash).update(
            token_hash=token_hash(new), token_rotated_at=timezone.now()
        )
        if not replaced:
            # A rotation from this token committed meanwhile: a retry of it (its key, sent while it was under
            # way) is answered as a retry sent after it would be; any other is refused.
            replay = _replay(player, token, previous_hash, idempotency_key)
            if replay is not None:
                return replay
            raise TokenRotated()
        sealed = ""
        if idempotency_key:
            sealed = token_seal(new, previous_token=token, idempotency_key=idempotency_key)
            replay_opened(player)
        try:
            with transaction.atomic():
                TokenRotation.objects.create(
                    player=player,
                    previous_token_hash=previous_hash,
                    idempotency_key=idempotency_key or "",
                    sealed_token=sealed,
                )
        except IntegrityError:
            # An older rotation from this token, past its window, still kept: this one replaces it.
            TokenRotation.objects.filter(previous_token_hash=previous_hash).update(
                player=player,
                idempotency_key=idempotency_key or "",
                sealed_token=sealed,
                created_at=timezone.now(),
            )
    player.token_hash = token_hash(new)
    notifications.player_streams_end(player_id=player.pk)
    return NewToken(token=new)
