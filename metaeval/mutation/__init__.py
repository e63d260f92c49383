"""Mutation testing of safety controls and graders: operators, patch mutants,
the pytest plugin that applies them, and the runner that reports each one."""
