"""The baseline's recorder on Python 3.12 and later: ``sys.monitoring`` (PEP 669)
instead of ``sys.settrace``.

It records what ``apply.CallRecorder`` records (which functions ran under which
test, which of their lines, and who called the packages' functions at import),
at a fraction of the cost: a trace function is called for every call and every
line of every frame, while a monitoring callback may answer ``DISABLE`` and is
not called again for that place until ``restart_events``, which each test's
start calls. So a loop in a scorer costs one event per line per test, not one
per iteration. Lines are watched only in the recorded packages' functions, from
their first start under a test.

It uses a tool id of its own (3 or 4; coverage.py takes 1), so a suite run
under a coverage tool neither loses this recorder nor loses its own. Chosen by
``recorder_for``; ``METAEVAL_RECORDER=settrace`` keeps the trace function.
"""

from __future__ import annotations

import os
import sys
import types

from metaeval.mutation.child import apply
from metaeval.mutation.child.apply import CallRecorder
from metaeval.mutation.child.foreign import module_above

NAME = "metaeval"
OWN_FILES = frozenset({__file__, apply.__file__})
"""The recorders' own lines: when metaeval mutates itself they would be recorded
while the recorder files them (``CallRecorder`` leaves its own file out too)."""
TOOL_IDS = (3, 4)
"""Tool ids no standard tool claims (0 debugger, 1 coverage, 2 profiler, 5 optimizer)."""


class MonitorRecorder(CallRecorder):
    """``CallRecorder``'s record, from ``sys.monitoring`` events."""

    def __init__(self, packages: tuple[str, ...], tool: int) -> None:
        super().__init__(packages)
        self.tool = tool
        self.watched: set[types.CodeType] = set()
        """Functions whose line events are on (the packages' that ran under a test)."""

    def start(self) -> None:
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        events = monitoring.events
        if monitoring.get_tool(self.tool) is None:
            monitoring.use_tool_id(self.tool, NAME)
        monitoring.register_callback(self.tool, events.PY_START, self._started)
        monitoring.register_callback(self.tool, events.PY_RESUME, self._started)
        monitoring.register_callback(self.tool, events.LINE, self._lined)
        monitoring.set_events(self.tool, events.PY_START | events.PY_RESUME)
        for code in self.watched:
            monitoring.set_local_events(self.tool, code, events.LINE)
        monitoring.restart_events()

    def stop(self) -> None:
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        if monitoring.get_tool(self.tool) != NAME:
            return
        monitoring.set_events(self.tool, 0)
        for code in self.watched:  # local events outlive set_events
            monitoring.set_local_events(self.tool, code, 0)
        for event in (monitoring.events.PY_START, monitoring.events.PY_RESUME,
                      monitoring.events.LINE):
            monitoring.register_callback(self.tool, event, None)
        monitoring.free_tool_id(self.tool)

    def intact(self) -> bool:
        """Whether the events still come here (a test may free the tool id)."""
        return bool(sys.monitoring.get_tool(self.tool) == NAME)  # type: ignore[attr-defined]

    def begin(self, nodeid: str) -> None:
        super().begin(nodeid)
        # Every place that said DISABLE under the last test reports once more.
        sys.monitoring.restart_events()  # type: ignore[attr-defined]

    def _started(self, code: types.CodeType, offset: int) -> object:
        disable = sys.monitoring.DISABLE  # type: ignore[attr-defined]
        tests = self.seen.get(code)
        if tests is None:
            tests = self.seen[code] = set()
            frame = sys._getframe(1)  # the frame that starts: this callback's caller
            module = self.modules[code] = str(frame.f_globals.get("__name__", ""))
            self.wanted[code] = module.partition(".")[0] in self.packages
        if not self.current:
            if code.co_name == "<module>":
                self.imported(sys._getframe(1), code)
                return disable
            if self.wanted[code]:
                # Every caller counts (each module whose import calls it): no DISABLE.
                self.callers.setdefault(code, set()).add(module_above(sys._getframe(1)))
                return None
            return disable
        tests.add(self.current)
        if self.wanted[code] and code not in self.watched and code.co_filename not in OWN_FILES:
            self.watched.add(code)
            sys.monitoring.set_local_events(  # type: ignore[attr-defined]
                self.tool, code, sys.monitoring.events.LINE)  # type: ignore[attr-defined]
        return disable

    def _lined(self, code: types.CodeType, line: int) -> object:
        if self.current:
            self.hit.add((code, line))
        return sys.monitoring.DISABLE  # type: ignore[attr-defined]


def recorder_for(packages: tuple[str, ...]) -> CallRecorder:
    """The cheapest recorder this interpreter offers: ``sys.monitoring`` from Python
    3.12 on, with a free tool id, unless ``METAEVAL_RECORDER=settrace``."""
    if sys.version_info >= (3, 12) and os.environ.get("METAEVAL_RECORDER") != "settrace":
        for tool in TOOL_IDS:
            if sys.monitoring.get_tool(tool) is None:  # type: ignore[attr-defined]
                return MonitorRecorder(packages, tool)
    return CallRecorder(packages)
