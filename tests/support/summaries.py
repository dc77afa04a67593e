"""Synthetic run summaries with known answers: one run's summary, and a ladder shaped
like the article's, on which every finding holds."""
from analysis.core.schemes import CAUSES, LABELS


def fake(rung, seed, **over):
    s = {"rung": rung, "seed": seed, "itl_p50": 12.0, "itl_p99": 40.0, "itl_p999": 900.0, "itl_max": 9000.0,
         "ttft_p50": 100.0, "fwd_share_clean_median": 0.97, "fwd_share_tail_median": 0.2,
         "tail_share": {k: 0.0 for k in LABELS}, "all_share": {k: 0.0 for k in LABELS},
         "tail_count": {k: 0 for k in CAUSES + ["clean"]}, "gc_counts": {"0": 400, "1": 30, "2": 3},
         "gen2_serving_ms": [200.0], "eager_steps": 300, "preemptions": 100,
         "reconcile_max_err_ms": 0.0, "skipped_steps_without_eviction": 0}
    s["tail_share"].update(preempt=0.7, prefill=0.2, graph=0.002, tok=0.05)
    s["all_share"].update(graph=0.02, kernel=0.9)
    s["tail_count"].update(prefill=800, preempt=200)
    for k, v in over.items():
        if isinstance(v, dict):
            s[k] = {**s[k], **v}
        else:
            s[k] = v
    return s


def article_like(seeds=(1, 2, 3)):
    runs = []
    for seed in seeds:
        runs += [fake("baseline", seed),
                 fake("+gc.freeze", seed, gen2_serving_ms=[60.0]),
                 fake("+compact history", seed, gen2_serving_ms=[], gc_counts={"0": 30}),
                 fake("+graphs to 48", seed, eager_steps=0, gen2_serving_ms=[], itl_p99=37.0),
                 fake("+budget 256", seed, eager_steps=0, gen2_serving_ms=[], itl_p99=30.0),
                 fake("+tokenize off-loop", seed, eager_steps=0, gen2_serving_ms=[], itl_p99=30.0,
                      tail_share={"tok": 0.0}),
                 fake("+admit watermark", seed, eager_steps=0, gen2_serving_ms=[], itl_p99=28.0,
                      itl_p999=50.0, itl_max=110.0, preemptions=2, ttft_p50=900.0,
                      tail_share={"tok": 0.0, "preempt": 0.002})]
    return runs
