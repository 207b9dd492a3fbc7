"""Execute notebooks in place so their stored outputs match their code; cells marked `#| slow` are skipped and
keep the outputs they have. Run `nbdev_clean` afterwards.

    python tools/execute_nb.py nbs/02_core.ipynb [...] [--timeout SECONDS]
"""
import argparse
import re
from pathlib import Path

import nbformat
from nbclient import NotebookClient

SLOW = re.compile(r'^\s*#\|\s*slow\b', re.M)


def execute_in_place(path, timeout=1800):
    "Run the notebook at `path` (its folder as working directory) and write it back with the new outputs."
    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    skipped = []
    for cell in nb.cells:
        if cell.cell_type == 'code' and SLOW.search(cell.source):
            tags = cell.metadata.setdefault('tags', [])
            if 'skip-execution' not in tags:
                tags.append('skip-execution')
                skipped.append(cell)
    NotebookClient(nb, timeout=timeout, kernel_name='python3',
                   resources={'metadata': {'path': str(path.parent)}}).execute()
    for cell in skipped:
        cell.metadata['tags'].remove('skip-execution')
        if not cell.metadata['tags']: del cell.metadata['tags']
    nbformat.write(nb, path)


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description='Execute notebooks in place (slow cells keep their outputs).')
    ap.add_argument('notebooks', nargs='+')
    ap.add_argument('--timeout', type=int, default=1800, help='seconds per cell')
    args = ap.parse_args()
    for nb in args.notebooks:
        execute_in_place(nb, args.timeout)
        print(f'{nb}: executed')
