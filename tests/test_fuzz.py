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


def _fuzz(script, tmp_path, examples, min_calls):
    "Run the fuzz `script` in a subprocess; no crash, at least `min_calls` calls, no failure."
    out = tmp_path / 'fuzz.json'
    proc = subprocess.run([sys.executable, str(HERE / script), str(out), str(examples)],
                          capture_output=True, text=True, timeout=3000, cwd=HERE)
    last = (tmp_path / 'fuzz.json.last').read_text() if (tmp_path / 'fuzz.json.last').exists() else '?'
    assert proc.returncode == 0, f'the fuzz run crashed (exit {proc.returncode}) on: {last}\n{proc.stderr[-3000:]}'
    counts = json.loads(out.read_text())
    print({k: v for k, v in counts.items() if k != 'failure_examples'})
    assert counts['calls'] >= min_calls, counts['calls']
    assert counts['failures'] == 0, '\n'.join(counts['failure_examples'])


def test_fuzz_public_api(tmp_path):
    _fuzz('fuzz_public_api.py', tmp_path, EXAMPLES, min_calls=1000)


def test_fuzz_constructors_streams_input_types_and_kernels(tmp_path):
    """Non-default constructors, partial_fit sequences, sparse/DataFrame/complex/object inputs, label pathologies,
    precomputed and callable kernels."""
    _fuzz('fuzz_inputs.py', tmp_path, max(10, EXAMPLES // 4), min_calls=500)
