"""What the chapters show: figures, text histograms, glue, the machine and protocol
tables, and the chapters' shared setup and rules (chapters.py)."""
