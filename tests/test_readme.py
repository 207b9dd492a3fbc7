"README.md is generated from nbs/index.ipynb (Quarto, which nbdev_readme needs, is not installable here)."
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def render_readme():
    "The markdown of nbs/index.ipynb, as `python tests/test_readme.py` writes it to README.md."
    index = str(ROOT / 'nbs' / 'index.ipynb')
    out = subprocess.run([sys.executable, '-m', 'nbconvert', '--to', 'markdown', '--stdout', index],
                         check=True, capture_output=True, text=True)
    return out.stdout


def test_readme_in_step_with_index_notebook():
    assert (ROOT / 'README.md').read_text() == render_readme(), \
        "README.md is out of step with nbs/index.ipynb: regenerate it with `python tests/test_readme.py`"


if __name__ == '__main__':
    (ROOT / 'README.md').write_text(render_readme())
