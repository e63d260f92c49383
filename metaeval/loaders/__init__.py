"""Data files other people wrote, read and checked line by line: meta-sets,
judge items, labels files, annotation files, suites applied to runs."""
