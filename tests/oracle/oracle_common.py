"""What every oracle test imports: the harness, the comparison, and a skip (exit 77)
when pyarrow or duckdb is missing."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def require_modules():
    try:
        import duckdb
        import pyarrow
    except ImportError as e:
        print(f"skipped: {e}")
        sys.exit(77)
    return pyarrow, duckdb


from compare import diff  # noqa: E402
from sluice_py import Sluice, SluiceError  # noqa: E402

__all__ = ["require_modules", "diff", "Sluice", "SluiceError"]


def run_diff(sl, plan, tables, output, want):
    """What differs between the plan's output `output` and `want` (None when equal), or
    the error sluice raised, as text."""
    try:
        return diff(sl.run(plan, tables)[output], want)
    except SluiceError as e:
        return f"error: {e}"


def finish(cases, failures):
    """Prints the count and the first failures; exits 1 when any case failed."""
    print(f"{cases} cases, {len(failures)} differ")
    for f in failures[:40]:
        print("  " + f)
    sys.exit(1 if failures else 0)
