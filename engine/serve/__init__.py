"""The measured code: everything that decides what a run measures.

The engine loop and its parts (KV pool, step tags and clocks, control injections), the
two forwards, the tokenizer, the workload, per-token history, the GC timer and the raw
log writer. The run cache key hashes every file of this package (engine/runs/cache.py),
so an edit here, or a module added here, can never be served a stale run; the
machinery that starts and caches runs lives in engine/runs and never changes a key.
"""
