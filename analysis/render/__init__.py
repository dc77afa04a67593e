"""What the chapters show: figures, text histograms, glue, the machine and protocol
tables, and the chapters' shared setup and rules (chapter_runs.py)."""
from .display import show_whole_cells

show_whole_cells()      # every chapter imports this package: no table cell is cut with "..."
