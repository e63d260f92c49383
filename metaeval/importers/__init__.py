"""Readers of foreign formats: one module per format, each with a documented field mapping.

``runs/`` reads agent runs (eval logs, message logs, span exports) into meta-set
lines. An importer never calls or imports code named in the data it reads, and
never guesses a mapping it cannot make: that is an error naming the record.
"""
