"""The reads of `daily`, one module a concern: deals, submissions, the leaderboard, history, par, and the
checks `games` asks of a game."""
