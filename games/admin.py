"""The admin pages of `games`."""
