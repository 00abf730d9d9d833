import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parents[2] / "examples"


def test_quickstart_runs_and_reports_the_breakdown():
    out = subprocess.run([sys.executable, str(EXAMPLES / "quickstart.py")], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert "reward after giving up" in out and "OracleAgent: reward 1.00" in out
    assert "unknown argument(s) 'site'" in out
