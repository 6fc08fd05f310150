"""What every operation of the lab and every command share, and nothing that belongs to one
operation: the operation protocol (``op.Op``), the dtype table, outputs that show unwritten and
out-of-bounds elements, timing and provenance, the tuned-table loader, the terminal layout.

Nothing here imports an operation package or the harness: they import this.
"""
