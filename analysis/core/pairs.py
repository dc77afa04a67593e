"""Pair each request's consecutive tokens into gaps, in the analysis order."""
from __future__ import annotations

import numpy as np

from .columns import EMIT
from .contract import ByRequest
from .ranges import concat_ranges, run_starts


def gap_pairs(emissions: np.ndarray, by_request: ByRequest | None = None):
    """Emission rows in analysis order, and where each gap's first token lies in it.

    Requests are ordered by first appearance in the emissions array and tokens keep
    their file order, which is the order the article's analysis visits gaps in.
    ``by_request``: the rows sorted by request id, stably, and their ids (validation
    has both).
    Returns (order, rank per ordered row, gap starts, sorted request ids, rank of
    each, the first ordered row of each rank).
    """
    if by_request is None:
        rid = emissions[:, EMIT.request]
        order = np.argsort(rid, kind="stable")
        rid_sorted = rid.take(order)
    else:
        order, rid_sorted = by_request
    new = run_starts(rid_sorted)                 # a request's first row, in id order
    run_start = np.flatnonzero(new)
    rids, first_row = rid_sorted.take(run_start), order.take(run_start)
    by_rank = np.argsort(first_row, kind="stable")   # request (id order) at each rank
    rank_of = np.empty(len(rids), dtype=np.intp)
    rank_of[by_rank] = np.arange(len(rids))
    if np.all(first_row[1:] > first_row[:-1]):
        # requests first appear in id order: the id order is the analysis order
        rank = np.cumsum(new)
        rank -= 1
        rank_start = run_start
    else:
        # move each request's run of rows (file order within) to its rank's place
        run_end = np.append(run_start[1:], len(order))
        lo, hi = run_start.take(by_rank), run_end.take(by_rank)
        pos, rank = concat_ranges(lo, hi)
        order = order.take(pos)
        rank_start = np.cumsum(hi - lo) - (hi - lo)
        new = np.zeros(len(order), dtype=bool)
        new[rank_start] = True
    starts = np.flatnonzero(~new[1:])           # rows whose next row is the same request's
    return order, rank, starts, rids, rank_of, rank_start
