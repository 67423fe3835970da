"""The errors of `daily` below its views: each names its stable code and knows nothing of HTTP."""

from kingscorner.domain import DomainError


class InvalidDate(DomainError):
    code = "invalid_date"

    def __init__(self) -> None:
        super().__init__("A day is written YYYY-MM-DD, e.g. 2026-03-05.")


class NoDailyDeal(DomainError):
    """The day has not started yet, or is before the first deal."""

    code = "no_daily_deal"


class NoRankedResult(DomainError):
    code = "no_ranked_result"


class HintsRefusedInRankedAttempt(DomainError):
    code = "hints_refused_in_ranked_attempt"

    def __init__(self) -> None:
        super().__init__("Hints are refused while your ranked attempt at this daily deal is unfinished.")


class LeaveRefusedInRankedAttempt(DomainError):
    code = "leave_refused_in_ranked_attempt"

    def __init__(self) -> None:
        super().__init__(
            "A ranked daily attempt's game cannot be left: it is yours to play to its end, or its finishing "
            "deadline closes it as it stands."
        )


class AttemptExpired(DomainError):
    code = "attempt_expired"

    def __init__(self) -> None:
        super().__init__(
            "This ranked daily attempt's finishing deadline has passed: it was closed as it stood then and "
            "takes no more moves."
        )


class RankedAttemptOpen(DomainError):
    code = "ranked_attempt_open"

    def __init__(self) -> None:
        super().__init__(
            "Your ranked attempt at this deal is unfinished: finish it before another attempt at the deal."
        )


class AnalysisRefusedInRankedAttempt(DomainError):
    code = "analysis_refused_in_ranked_attempt"

    def __init__(self) -> None:
        super().__init__("Analysis is refused while a ranked daily attempt of yours is unfinished.")


class ParNotReady(DomainError):
    """The day's par is not published: its seed is not revealed yet, or the search has not run yet."""

    code = "par_not_ready"


class InvalidDateRange(DomainError):
    """`from` is after `to`, or the range is longer than a request lists."""

    code = "invalid_date_range"


class DateTooFarAhead(DomainError):
    """A day further ahead than the commitments published in advance."""

    code = "date_too_far_ahead"


class NoSeason(DomainError):
    code = "no_season"

    def __init__(self) -> None:
        super().__init__(
            "That day is before the first season: its seed is on no hash chain, and only its commitment is "
            "published."
        )
