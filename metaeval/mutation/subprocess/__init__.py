"""Subprocess isolation (``--isolation subprocess``): a fresh pytest process per
mutant, the reference fork isolation is held to. ``parent`` starts the pytest
processes (and runs a mutant the fork cannot place); ``child`` is the plugin's
session inside each; ``protocol`` is what they tell each other. The child side
never loads libcst nor ``mutation.find``.
"""
