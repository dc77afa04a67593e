"""The instrument checked: its controls, the sixth pile of slow steps, its overhead, the partition cases, its knobs and tags."""
