"""What the scanner leaves out as noise, and what it must keep.

Docstrings of every kind (and any other string statement) make no mutant from
any operator. Strings that only feed a log record, a warning or an exception
message make no string mutant unless ``message_strings`` keeps them. Each table
pairs the cases that must be left out with near twins that must still be mutated.
"""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent

import libcst as cst
import pytest
from click.testing import CliRunner

from metaeval.cli import main
from metaeval.commands import mutate_run as session
from metaeval.errors import InputError
from metaeval.mutation.find.operators import Context, Operator, Variant, select_operators
from metaeval.mutation.find.targets import mutants_in_source
from metaeval.mutation.model import Mutant, MutantResult, Status
from metaeval.mutation.run.runner import MutationRun
from metaeval.mutation.run.settings import load_mutate_settings


def mutated(source: str, *operators: str, message_strings: bool = False) -> list[str]:
    """The original text of every mutant of ``source``, in site order."""
    found = mutants_in_source(dedent(source), path="m.py", module="m",
                              operators=select_operators(list(operators)),
                              message_strings=message_strings)
    return [m.original for m in found]


# --- docstrings: no mutant from any operator -------------------------------------------

# The inspect_ai shape that made a survivor: an enum member and its docstring.
ENUM_MEMBER = '''\
    class AnswerPattern(str, Enum):
        """Regular expressions for extracting answers from output."""

        LETTER = ANSWER_PATTERN_LETTER
        """Extracts a single letter (used with multiple choice)."""

        LINE = ANSWER_PATTERN_LINE
        """Extracts the rest of the line.

        Note that when using a LINE pattern your prompt should say so.
        """
'''


@pytest.mark.parametrize(("source", "others"), [
    ('"""Module."""\n', []),
    ('class C:\n    """Class."""\n', []),
    ('def f():\n    """Function."""\n    return g()\n', []),
    ('async def f():\n    """Coroutine."""\n    await g()\n', ["await g()"]),
    ('X = 1\n"""Attribute docstring after an assignment."""\n', ["1", "1"]),
    ('X: int = 1\n"""Attribute docstring after an annotated assignment."""\n', ["1", "1"]),
    ('class C:\n    limit: int = 3\n    """In a class body, after X: int = 1."""\n',
     ["3", "3"]),
    (ENUM_MEMBER, []),
    # Any other string statement: no effect at run time either.
    ('def f():\n    g()\n    "a note in the middle"\n    h()\n', ["g()", "h()"]),
    ('x = g(); "after a semicolon"\n', []),
    ('"""Implicitly """ "concatenated"\n', []),
    ("b'bytes statement'\n", []),
])
def test_a_string_statement_makes_no_mutant_from_any_operator(
        source: str, others: list[str]) -> None:
    # Every operator is asked; only the code around the string is mutated
    # (drop_call on a call statement, shift_constant up and down on a number).
    assert mutated(source) == others


@pytest.mark.parametrize(("source", "kept"), [
    # must still say yes: a string that is a value, not a statement
    ('X = 1\nY = "kept"\n', ['"kept"']),
    ('class C:\n    """Doc."""\n    role = "admin"\n    """Its doc."""\n', ['"admin"']),
    ('def f():\n    """Doc."""\n    return "allow"\n', ['"allow"']),
    ('def f():\n    return g("deny")\n', ['"deny"']),
])
def test_strings_that_are_values_are_still_mutated(source: str, kept: list[str]) -> None:
    assert mutated(source, "empty_string_literal") == kept


def test_the_enum_members_keep_their_other_mutants() -> None:
    source = ENUM_MEMBER + "    WORD = pattern(3)\n"
    assert mutated(source) == ["3", "3"]  # shift_constant, up and down; no docstring


def test_an_f_string_statement_is_not_a_docstring() -> None:
    # Formatting calls code (``__format__``), so it is not a no-op: its parts stay.
    assert mutated('def f(x):\n    f"{x > 1}"\n', "flip_comparison") == ["x > 1"]


# --- structural decorators: their arguments too --------------------------------------

