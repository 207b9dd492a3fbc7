"""How far the notebooks read as a book: the targets of the book re-cut, measured per notebook.

    python tools/book_check.py [NOTEBOOK ...] [--verbose]

Per notebook: export cells (their median and largest size, directives excluded), the public definitions that no
plain code cell uses within the next three cells, and history marks (issue numbers, rounds, commit hashes,
"the previous implementation", machine load, absolute paths) in sources and stored outputs. Across the package:
jitted functions with more than 10 positional parameters and estimators whose ``_parameter_constraints`` leave an
``__init__`` parameter out. Exits 1 when a target is missed.
"""
import argparse
import ast
import glob
import inspect
import json
import re
import statistics
import sys

EXPORT = re.compile(r'\s*#\|\s*export')
DEF = re.compile(r'^(?:def|class) ([A-Za-z]\w*)', re.M)
HISTORY = re.compile(
    r'\bissues?\s*#?\d+\b|\bround\s*\d\b|\bround (one|two|three)\b|\b(this|last|previous) round\b'
    r'|\bthe previous (implementation|version|behaviou?r|code|solver)\b|\b[0-9a-f]{7,40}\b(?=`)'
    r'|(?<![\w:./])/[a-z]+/(?:[\w.-]+/)+[\w.-]+\.(?:py|ipynb|so|txt)\b|\baudit(or)?s?\b'
    r'|\b(busy|quiet|loaded) (machine|box)\b|\bthe old (code|solver|implementation)\b', re.I)
MAX_CELL, MEDIAN_CELL, NEAR_SHARE, NEAR_CELLS, MAX_JIT_ARGS = 60, 20, 0.85, 3, 10


def cell_sizes_and_far_defs(cells):
    "Sizes of the export cells and the public definitions no plain cell uses within `NEAR_CELLS` cells."
    srcs = [''.join(c['source']) for c in cells]
    sizes, far, n_defs = [], [], 0
    for i, c in enumerate(cells):
        if c['cell_type'] != 'code' or not EXPORT.match(srcs[i]): continue
        sizes.append((len([ln for ln in srcs[i].splitlines() if not ln.strip().startswith('#|')]), i))
        for name in DEF.findall(srcs[i]):
            n_defs += 1
            near = range(i + 1, min(i + 1 + NEAR_CELLS, len(cells)))
            used = any(cells[j]['cell_type'] == 'code' and not EXPORT.match(srcs[j])
                       and re.search(rf'\b{name}\b', srcs[j]) for j in near)
            if not used: far.append((name, i))
    return sizes, far, n_defs


def own_module_imports(cells):
    "Cells of a notebook that import the module the notebook itself exports (it must define, not import, it)."
    srcs = [''.join(c['source']) for c in cells]
    exp = next((m.group(1) for s in srcs for m in [re.search(r'^#\|\s*default_exp\s+(\S+)', s, re.M)] if m), None)
    if exp is None: return []
    pkg, _, mod = ('kelm_nb.' + exp).rpartition('.')
    own = re.compile(rf'^\s*(?:from\s+kelm_nb\.{re.escape(exp)}\s+import|import\s+kelm_nb\.{re.escape(exp)}\b'
                     rf'|from\s+{re.escape(pkg)}\s+import\s+(?:.*[\s,(])?{re.escape(mod)}\b)', re.M)
    return [i for i, (c, s) in enumerate(zip(cells, srcs)) if c['cell_type'] == 'code' and own.search(_imports(s))]


def _imports(source):
    "The import statements of a cell's code (a script inside a string is not the notebook importing it)."
    try:
        tree = ast.parse(source)
    except SyntaxError:  # magics: fall back to the text
        return source
    return '\n'.join(ast.unparse(n) for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))


def history_marks(text):
    return [m.group(0) for m in HISTORY.finditer(text)]


def notebook_history(cells):
    "History marks in a notebook's sources and stored text outputs, as (cell index, mark)."
    found = []
    for i, c in enumerate(cells):
        texts = [''.join(c['source'])]
        for o in c.get('outputs', []):
            texts += [json.dumps(o.get('text', '')), json.dumps(o.get('data', {}).get('text/plain', ''))]
        found += [(i, m) for t in texts for m in history_marks(t)]
    return found


