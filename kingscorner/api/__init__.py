"""The API layer shared by the apps: problem codes and their rendering, the schema's pieces, headers,
fields, parsers, rate limits, and the project's own views (health and the index)."""
