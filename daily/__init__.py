"""The daily deal: one seeded hand a day, attempts, submissions and the leaderboard."""
