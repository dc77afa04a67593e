"""Fidelity in runs: reading both engines' raw logs mechanism by mechanism, and the ratio table."""
import numpy as np
import pytest

from analysis.instrument import run_fidelity as R
from analysis.instrument import run_fidelity_page as P

from tests.support.paths import GOLDEN

ARTICLE_LOG = GOLDEN / "ladder-r7.5-baseline__s1.npz"


def synthetic(decode_scale: float = 1.0) -> dict:
    """Two steps with every mechanism once, with known durations (seconds):
    step 0 tokenizes request 0 (1,000 chars, 2 ms), evicts request 7 (5 ms reservation
    segment; it held 98 prompt + 2 emitted tokens), prefills 100 tokens (10 ms) and
    decodes 2 rows captured at size 2 (6 ms); step 1 readmits request 7 (4 ms) and
    decodes 40 rows eagerly (40 ms)."""
    s = decode_scale
    steps = np.array([[0.0, 0.1, 2, 100, 2, 1, 0],
                      [0.2, 0.3, 40, 0, 0, 0, 1]], float)
    segs = np.array([[0, 0, 0.000, 0.002], [0, 1, 0.002, 0.003], [0, 1, 0.003, 0.008],
                     [0, 2, 0.008, 0.018], [0, 3, 0.018, 0.018 + 0.006 * s],
                     [1, 1, 0.200, 0.204], [1, 1, 0.204, 0.205], [1, 3, 0.21, 0.21 + 0.040 * s]], float)
    gcs = np.array([[0.5, 0.6, 2], [0.7, 0.71, 0]], float)
    emissions = np.array([[7, 0.0015, 0], [7, 0.0016, 0], [7, 0.25, 1]], float)
    evictions = np.array([[7, 0.004, 0.203]], float)
    requests = np.array([[7, -1.0, 98, 50, 0.0015], [0, 0.0, 200, 10, 0.3]], float)
    trace = np.array([[7, -1.0, 500, 50], [0, 0.0, 1000, 10]], float)
    return {"steps": steps, "segs": segs, "gcs": gcs, "emissions": emissions, "evictions": evictions,
            "requests": requests, "trace": trace}


def test_each_mechanism_is_read_off_the_log():
    log = synthetic()
    dec = R.decode_samples(log)
    assert set(dec) == {"captured 2", "eager 37-40"}
    assert dec["captured 2"][0] == pytest.approx([6.0]) and dec["eager 37-40"][0] == pytest.approx([40.0])
    # contexts: request 7's rows, 98 prompt tokens plus what it had emitted (2 in step 0; step 1 is eager)
    assert dec["captured 2"][1] == pytest.approx([98.5]) and dec["eager 37-40"][1] == pytest.approx([100.0])
    assert R.prefill_per_token(log)[0] == pytest.approx([0.1]) and R.prefill_per_token(log)[1].tolist() == [100]
    per, per_k, tokens = R.eviction_copies(log)
    assert (per, per_k, tokens) == (pytest.approx([5.0]), pytest.approx([50.0]), pytest.approx([100.0]))
    per, per_k, tokens = R.readmission_copies(log)
    assert (per, per_k, tokens) == (pytest.approx([4.0]), pytest.approx([40.0]), pytest.approx([100.0]))
    ms, emitted = R.gc2_pauses(log)
    assert ms == pytest.approx([100.0]) and emitted.tolist() == [3]        # all three tokens came before it
    us, chars = R.tokenizer_per_char(log)
    # the trace rows are not in arrival order: the first tokenization is the earliest arrival (500 chars)
    assert chars.tolist() == [500.0] and us == pytest.approx([4.0])


