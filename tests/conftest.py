"""Fixtures every test folder shares."""

from __future__ import annotations

from tests.browser import binary

__all__ = ["binary"]  # the Chromium binary, for the browser tests of every folder