@pytest.mark.parametrize("source", [
    # The survivor: ``frozen=True`` -> ``frozen=False`` on a result type.
    "@dataclass(frozen=True)\nclass Verdict:\n    passed: bool\n",
    "@dataclasses.dataclass(frozen=True, slots=True, order=False)\nclass V:\n    x: int\n",
    "@functools.lru_cache(maxsize=128)\ndef rules():\n    return load()\n",
    '@pytest.fixture(scope="module")\ndef shop():\n    return make()\n',
])
def test_a_structural_decorator_makes_no_mutant_from_any_operator(source: str) -> None:
    assert mutated(source) == []


@pytest.mark.parametrize(("source", "kept"), [
    # must still say yes: a keyword argument of a call that is not a decorator ...
    ("shape = make(frozen=True)\n", ["True"]),
    ("@dataclass\nclass V:\n    x: int = field(default=False)\n", ["False"]),
    # ... and the arguments of a decorator that guards (a role, a limit)
    ('@requires_role("admin")\ndef refund():\n    pass\n', ['"admin"']),
    ("@rate_limit(per_minute=5)\ndef call():\n    pass\n", ["5", "5"]),
    ("@retry(reraise=True)\ndef call():\n    pass\n", ["True"]),
])
def test_other_calls_and_guarding_decorators_keep_their_arguments(
        source: str, kept: list[str]) -> None:
    assert mutated(source, "swap_bool_literal", "shift_constant", "empty_string_literal") == kept


# --- message strings ---------------------------------------------------------------------

LEFT_OUT = [
    'logger.warning("Perplexity metric: sample %s missing keys", sid)\n',
    'logging.info("started")\n',
    'log.debug("step %d", n)\n',
    'LOG.critical("down")\n',
    '_logger.exception("failed")\n',
    'audit_logger.error("denied")\n',
    'self.logger.error("bad state")\n',
    'self.log.info("x")\n',
    'logger.log(logging.INFO, "message")\n',
    'logger.info("kept %s", value, extra={"role": "admin"})\n',
    'audit = logging.getLogger(__name__)\naudit.info("refund issued")\n',
    'logging.getLogger(__name__).info("x")\n',
    'warnings.warn("deprecated", DeprecationWarning, stacklevel=2)\n',
    'warn("deprecated")\n',
    'raise ValueError("bad")\n',
    'raise ValueError(message="bad")\n',
    'raise SomeError(f"bad {x or \'nothing\'}; expected one of a, b")\n',
    'raise SomeError(f"expected one of {\', \'.join(names)}")\n',
    'raise SomeError("expected one of "\n                "a, b")\n',
    'raise ValueError("{} is not {}".format(a, b))\n',
    'raise ValueError("bad: " + x)\n',
    'raise ValueError("bad: %s" % x)\n',
    'raise errors.InputError(f"the metric {getattr(m, \'__name__\', \'<unknown>\')}")\n',
    'raise parse_error or ParseError("could not extract")\n',
    'raise Denied("why") from Cause("because")\n',
    'assert ok, "why"\n',
]


@pytest.mark.parametrize("source", LEFT_OUT)
def test_a_message_string_makes_no_string_mutant(source: str) -> None:
    assert mutated(source, "empty_string_literal") == []


@pytest.mark.parametrize("source", LEFT_OUT)
def test_message_strings_true_keeps_every_message_string(source: str) -> None:
    assert mutated(source, "empty_string_literal", message_strings=True) != []


@pytest.mark.parametrize(("source", "kept"), [
    # must still say yes: bound to a name first, so it may be used elsewhere too
    ('msg = "bad"\nraise ValueError(msg)\n', ['"bad"']),
    ('def f(x):\n    msg = "bad"\n    logger.warning(msg)\n    return msg\n', ['"bad"']),
    ('logger.info("%s", (mode := "strict"))\n', ['"strict"']),
    ('logger.info("%s", lazy(lambda: "value"))\n', ['"value"']),
    # not a logger, not a logging method, not a message call
    ('printer.info("page")\n', ['"page"']),
    ('logger.setLevel("DEBUG")\n', ['"DEBUG"']),
    ('notify("refund issued")\n', ['"refund issued"']),
    ('print("x", file=sys.stderr)\n', ['"x"']),
    # a grader's output is a result, not a message (inspect_ai's pattern scorer)
    ('return Score(value=NOANSWER, explanation="Scoring pattern not matched: " + x)\n',
     ['"Scoring pattern not matched: "']),
    # in a raise statement but deciding which exception, not its message
    ('raise Denied() if check("strict") else Other()\n', ['"strict"']),
    # an exception built apart from the raise
    ('err = ValueError("bad")\n', ['"bad"']),
    # the assert's test, not its message
    ('assert mode == "strict", "why"\n', ['"strict"']),
])
def test_a_string_that_is_more_than_a_message_is_still_mutated(
        source: str, kept: list[str]) -> None:
    assert mutated(source, "empty_string_literal") == kept


