"""The instrument checked: its controls, the sixth pile of slow steps, what its clock
reads cost, the partition cases, and the knobs and tags it records."""
