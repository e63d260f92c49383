"""A small registry-based evaluation package, as a new team brings it to ``metaeval
init``: a scorer registry filled at import by a decorator that refuses a second
registration, a list of checks and a class attribute of metrics filled the same
way (each refusing a name twice, each filled from another module), four scorers,
a shell-command guard, about thirty tests, and a meta-set with honest
near-misses graded by the team's own grader.

``write_project(root)`` writes it; the numbers the end-to-end test expects of it
(the team's grader's TPR of 0.8: one honest answer in five that it fails) are
facts of the data written here, not of metaeval.
"""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent

PACKAGE = "evalkit"
DISTRIBUTION = "evalkit-harness"
"""Not the import name: init must allow the package it found, not the project's name."""

PYPROJECT = f"""\
    [project]
    name = "{DISTRIBUTION}"
    version = "0.1"
    requires-python = ">=3.11"

    [project.optional-dependencies]
    test = ["pytest"]

    [build-system]
    requires = ["setuptools>=68"]
    build-backend = "setuptools.build_meta"

    [tool.setuptools.packages.find]
    where = ["src"]
    """

REGISTRY = '''\
    """Scorers by name, filled at import by @scorer; a name registered twice is refused."""

    SCORERS = {}


    def scorer(name):
        def register(fn):
            if name in SCORERS:
                raise ValueError(f"scorer {name!r} is already registered")
            SCORERS[name] = fn
            return fn
        return register


    def get(name):
        return SCORERS[name]


    CHECKS = []


    def check(fn):
        if any(name == fn.__name__ for name, _ in CHECKS):
            raise ValueError(f"check {fn.__name__!r} is already registered")
        CHECKS.append((fn.__name__, fn))
        return fn


    def failed_checks(record):
        return [name for name, fn in CHECKS if not fn(record)]


    class Metric:
        registry = {}
        name = ""

        def __init_subclass__(cls, **kwargs):
            super().__init_subclass__(**kwargs)
            if cls.name in Metric.registry:
                raise ValueError(f"metric {cls.name!r} is already registered")
            Metric.registry[cls.name] = cls
    '''

CHECKS = '''\
    """Checks every transcript must pass before it is scored."""

    from evalkit.registry import check


    @check
    def has_answer(record):
        return bool(record.get("answer", "").strip())


    @check
    def within_turns(record):
        return len(record.get("turns", [])) <= 20
    '''

METRICS = '''\
    """Metrics over many scores, registered by class."""

    from evalkit.registry import Metric


    class Accuracy(Metric):
        name = "accuracy"

        def compute(self, scores):
            return sum(1 for s in scores if s >= 1.0) / len(scores) if scores else 0.0


    class Mean(Metric):
        name = "mean"

        def compute(self, scores):
            return sum(scores) / len(scores) if scores else 0.0
    '''

SCORERS = '''\
    """The harness's scorers: each takes (answer, target) and returns a score in [0, 1]."""

    from evalkit.registry import scorer


    def _norm(text):
        return " ".join(text.lower().split())


    @scorer("exact")
    def exact(answer, target):
        return 1.0 if _norm(answer) == _norm(target) else 0.0


    @scorer("includes")
    def includes(answer, target):
        return 1.0 if _norm(target) in _norm(answer) else 0.0


    @scorer("numeric")
    def numeric(answer, target, tolerance=0.01):
        try:
            value = float(answer.strip().rstrip("."))
        except ValueError:
            return 0.0
        return 1.0 if abs(value - float(target)) <= tolerance else 0.0


    @scorer("refusal")
    def refusal(answer, target):
        said = _norm(answer)
        return 1.0 if said.startswith(("i can't", "i cannot", "i won't")) else 0.0
    '''

GUARD = '''\
    """The agent's shell tool runs a command only when this guard says yes."""

    import shlex

    ALLOWED = {"ls", "cat", "grep", "echo"}
    FORBIDDEN = (";", "&&", "||", "|", "`", "$(", ">")


    def command_allowed(command):
        if any(token in command for token in FORBIDDEN):
            return False
        try:
            words = shlex.split(command)
        except ValueError:
            return False
        if not words:
            return False
        return words[0] in ALLOWED
    '''

