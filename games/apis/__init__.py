"""The games API, a module a resource (players, games, moves, hint, analysis, rules), with the schema
pieces they share in serializers and responses."""
