"""The method on one raw log, numpy only, never importing engine: named columns, schemes,
the scalar and whole-run partitions, timelines, thread clocks, the per-run summary."""