def wide_jitted(paths):
    "Jitted functions taking more than `MAX_JIT_ARGS` positional parameters."
    wide = []
    for f in paths:
        for n in ast.walk(ast.parse(open(f).read())):
            if (isinstance(n, ast.FunctionDef) and len(n.args.args) > MAX_JIT_ARGS
                    and any('jit' in ast.unparse(d) for d in n.decorator_list)):
                wide.append(f'{f}:{n.name}({len(n.args.args)})')
    return wide


def undeclared_parameters():
    "Public estimators whose `_parameter_constraints` leave out an `__init__` parameter."
    import kelm_nb
    from sklearn.base import BaseEstimator
    missing = []
    for name in kelm_nb.__all__:
        obj = getattr(kelm_nb, name)
        if not (inspect.isclass(obj) and issubclass(obj, BaseEstimator)): continue
        params = [p for p in inspect.signature(obj.__init__).parameters if p not in ('self', 'args', 'kwargs')]
        lack = [p for p in params if p not in getattr(obj, '_parameter_constraints', {})]
        if lack: missing.append(f'{name}({", ".join(lack)})')
    return missing


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('notebooks', nargs='*')
    ap.add_argument('--verbose', '-v', action='store_true', help='list every far definition and history mark')
    args = ap.parse_args(argv)
    nbs = args.notebooks or sorted(glob.glob('nbs/*.ipynb') + glob.glob('nbs/papers/*.ipynb'))
    all_sizes, all_far, all_defs, fails = [], 0, 0, []
    for nb in nbs:
        cells = json.load(open(nb))['cells']
        sizes, far, n_defs = cell_sizes_and_far_defs(cells)
        hist = notebook_history(cells)
        own = own_module_imports(cells)
        all_sizes += [s for s, _ in sizes]
        all_far += len(far)
        all_defs += n_defs
        big = [f'cell {i}: {s}' for s, i in sizes if s > MAX_CELL]
        med = statistics.median([s for s, _ in sizes]) if sizes else 0
        print(f'{nb}: {len(sizes)} export cells, median {med:g}, max {max((s for s, _ in sizes), default=0)}; '
              f'{n_defs - len(far)}/{n_defs} public defs used within {NEAR_CELLS} cells; {len(hist)} history marks'
              + (f'; imports its own module in cells {own}' if own else ''))
        if args.verbose:
            for line in big: print(f'   over {MAX_CELL} lines: {line}')
            for name, i in far: print(f'   not used within {NEAR_CELLS} cells: {name} (cell {i})')
            for i, m in hist: print(f'   history: cell {i}: {m!r}')
        if big or hist or own: fails.append(nb)
    files = glob.glob('kelm_nb/**/*.py', recursive=True) + glob.glob('tests/*.py') + glob.glob('tools/*.py')
    for f in files + ['README.md']:
        if f.endswith(('_modidx.py', 'book_check.py', 'test_book.py')): continue
        marks = history_marks(open(f).read())
        if marks:
            fails.append(f)
            print(f'{f}: {len(marks)} history marks' + (f': {marks}' if args.verbose else ''))
    med = statistics.median(all_sizes) if all_sizes else 0
    share = 1 - all_far / max(all_defs, 1)
    print(f'all: export cells median {med:g} (target <= {MEDIAN_CELL}), max {max(all_sizes, default=0)} '
          f'(target <= {MAX_CELL}); {share:.0%} of {all_defs} public defs used within {NEAR_CELLS} cells '
          f'(target >= {NEAR_SHARE:.0%})')
    if med > MEDIAN_CELL or share < NEAR_SHARE: fails.append('cell grain')
    if not args.notebooks:
        wide = wide_jitted(glob.glob('kelm_nb/*.py'))
        print(f'jitted functions with > {MAX_JIT_ARGS} positional parameters: {wide or "none"}')
        undeclared = undeclared_parameters()
        print(f'estimators with parameters outside _parameter_constraints: {undeclared or "none"}')
        if wide or undeclared: fails.append('solver state / validation')
    if fails: print('missed:', ', '.join(fails))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
