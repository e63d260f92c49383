"""metaeval: tests the tests and judges the judges of an LLM-agent evaluation harness."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("metaeval")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
