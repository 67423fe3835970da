"""The harness of the race tests: several threads released at once, each on its own database connection."""

import threading
from collections.abc import Callable
from typing import TypeVar

from django.db import connection

T = TypeVar("T")


def race(workers: int, action: Callable[[], T]) -> list[T | Exception]:
    """Runs `action` in `workers` threads that a barrier releases together; returns what each returned or
    raised, in the order they finished. Each thread closes its own connection, so none is left open."""
    barrier = threading.Barrier(workers)
    outcomes: list[T | Exception] = []
    lock = threading.Lock()

    def racer() -> None:
        try:
            barrier.wait()
            outcome: T | Exception = action()
        except Exception as error:
            outcome = error
        finally:
            connection.close()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=racer) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def split(outcomes: list[T | Exception]) -> tuple[list[T], list[Exception]]:
    """The values the racers returned, and the errors they raised."""
    errors = [outcome for outcome in outcomes if isinstance(outcome, Exception)]
    return [outcome for outcome in outcomes if not isinstance(outcome, Exception)], errors
