"""The method: raw logs, schemes, the scalar and whole-run partitions, per-run summary (numpy only; never imports engine)."""