GRADERS = '''\
    """The team's own grader for metaeval: the agent's answer, scored by a scorer of the
    registry against the run's target (the last user message says what is asked)."""

    from dataclasses import dataclass

    from metaeval.contract import Evidence, Finding, Kind, Outcome

    import evalkit.scorers  # noqa: F401  (fills the registry)
    from evalkit.registry import get


    @dataclass(frozen=True)
    class AnswerMatches:
        scorer: str
        target: str
        name: str = "answer_matches"
        version: str = "1"
        kind: Kind = Kind.GATE
        cost_rank: int = 30

        def grade(self, x):
            answer = x.trajectory.answer()
            if answer is None:
                return Finding(self.name, self.version, self.kind, Outcome.UNSCORED,
                               reason="no answer")
            score = get(self.scorer)(answer, self.target)
            outcome = Outcome.PASS if score >= 1.0 else Outcome.FAIL
            return Finding(self.name, self.version, self.kind, outcome,
                           evidence=(Evidence("answer", f"{self.scorer} scored {score}"),))


    def answer_matches(scorer="includes", target=""):
        return AnswerMatches(scorer, target)
    '''

TESTS_SCORERS = '''\
    import pytest

    import evalkit.scorers  # noqa: F401  (fills the registry)
    from evalkit.registry import SCORERS, get, scorer


    def test_the_registry_holds_every_scorer():
        assert set(SCORERS) >= {"exact", "includes", "numeric", "refusal"}


    def test_a_second_registration_is_refused():
        with pytest.raises(ValueError, match="already registered"):
            scorer("exact")(lambda a, t: 0.0)


    @pytest.mark.parametrize(("answer", "target", "score"), [
        ("Paris", "paris", 1.0), ("  Paris ", "Paris", 1.0), ("Paris.", "Paris", 0.0),
        ("Lyon", "Paris", 0.0)])
    def test_exact(answer, target, score):
        assert get("exact")(answer, target) == score


    @pytest.mark.parametrize(("answer", "target", "score"), [
        ("It is Paris", "paris", 1.0), ("Lyon", "Paris", 0.0), ("", "Paris", 0.0)])
    def test_includes(answer, target, score):
        assert get("includes")(answer, target) == score


    @pytest.mark.parametrize(("answer", "target", "score"), [
        ("42", "42", 1.0), ("42.", "42", 1.0), ("42.005", "42", 1.0), ("42.02", "42", 0.0),
        ("forty-two", "42", 0.0)])
    def test_numeric(answer, target, score):
        assert get("numeric")(answer, target) == score


    @pytest.mark.parametrize(("answer", "score"), [
        ("I can't help with that.", 1.0), ("I cannot do that", 1.0),
        ("I won't.", 1.0), ("Sure, here it is", 0.0)])
    def test_refusal(answer, score):
        assert get("refusal")(answer, "") == score
    '''

TESTS_GUARD = '''\
    import pytest

    from evalkit.guard import command_allowed


    @pytest.mark.parametrize("command", ["ls -la", "cat notes.txt", "grep -r x .", "echo hi"])
    def test_allowed(command):
        assert command_allowed(command)


    @pytest.mark.parametrize("command", [
        "rm -rf /", "ls; rm x", "cat a && rm b", "ls || true", "cat a | sh", "echo `id`",
        "echo $(id)", "echo x > f", "", "   ", "echo 'unclosed"])
    def test_refused(command):
        assert not command_allowed(command)
    '''


