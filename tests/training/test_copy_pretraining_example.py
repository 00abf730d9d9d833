"""examples/copy_pretraining.py: the copy experiments of docs/training.md, in a few steps."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "copy_pretraining.py"


def run(work: Path, *args: str) -> str:
    return subprocess.run([sys.executable, str(EXAMPLE), "--work", str(work), *args], capture_output=True, text=True,
                          timeout=600, check=True).stdout


def test_repeats_report_every_kind_of_held_out_row_and_digits_count_what_must_be_copied(tmp_path):
    out = run(tmp_path, "repeats", "--mode", "mix", "--steps", "20")
    line = re.search(r"^20 \d+s loss ([\d.]+) \{'fixed': [\d.]+, 'twice': [\d.]+, 'span': [\d.]+\}$", out, re.M)
    assert line and 0 < float(line.group(1)) < 10

    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^STTArena/(\S+-easy)\s+(\d+) digit tokens", run(
        tmp_path, "digits"), re.M)}
    coldchain = [n for env_id, n in counts.items() if env_id.startswith("ColdChain")]
    carrental = [n for env_id, n in counts.items() if env_id.startswith("CarRental")]
    assert len(coldchain) == len(carrental) == 9
    assert max(coldchain) < min(carrental)  # why the CPU demo trains on ColdChain
