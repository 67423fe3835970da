"""Games: players, hands against computer players, moves and their event log."""
