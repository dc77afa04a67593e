"""Helpers shared by the test modules (tests import these, never another test module).

``paths``: where the repository, its test data and the article's text are; ``cli``: the
engine's command line in a child process; ``readonly``: read-only copies of a cache;
``summaries``: synthetic run summaries with known answers; ``golden``: the whole-run and
scalar partitions compared gap by gap; ``book``: one smoke build per session and a
headless-Chromium driver. The fixtures built on them are in tests/conftest.py.
"""
