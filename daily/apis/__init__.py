"""The daily API: the deal of a day, attempts, the leaderboard, the par and a player's history (daily), and
its URLs (urls), laid out as games/apis is."""
