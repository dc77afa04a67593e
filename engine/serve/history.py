"""Per-token history, the way a metrics store or streaming buffer keeps it.

Object mode keeps a record plus five top-k logprob objects per emitted token: a
growing heap of small tracked containers that Python's cyclic collector must walk.
Compact mode keeps the same numbers in a flat array("d"), invisible to the collector.
"""
from __future__ import annotations

from array import array

TOP_K = 5


class TopLogprob:
    def __init__(self, logprob: float, rank: int):
        self.logprob, self.rank, self.text = logprob, rank, None


class TokenRecord:
    def __init__(self, rid: int, token: int, t: float, top: dict):
        self.rid, self.token, self.t, self.top = rid, token, t, top


class ObjectHistory:
    def __init__(self):
        self.records: list[TokenRecord] = []

    def add(self, rid: int, token: int, t: float) -> None:
        top = {token + j: TopLogprob(-0.25 - j, j + 1) for j in range(TOP_K)}
        self.records.append(TokenRecord(rid, token, t, top))

    def __len__(self):
        return len(self.records)


class CompactHistory:
    FIELDS = 3 + TOP_K

    def __init__(self):
        self.flat = array("d")

    def add(self, rid: int, token: int, t: float) -> None:
        self.flat.extend((rid, token, t, -0.25, -1.25, -2.25, -3.25, -4.25))

    def __len__(self):
        return len(self.flat) // self.FIELDS
