"""The tests: tests/engine, tests/analysis, tests/book; shared fixtures in conftest.py, helpers in support."""
