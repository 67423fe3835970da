"""The admin pages of `daily`."""
