"""The samples of the inspect_ai eval the importer's tests run (``inspect_task.py``),
apart from it so that the tests can read them without inspect_ai installed."""

from __future__ import annotations

# (sample id, order, the model's answer): includes() passes the answers holding
# "refunded" in any case; the tests' own check is case-sensitive, so they differ.
CASES = [("refund-1", "A-1182", "Refunded A-1182: $49.99."),
         ("refund-2", "B-404", "Sorry, I could not find that order."),
         ("refund-3", "A-2000", "I have refunded A-2000."),
         ("refund-4", "A-3000", "Refund declined: past 30 days.")]
EPOCHS = 2