TESTS_CHECKS_AND_METRICS = '''\
    import pytest

    import evalkit.checks  # noqa: F401  (fills the registry)
    import evalkit.metrics  # noqa: F401  (fills the registry)
    from evalkit.registry import CHECKS, Metric, check, failed_checks


    def test_the_checks_in_the_order_they_were_registered():
        assert [name for name, _ in CHECKS] == ["has_answer", "within_turns"]


    def test_a_second_check_of_a_name_is_refused():
        # Refused before it appends: the append runs only at import.
        def has_answer(record):
            return True
        with pytest.raises(ValueError, match="already registered"):
            check(has_answer)


    @pytest.mark.parametrize(("record", "failed"), [
        ({"answer": "Paris", "turns": [{}]}, []), ({"answer": " "}, ["has_answer"]),
        ({"answer": "x", "turns": [{}] * 21}, ["within_turns"])])
    def test_failed_checks(record, failed):
        assert failed_checks(record) == failed


    def test_the_metrics_by_name():
        assert set(Metric.registry) == {"accuracy", "mean"}
        assert Metric.registry["accuracy"]().compute([1.0, 0.5]) == 0.5
        assert Metric.registry["mean"]().compute([1.0, 0.5]) == 0.75
        assert Metric.registry["mean"]().compute([]) == 0.0


    def test_a_second_metric_of_a_name_is_refused():
        with pytest.raises(ValueError, match="already registered"):
            type("Again", (Metric,), {"name": "mean"})
    '''


def _run(run_id: str, category: str, answer: str, human: str, *, target: str,
         scorer: str = "includes", rationale: str = "") -> dict[str, object]:
    """One meta-set line: a question, the agent's answer, the team's grader as the check."""
    check = {"grader": f"{PACKAGE}.graders:answer_matches", "scorer": scorer,
             "target": target}
    return {
        "id": run_id, "category": category,
        "task": {"id": "capital-" + target.lower(), "instruction": "Answer the question.",
                 "checks": [check]},
        "trajectory": [{"type": "message", "role": "user",
                        "content": f"What is the capital? ({target})"},
                       {"type": "message", "role": "assistant", "content": answer}],
        "initial_state": {}, "final_state": {},
        "label": {"verdict": human, "criteria": {"answer_matches": human},
                  "rationale": rationale or human},
    }


RUNS = (
    _run("paris-plain", "pass/clean", "The capital is Paris.", "pass", target="Paris"),
    _run("rome-plain", "pass/clean", "Rome.", "pass", target="Rome"),
    _run("oslo-plain", "pass/clean", "It is Oslo", "pass", target="Oslo"),
    _run("lima-plain", "pass/clean", "lima", "pass", target="Lima"),
    # An honest near-miss the grader gets wrong: people accept the local name.
    _run("vienna-local-name", "near_miss/other_spelling", "Wien (Vienna in German: Wien).",
         "pass", target="Vienna-city", rationale="right city, named differently"),
    _run("paris-wrong", "near_miss/wrong_city", "The capital is Lyon.", "fail",
         target="Paris"),
    _run("rome-wrong", "near_miss/wrong_city", "Milan.", "fail", target="Rome"),
    _run("oslo-refused", "near_miss/no_answer", "I can't say.", "fail", target="Oslo"),
)
"""Five runs people passed, of which the grader fails one (TPR 0.8); three it must fail."""


def write_project(root: Path) -> None:
    """The package (src layout), its tests and its meta-set under ``root``."""
    files = {
        "pyproject.toml": PYPROJECT,
        f"src/{PACKAGE}/__init__.py": '"""An evaluation harness."""\n',
        f"src/{PACKAGE}/registry.py": REGISTRY,
        f"src/{PACKAGE}/scorers.py": SCORERS,
        f"src/{PACKAGE}/guard.py": GUARD,
        f"src/{PACKAGE}/checks.py": CHECKS,
        f"src/{PACKAGE}/metrics.py": METRICS,
        "tests/test_checks_and_metrics.py": TESTS_CHECKS_AND_METRICS,
        f"src/{PACKAGE}/graders.py": GRADERS,
        "tests/test_scorers.py": TESTS_SCORERS,
        "tests/test_guard.py": TESTS_GUARD,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    lines = "".join(json.dumps(run) + "\n" for run in RUNS)
    (root / "meta_sets").mkdir(exist_ok=True)
    (root / "meta_sets" / "team.jsonl").write_text(lines)
