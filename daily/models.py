"""The database models of `daily`."""
