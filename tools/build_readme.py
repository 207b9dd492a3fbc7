#!/usr/bin/env python
"""Render README.md from the home page notebook, nbs/index.ipynb, which is written by hand.

    python tools/build_readme.py            # execute the quick start, then render README.md
    python tools/build_readme.py --no-execute

nbconvert turns the notebook into Markdown (Quarto, which `nbdev_readme` needs, is not installable here);
tests/test_readme.py checks that README.md is in step with the notebook.
"""
import argparse
import subprocess
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from execute_nb import execute_in_place  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / 'nbs' / 'index.ipynb'


def render_readme(index=INDEX):
    "The Markdown of the home page notebook, as README.md holds it."
    out = subprocess.run([sys.executable, '-m', 'nbconvert', '--to', 'markdown', '--stdout', str(index)],
                         check=True, capture_output=True, text=True)
    return out.stdout


def merge_streams(index=INDEX):
    "Join consecutive stream outputs of one name (how many chunks a print arrives in is a matter of timing)."
    nb = nbformat.read(index, as_version=4)
    for cell in nb.cells:
        merged = []
        for out in cell.get('outputs', []):
            if merged and out.output_type == merged[-1].output_type == 'stream' and out.name == merged[-1].name:
                merged[-1].text += out.text
            else:
                merged.append(out)
        if cell.cell_type == 'code': cell.outputs = merged
    nbformat.write(nb, index)


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description='Render README.md from nbs/index.ipynb.')
    ap.add_argument('--execute', action=argparse.BooleanOptionalAction, default=True,
                    help='run the quick start first, so its stored output is current')
    if ap.parse_args().execute:
        execute_in_place(INDEX)
        merge_streams()
        subprocess.run([str(Path(sys.executable).parent / 'nbdev_clean'), '--fname', str(INDEX)], check=True)
    (ROOT / 'README.md').write_text(render_readme())
