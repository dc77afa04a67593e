"""The engine's mechanisms, run in-process on small traces (correctness, not timing)."""
import dataclasses

import numpy as np

from engine.serve import segments as S
from engine.serve.config import LADDER, Config
from engine.serve.loop import Engine
from engine.serve.model import make_model
from engine.serve.workload import Request, make_trace, request_contents


def serve(cfg: Config, trace):
    eng = Engine(cfg, make_model(cfg.forward), trace)
    eng.run()
    return eng


def burst(n, seed=7, max_new=None):
    """n requests all arriving at t=0 (a saturated queue), documents excluded for speed."""
    out = []
    for text, m, doc in request_contents(seed, n * 3):
        if not doc:
            out.append(Request(rid=len(out), arrival=0.0, text=text, max_new=max_new or min(m, 120)))
        if len(out) == n:
            return out


def test_tiny_pool_evicts_and_readmits_without_losing_tokens():
    cfg = dataclasses.replace(LADDER["baseline"], kv_blocks=120, compact_history=True)
    eng = serve(cfg, burst(24))
    evicted = [r for r in eng.done if r.evictions]
    assert evicted, "a 120-block pool must force preemption"
    for r in eng.done:
        assert len(r.out) == r.max_new == len(r.emit_t)     # no request loses a token
        for a, b in r.evictions:
            assert b is not None and b > a                    # readmission recorded after eviction
            # nothing is emitted while the request is evicted
            assert not any(a < t < b for t in r.emit_t)
    assert sum(s[5] for s in eng.steps) >= len([e for r in eng.done for e in r.evictions])
    assert len(eng.done) == 24 and eng.free_blocks == cfg.kv_blocks


def test_batch_above_largest_capture_runs_eager_and_others_are_padded():
    cfg = dataclasses.replace(LADDER["baseline"], compact_history=True, kv_blocks=4000)
    eng = serve(cfg, burst(40, max_new=30))
    steps = np.array(eng.steps)
    dec = steps[steps[:, 2] > 0]
    big = dec[:, 2] > 32
    assert big.any(), "40 simultaneous requests must give decode batches above 32"
    assert (dec[big, 4] == S.EAGER).all()
    sizes = np.array(cfg.capture_sizes)
    for n, g in dec[~big][:, [2, 4]]:
        assert g == sizes[np.searchsorted(sizes, n)]          # padded to the next captured size
    assert (steps[steps[:, 2] == 0, 4] == S.NO_DECODE).all()


def test_gc_pauses_land_in_the_log():
    eng = serve(LADDER["baseline"], burst(8, max_new=200))
    gens = [g for _, _, g in eng.gc.pauses]
    assert len(gens) > 5 and 0 in gens
    assert all(b >= a for a, b, _ in eng.gc.pauses)


def test_compact_history_makes_far_fewer_collections():
    objs = serve(LADDER["baseline"], burst(8, max_new=200))
    flat = serve(LADDER["+compact history"], burst(8, max_new=200))
    assert len(flat.gc.pauses) * 3 < len(objs.gc.pauses)


def test_off_loop_tokenization_gives_the_same_prompts_as_inline():
    trace = make_trace(11, 3.0, 6.0)
    inline = serve(dataclasses.replace(LADDER["baseline"], compact_history=True), make_trace(11, 3.0, 6.0))
    off = serve(dataclasses.replace(LADDER["baseline"], compact_history=True, async_tokenize=True), trace)
    by_rid = lambda eng: {r.rid: r.prompt for r in eng.done}
    assert by_rid(inline) == by_rid(off) and len(by_rid(off)) == len(trace)
    # inline tokenization is tagged on the loop; off-loop is not
    assert any(c == S.TOK for _, c, *_ in inline.segs)
    assert not any(c == S.TOK for _, c, *_ in off.segs)


def test_every_token_of_a_step_shares_one_emission_timestamp():
    eng = serve(dataclasses.replace(LADDER["baseline"], compact_history=True), burst(6, max_new=40))
    stamps = {}
    for r in eng.done:
        for t, k in zip(r.emit_t, r.emit_step):
            stamps.setdefault(k, set()).add(t)
    assert all(len(v) == 1 for v in stamps.values())
    decode_end = {i: b for i, c, _, a, b in eng.segs if c == S.DECODE}
    assert all(decode_end[k] == next(iter(v)) for k, v in stamps.items())


def test_watermark_trades_preemption_for_waiting():
    base = dataclasses.replace(LADDER["baseline"], kv_blocks=150, compact_history=True)
    loose = serve(base, burst(24, max_new=120))
    strict = serve(dataclasses.replace(base, admit_watermark=0.3), burst(24, max_new=120))
    evictions = lambda eng: sum(len(r.evictions) for r in eng.done)
    assert len(strict.done) == len(loose.done) == 24
    assert evictions(strict) < evictions(loose)
