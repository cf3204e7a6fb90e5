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
