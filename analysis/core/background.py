"""A call on a second core while the caller goes on.

numpy lets go of the GIL inside its sorts, partitions, searches and takes, and zlib
while it inflates, so two threads of such work use both cores of a small machine: a
first summary inflates a raw log's largest member, builds the engine timeline and
takes its quantiles this way.
"""
from __future__ import annotations

import threading


class Background(threading.Thread):
    """fn(*args) on a helper thread; result() waits for it and returns its value or
    raises its error, in the caller's thread."""

    def __init__(self, fn, *args):
        super().__init__(daemon=True)
        self._call, self._value, self._error = (fn, args), None, None
        self.start()

    def run(self):
        fn, args = self._call
        try:
            self._value = fn(*args)
        except BaseException as error:   # handed to the caller's thread by result()
            self._error = error

    def result(self):
        self.join()
        if self._error is not None:
            raise self._error
        return self._value
