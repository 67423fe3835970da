"""The Django app configuration of `daily`: it takes part in games through the hooks of `games`."""

from django.apps import AppConfig


class DailyConfig(AppConfig):
    name = "daily"

    def ready(self) -> None:
        from daily import checks, game_hooks  # noqa: F401 - importing checks registers them
        from games import hooks

        hooks.on_hand_over(game_hooks.record_ranked_finish)
        hooks.hint_guard(game_hooks.refuse_hints_in_ranked_attempt)
        hooks.analysis_guard(game_hooks.refuse_analysis_in_ranked_attempt)
        hooks.leave_guard(game_hooks.refuse_leaving_a_ranked_attempt)
        hooks.plain_placement_check(game_hooks.plain_placement_in_ranked_attempt)
        hooks.move_guard(game_hooks.refuse_moves_after_finish_deadline, applies=game_hooks.dealt_as_daily)
        hooks.seed_reveal_check(game_hooks.seed_revealed_once_day_is_over)
        hooks.closure_check(game_hooks.expired_attempt_closed, game_hooks.expired_attempts)
