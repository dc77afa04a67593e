"""One module per page of the book, named for its notebook: ``analysis/chapters/<page>.py``
holds everything ``book/<page>.ipynb`` shows. Its one entry point takes the page's papermill
parameters (profile, seeds, duration, rate, and any of the page's own) and returns the page:
its glue values, tables and figures. The notebook is its parameters cell, that one call, and
cells that display what the call returned, so every number and sentence a page prints is
computed where the tests reach it.

Page modules are the top layer: they import the renderers and everything below them, and
nothing imports them but notebooks and tests.
"""