def test_the_ratio_table_divides_ours_by_theirs_and_judges_only_what_it_may():
    ours, theirs = synthetic(), synthetic(decode_scale=2.0)
    t = R.ratio_table(ours, theirs, R.Bands(min_events=1, min_gc=1))
    assert t.loc["decode, captured 2", "ratio"] == pytest.approx(0.5)
    assert t.loc["decode, captured 2", "agrees"] is False
    assert t.loc["prefill", "ratio"] == pytest.approx(1.0) and t.loc["prefill", "agrees"] is True
    assert P.outside(t) == ["decode, captured 2", "decode, eager 37-40"]
    strict = R.ratio_table(ours, theirs)                    # one event a row: nothing judged
    assert strict["agrees"].isna().all() and P.outside(strict) == []
    pooled = R.ratio_table([ours, ours], theirs, R.Bands(min_events=2, min_gc=1))
    assert pooled.loc["prefill", "ours n"] == 2 and pooled.loc["prefill", "agrees"] is None
    s = P.sentence(t, duration=60, seed=1, rate=9.5, bands=R.Bands(min_events=1, min_gc=1))
    assert "decode, captured 2 (0.500)" in s and "seed 1" in s and "60 s" in s


def test_full_collections_are_compared_on_a_line_through_their_sizes():
    """Pauses that grow with the records kept: ours 10 + 1 ms per 1,000 tokens emitted,
    theirs 20 + 2; read at the pooled median size, ours is exactly half."""
    tokens = np.array([1000.0, 3000.0, 5000.0])
    ratio, na, nb = R._fitted_ratio(10 + tokens / 1000, tokens, 20 + 2 * (tokens + 1000) / 1000, tokens + 1000)
    assert ratio == pytest.approx(0.5) and (na, nb) == (3, 3)
    assert np.isnan(R._fitted_ratio(np.ones(3), np.ones(3), np.ones(3), tokens)[0])     # one size: no line
    # one of four pauses stretched threefold (the process descheduled) does not move the line
    sizes = np.array([1000.0, 3000.0, 5000.0, 7000.0])
    stretched = 10 + sizes / 1000
    stretched[1] *= 3
    assert R._fitted_ratio(10 + sizes / 1000, sizes, stretched, sizes)[0] == pytest.approx(1.0)


def test_a_row_one_side_lacks_is_shown_unjudged():
    ours = synthetic()
    theirs = synthetic()
    theirs["steps"][1, 4] = 32                              # its second step was captured
    t = R.ratio_table(ours, theirs, R.Bands(min_events=1, min_gc=1))
    assert np.isnan(t.loc["decode, eager 37-40", "article's engine"]) and t.loc["decode, eager 37-40", "agrees"] is None
    assert list(t.index[:3]) == ["decode, captured 2", "decode, captured 32", "decode, eager 37-40"]


def test_a_file_that_is_not_a_raw_log_is_named(tmp_path):
    bad = tmp_path / "x.npz"
    np.savez(bad, steps=np.zeros((0, 7)))
    with pytest.raises(ValueError, match=r"x\.npz: not a raw log .*missing \['segs'"):
        R.read_log(bad)


def test_the_article_engines_log_is_read():
    log = R.read_log(ARTICLE_LOG)
    m = R.mechanisms(log)
    for name in ("decode, captured 32", "prefill", "eviction copy-out", "readmission copy-in", "gen-2 GC pause",
                 "tokenizer"):
        assert len(m[name][1]) > 0 and np.all(m[name][1] > 0), name
    # every eviction stamp lies in a reservation segment, every readmission in a swap-in one
    assert len(R.eviction_copies(log)[0]) > 0
    assert R.eviction_copies(log)[2].sum() > 0
    assert len(m["tokenizer"][1]) == len(log["requests"])   # every request tokenized on the loop


def test_our_logs_swap_segments_are_the_ones_the_engine_marked(pressured_log):
    """The order rule (a step's first swap segment is the swap-in, the second the KV
    reservation) agrees with the finer kind our engine records beside each segment."""
    from engine.serve import segments as S
    log = R.read_log(pressured_log)
    detail = np.load(pressured_log)["seg_detail"]
    swap_in, reserve = R.swap_segments(log)
    assert swap_in.tolist() == np.flatnonzero(detail == S.D_SWAP_IN).tolist()
    assert reserve.tolist() == np.flatnonzero(detail == S.D_RESERVE).tolist()
    ev = R.eviction_copies(log)
    assert len(ev[0]) > 0 and len(R.readmission_copies(log)[0]) > 0
    n_stamped = np.isin(np.searchsorted(log["segs"][reserve, 2], log["evictions"][:, 1], "right") - 1,
                        np.arange(len(reserve))).sum()
    assert n_stamped == len(log["evictions"])
