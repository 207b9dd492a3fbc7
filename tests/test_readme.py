"README.md is rendered from nbs/index.ipynb (`python tools/build_readme.py`), and reads as a home page."
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
from build_readme import render_readme  # noqa: E402

README = (ROOT / 'README.md').read_text()


def test_readme_in_step_with_index_notebook():
    assert README == render_readme(), \
        "README.md is out of step with nbs/index.ipynb: regenerate it with `python tools/build_readme.py`"


def test_readme_first_screen_has_a_python_example():
    lines = README.splitlines()
    fences = [i for i, line in enumerate(lines) if line.startswith('```')]
    first = next(i for i in fences if 'from kelm_nb import' in '\n'.join(lines[i:i + 8]))
    assert first < 60, f'the first example importing kelm_nb starts at line {first}'


def test_readme_is_short_with_short_lines():
    assert len(README) < 12_000
    assert max(len(line) for line in README.splitlines()) <= 200
