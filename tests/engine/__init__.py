"""Tests of the pure-Python rules engine: no Django, no database."""
