"""Measuring graders and judges against people: agreement metrics, tautology checks.

This package measures results; it never loads files and never renders.
"""
