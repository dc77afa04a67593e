"""The first published partitioner, bugs included, so the book can show them.

The article's correction note describes two bugs, both found by a reader with
small controlled cases.  This class is the corrected Partitioner with exactly those
two decisions reverted; everything else (labels, GC precedence, baseline fit on
GC-free captured steps) is the same.

Bug 1 -- preemption double-counted.  While the request was evicted, its time was
charged to ``preempt`` *and* whatever the engine ran meanwhile was charged to the
gap as well, instead of being set aside as context.  The reviewer's first example:
a 40 ms gap, evicted for the first 30 ms while another request's prefill ran, then
a 10 ms decode.  v1 gives preempt 30 + prefill 30 = 60 ms of causes inside a 40 ms
gap (70 ms with the 10 ms forward pass); the parts no longer sum to the gap.

Bug 2 -- GC inflated graph-miss time.  In an eager decode step, a GC pause was
carved out of the step's share of the gap but left in the step total that is
compared with the baseline, so the pause looked like graph-miss excess.  The
second example: a 30 ms eager decode with 20 ms of GC inside and a 10 ms baseline.
v1 sees 30 ms vs 10 ms, calls 2/3 of the remaining 10 ms graph time and invents
6.67 ms of graph overhead; the correct excess is 0.

Use it only to reproduce the bugs.  ``Partitioner`` is the one to trust.
"""
from __future__ import annotations

from .partitioner import MS, Partitioner


class FirstVersionPartitioner(Partitioner):
    """Partitioner with the first version's two bugs (see the module docstring)."""

    def _evicted_activity_target(self, parts: dict, context: dict) -> dict:
        # BUG 1: engine activity during an eviction lands in the gap's own parts,
        # on top of the preempt time already charged for the same milliseconds.
        return parts

    def _step_total_ms(self, step: dict) -> float:
        # BUG 2: the raw decode duration, GC pause and all, against a GC-free baseline.
        return sum(b - a for kind, a, b in step["seg"] if kind in self.scheme.split_kinds) * MS
