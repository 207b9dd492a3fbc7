"""The fuzz run: several thousand random and adversarial inputs over every public estimator (and the public
functions), in a subprocess so that an interpreter crash is caught. Zero crashes, zero silent non-finite outputs,
zero exceptions other than a `ValueError`/`TypeError` with a message."""
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = int(os.environ.get('KELM_NB_FUZZ_EXAMPLES', '100'))


def test_fuzz_public_api(tmp_path):
    out = tmp_path / 'fuzz.json'
    proc = subprocess.run([sys.executable, str(HERE / 'fuzz_public_api.py'), str(out), str(EXAMPLES)],
                          capture_output=True, text=True, timeout=3000)
    last = (tmp_path / 'fuzz.json.last').read_text() if (tmp_path / 'fuzz.json.last').exists() else '?'
    assert proc.returncode == 0, f'the fuzz run crashed (exit {proc.returncode}) on: {last}\n{proc.stderr[-3000:]}'
    counts = json.loads(out.read_text())
    print({k: v for k, v in counts.items() if k != 'failure_examples'})
    assert counts['calls'] >= 1000, counts['calls']
    assert counts['failures'] == 0, '\n'.join(counts['failure_examples'])