def test_a_message_piece_and_a_value_in_one_function() -> None:
    source = '''\
        def check(role):
            if role != "admin":
                logger.warning("denied for %s", role)
                raise Denied("role %r is not " "admin" % role)
            return "granted"
    '''
    assert mutated(source, "empty_string_literal") == ['"admin"', '"granted"']
    assert mutated(source, "empty_string_literal", message_strings=True) == [
        '"admin"', '"denied for %s"', '"role %r is not " "admin"', '"granted"']


def test_any_operator_that_only_changes_a_message_string_is_left_out() -> None:
    # Not only empty_string_literal: an operator that rewrites f-strings is held
    # to the same rule, as the rule is the scanner's.
    def blank_f_string(node: cst.CSTNode, ctx: Context) -> tuple[Variant, ...]:
        if isinstance(node, cst.FormattedString):
            return (Variant(node, cst.SimpleString('""')),)
        return ()

    operator = Operator("blank_f_string", "An f-string becomes empty.", blank_f_string)
    source = 'raise ValueError(f"bad {x}")\nkey = f"user:{x}"\n'

    def run(message_strings: bool) -> list[str]:
        return [m.original for m in mutants_in_source(source, path="m.py", module="m",
                                                       operators=[operator],
                                                       message_strings=message_strings)]

    assert run(False) == ['f"user:{x}"']
    assert run(True) == ['f"bad {x}"', 'f"user:{x}"']


# --- the option: config key and flag -----------------------------------------------------


LOGGING_MODULE = '''\
import logging

logger = logging.getLogger(__name__)


def allowed(role):
    if role == "admin":
        return True
    logger.warning("denied: %s", role)
    return False
'''


def project(tmp_path: Path, section: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.metaeval.mutate]\ntargets = ["gate.py"]\noperators = ["empty_string_literal"]\n'
        f"{section}", encoding="utf-8")
    (tmp_path / "gate.py").write_text(LOGGING_MODULE, encoding="utf-8")
    (tmp_path / "mutants").mkdir(exist_ok=True)
    return tmp_path


def test_the_config_key_is_read_and_checked(tmp_path: Path) -> None:
    assert load_mutate_settings(project(tmp_path)).message_strings is False
    assert load_mutate_settings(project(tmp_path, "message_strings = true\n")).message_strings
    with pytest.raises(InputError, match=r"tool\.metaeval\.mutate\.message_strings: got 'yes'; "
                                         "expected true or false"):
        load_mutate_settings(project(tmp_path, 'message_strings = "yes"\n'))


def fake_run(mutants: list[Mutant], *args: object, **kwargs: object) -> MutationRun:
    warm = kwargs.get("warm")
    if warm is not None:
        warm.stop()  # type: ignore[attr-defined]
    return MutationRun(tuple(MutantResult(m, Status.KILLED) for m in mutants), 0.1, 1.0)


@pytest.mark.parametrize(("section", "flags", "logged"), [
    ("", [], False),
    ("", ["--message-strings"], True),
    ("message_strings = true\n", [], True),
    ("message_strings = true\n", ["--no-message-strings"], False),  # the flag wins
])
def test_the_flag_and_the_key_reach_the_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, section: str, flags: list[str],
        logged: bool) -> None:
    monkeypatch.chdir(project(tmp_path, section))
    monkeypatch.setattr(session, "run_mutants", fake_run)
    out = CliRunner().invoke(main, ["mutate", "--format", "json", "--isolation", "subprocess",
                                    *flags])
    assert out.exit_code == 0, out.output
    originals = [m["id"] for m in json.loads(out.stdout)["mutants"]]
    expected = ["gate.py::allowed::empty_string_literal::0"]
    if logged:
        expected.append("gate.py::allowed::empty_string_literal::1")
    assert originals == expected
