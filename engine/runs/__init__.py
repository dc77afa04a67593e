"""The machinery that makes runs: specs, their order, the cache, child processes,
calibration and profiles. Nothing here decides what a run measures, so editing it never
invalidates a cached run (engine/runs/cache.py hashes engine/serve only).

Imports go one way: spec, order, child, cache <- execute <- calibrate <- protocol.
"""
