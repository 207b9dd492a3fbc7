#!/usr/bin/env python
"""Build kelm_nb's documentation site with Sphinx and myst-nb, from a source checkout.

    python tools/build_docs.py [--out _docs] [--quiet]

The notebooks in ``nbs/`` (sub-folders ``papers/`` and ``guide/`` included) are rendered with their stored
outputs (``nb_execution_mode = "off"``: nothing runs). A short pre-pass stages a copy of each notebook: cells marked
``#| hide`` (or ``#| include: false``) and ``#| default_exp`` cells are dropped, directive lines are stripped,
``#| export`` source is shown, ``#| echo: false`` hides a cell's source, ``show_doc(name)`` cells become links to
the API reference, and widget or script outputs keep their text. The API reference is generated from the
package's ``__all__`` lists with autodoc + numpydoc: the estimators first, then functions and classes by module,
then validation helpers and constants. Sphinx's configuration and the hand-written pages live in ``docs/``.
The build never calls ``nbdev_docs``, ``nbdev_proc_nbs``, Quarto, pip or sudo (``docs/building.md``).
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import io
import json
import os
import pkgutil
import re
import reprlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
DOCS = ROOT / 'docs'
PACKAGE = 'kelm_nb'
MANIFEST = 'build.json'
ESTIMATORS = ('ELMRegressor', 'ELMClassifier', 'KernelELMRegressor', 'KernelELMClassifier', 'ESVR', 'LSSVR',
              'ESVRCV', 'ELMRegressorCV', 'ELMKernelSVR', 'NuOELMClassifier', 'OELMClassifier', 'MKLELMRegressor',
              'MKLELMClassifier', 'OSELMRegressor', 'OSELMClassifier', 'KOSELMRegressor', 'KOSELMClassifier')
HELPER_MODULES = ('validation',)
SECTIONS = (('guide', 'User guide'), ('methods', 'Methods'), ('papers', 'Papers'), ('api/index', 'API reference'),
            ('building', 'Building the docs'))
_SCRIPT_MIMES = ('application/javascript', 'application/vnd.jupyter.widget-view+json',
                 'application/vnd.jupyter.widget-state+json')


# --- notebooks: find and stage ----------------------------------------------------------------------------------

def find_notebooks(nbs=NBS):
    "Notebooks as nbdev sees them: nbs/**/*.ipynb, skipping names and folders that start with '_' or '.'."
    found = [p for p in sorted(nbs.rglob('*.ipynb'))
             if not any(part.startswith(('_', '.')) for part in p.relative_to(nbs).parts)]
    return sorted(found, key=lambda p: (p.name != 'index.ipynb' or p.parent != nbs, len(p.parts), str(p)))


def directives(source):
    "({directive: value}, source without its leading '#|' lines), as nbdev reads a cell's header."
    lines, found = source.splitlines(), {}
    while lines and (lines[0].lstrip().startswith('#|') or (found and not lines[0].strip())):
        text = lines.pop(0).lstrip()[2:].strip()
        if text:
            key, _, value = text.partition(':') if ':' in text.split()[0] else text.partition(' ')
            found[key.strip()] = value.strip()
    return found, '\n'.join(lines)


_SHOW_DOC = re.compile(r'^\s*show_doc\((\w+)\)\s*$')


def _static_outputs(outputs):
    "Outputs without widget or script bundles (their text/plain stays): pages load no widget manager."
    kept = []
    for out in outputs:
        data = out.get('data')
        if data:
            data = {k: v for k, v in data.items() if k not in _SCRIPT_MIMES}
            if not data: continue
            out = {**out, 'data': data}
        kept.append(out)
    return kept


_LINK = re.compile(r'(\]\(|href=")(?![a-zA-Z][\w+.-]*:|#|/)([^)"#\s]+)')


def relink(text, base, page_dir):
    "Link targets written relative to `base` (a folder of the checkout), made relative to the staged page."
    def fix(m):
        target = (base / m.group(2)).resolve()
        for folder, staged in ((NBS, ''), (DOCS, ''), (ROOT / 'results', 'results')):
            if target.is_relative_to(folder):
                new = Path(staged) / target.relative_to(folder)
                return m.group(1) + os.path.relpath(new, page_dir or '.') + ('/' if m.group(2).endswith('/') else '')
        return m.group(0)
    return _LINK.sub(fix, text)


def _relink_cell(cell, base, page_dir):
    if cell['cell_type'] == 'markdown':
        return {**cell, 'source': relink(''.join(cell['source']), base, page_dir)}
    outputs = [{**o, 'data': {**o['data'], 'text/markdown': relink(''.join(o['data']['text/markdown']), base,
                                                                   page_dir)}}
               if 'text/markdown' in o.get('data', {}) else o for o in cell.get('outputs', [])]
    return {**cell, 'outputs': outputs}


def stage_cell(cell, module):
    "The cell as the docs show it, or None when it is hidden."
    if cell['cell_type'] != 'code': return cell
    found, source = directives(''.join(cell['source']))
    if 'hide' in found or found.get('include') == 'false' or 'default_exp' in found: return None
    if not source.strip() and not cell.get('outputs'): return None
    show_doc = _SHOW_DOC.match(source)
    if show_doc and module:
        return {'cell_type': 'markdown', 'metadata': {}, 'id': cell.get('id', 'show-doc') + '-api',
                'source': f'API reference: {{py:obj}}`{show_doc.group(1)} <{PACKAGE}.{module}.{show_doc.group(1)}>`'}
    tags = list(cell.get('metadata', {}).get('tags', []))
    if found.get('echo') == 'false': tags.append('remove-input')
    if found.get('output') == 'false': tags.append('remove-output')
    if found.get('code-fold') == 'true': tags.append('hide-input')
    return {**cell, 'source': source, 'outputs': _static_outputs(cell.get('outputs', [])),
            'metadata': {'tags': tags} if tags else {}}


def notebook_module(nb):
    "The module a notebook exports to (its '#| default_exp'), or None."
    for cell in nb['cells']:
        if cell['cell_type'] == 'code':
            m = re.search(r'^\s*#\|\s*default_exp\s+(\S+)', ''.join(cell['source']), re.M)
            if m: return m.group(1)
    return None


def stage_notebook(src, dest, nbs=NBS):
    "Write the docs copy of notebook `src` to `dest`; return its title and module."
    nb = json.loads(src.read_text(encoding='utf-8'))
    module = notebook_module(nb)
    # the home page is also the README: its links are written from the repository root
    base = ROOT if src == nbs / 'index.ipynb' else src.parent
    page_dir = src.parent.relative_to(nbs).as_posix()
    cells = [_relink_cell(c, base, '' if page_dir == '.' else page_dir)
             for c in (stage_cell(c, module) for c in nb['cells']) if c is not None]
    meta = {k: v for k, v in nb.get('metadata', {}).items() if k in ('kernelspec', 'language_info')}
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps({**nb, 'cells': cells, 'metadata': meta}), encoding='utf-8')
    title = next((m.group(1).strip() for c in cells if c['cell_type'] == 'markdown'
                  for m in [re.search(r'^#\s+(.+)$', ''.join(c['source']), re.M)] if m), src.stem)
    return {'title': title, 'module': module}


def _toctree(entries, caption=None, hidden=False, maxdepth=1):
    opts = [f':maxdepth: {maxdepth}'] + ([f':caption: {caption}'] if caption else []) + ([':hidden:'] if hidden else [])
    return '```{toctree}\n' + '\n'.join(opts) + '\n\n' + '\n'.join(entries) + '\n```\n'


def add_cell(path, source):
    "Append a markdown cell (a toctree) to a staged notebook."
    nb = json.loads(path.read_text(encoding='utf-8'))
    nb['cells'].append({'cell_type': 'markdown', 'metadata': {}, 'id': 'site-toctree', 'source': source})
    path.write_text(json.dumps(nb), encoding='utf-8')


# --- API reference ----------------------------------------------------------------------------------------------

def public_modules(package=PACKAGE):
    "The package's sub-modules that declare `__all__` (private modules skipped), imported."
    pkg = importlib.import_module(package)
    names = [m.name for m in pkgutil.walk_packages(pkg.__path__, package + '.')
             if not any(part.startswith('_') for part in m.name.split('.'))]
    return [m for m in map(importlib.import_module, names) if getattr(m, '__all__', None)]


def api_groups(modules):
    "{'estimators': [(module, name)], 'modules': {module: [(name, kind)]}, 'helpers': [(module, name, kind)]}."
    from sklearn.base import BaseEstimator
    where = {n: m.__name__ for m in modules for n in m.__all__
             if getattr(getattr(m, n), '__module__', None) == m.__name__}
    estimators = [(where[n], n) for n in ESTIMATORS]
    extra = sorted((m.__name__, n) for m in modules for n in m.__all__ if inspect.isclass(getattr(m, n))
                   and issubclass(getattr(m, n), BaseEstimator) and (m.__name__, n) not in estimators
                   and where.get(n) == m.__name__)
    listed = set(estimators + extra)
    by_module, helpers = {}, []
    public = {m.__name__: set(m.__all__) for m in modules}
    for m in modules:
        short = m.__name__.removeprefix(PACKAGE + '.')
        for n in m.__all__:
            obj = getattr(m, n)
            home = getattr(obj, '__module__', m.__name__)
            if (m.__name__, n) in listed or (home != m.__name__ and n in public.get(home, ())): continue
            kind = 'class' if inspect.isclass(obj) else 'function' if callable(obj) else 'data'
            if kind == 'data' or short in HELPER_MODULES: helpers.append((m.__name__, n, kind))
            else: by_module.setdefault(m.__name__, []).append((n, kind))
    return {'estimators': estimators + extra, 'modules': by_module, 'helpers': helpers}


def _summary(obj):
    doc = inspect.getdoc(obj) if callable(obj) else None
    line = (doc or '').strip().split('\n\n')[0].replace('\n', ' ')
    line = re.sub(r'\$([^$]+)\$', r'{math}`\1`', line).replace('|', r'\|')
    return line[:160] + ('…' if len(line) > 160 else '')


_SKLEARN_BASES = 'BaseEstimator, RegressorMixin, ClassifierMixin, TransformerMixin, MultiOutputMixin, object'


def _directive(module, name, kind):
    if kind == 'class':
        return (f'```{{eval-rst}}\n.. autoclass:: {module}.{name}\n   :members:\n'
                f'   :inherited-members: {_SKLEARN_BASES}\n```\n')
    return f'```{{eval-rst}}\n.. auto{kind}:: {module}.{name}\n```\n'


def write_api(folder, modules):
    "api/index.md (estimators, then functions by module, then helpers) and one page per group."
    groups = api_groups(modules)
    folder.mkdir(parents=True, exist_ok=True)
    obj = lambda mod, n: getattr(importlib.import_module(mod), n)
    rows = lambda items: '\n'.join(f'| {{py:obj}}`{n} <{mod}.{n}>` | {_summary(obj(mod, n))} |' for mod, n in items)
    head = '| Name | Summary |\n|---|---|\n'
    index = ['# API reference\n', 'The estimators come first (scikit-learn estimators: `fit`, `predict`, '
             '`score`, `get_params`), then the functions and classes of each module, then the validation '
             'helpers and constants.\n', '## Estimators\n', head + rows(groups['estimators']) + '\n',
             '## Functions and classes\n']
    pages = ['estimators']
    (folder / 'estimators.md').write_text('# Estimators\n\n' + '\n'.join(
        _directive(mod, n, 'class') for mod, n in groups['estimators']), encoding='utf-8')
    for mod, items in groups['modules'].items():
        index += [f'### `{mod}`\n', head + rows([(mod, n) for n, _ in items]) + '\n']
        doc = (inspect.getdoc(importlib.import_module(mod)) or '').split('\n\n')[0]
        body = [f'# `{mod}`\n', _summary_text(doc) + '\n'] + [_directive(mod, n, k) for n, k in items]
        (folder / f'{mod}.md').write_text('\n'.join(body), encoding='utf-8')
        pages.append(mod)
    index += ['## Helpers and constants\n', head + rows([(m, n) for m, n, _ in groups['helpers']]) + '\n']
    (folder / 'helpers.md').write_text('# Helpers and constants\n\n' + '\n'.join(
        _directive(m, n, k) if k != 'data' else _data_entry(m, n)
        for m, n, k in groups['helpers']), encoding='utf-8')
    pages.append('helpers')
    index.append(_toctree(pages, hidden=True))
    (folder / 'index.md').write_text('\n'.join(index), encoding='utf-8')
    return groups


def _data_entry(module, name):
    "A constant: its value (shortened), no docstring (autodoc would show the docstring of its type)."
    short = reprlib.Repr()
    short.maxstring, short.maxother, short.maxlist, short.maxtuple, short.maxdict = 80, 80, 8, 8, 6
    value = short.repr(getattr(importlib.import_module(module), name))
    return f'```{{eval-rst}}\n.. py:data:: {module}.{name}\n   :value: {" ".join(value.split())}\n```\n'


def _summary_text(doc):
    return re.sub(r'\$([^$]+)\$', r'{math}`\1`', doc)


# --- papers and sections ----------------------------------------------------------------------------------------

def write_papers_page(src, staged):
    "papers.md: each paper of kelm_nb.experiments.PAPERS with its method and experiment notebooks."
    from kelm_nb.experiments import PAPERS
    by_module = {info['module']: path for path, info in staged.items() if info['module']}
    lines, entries = ['# Papers\n', 'Each paper: its method notebook (the derivation, the code and its oracles) and '
                      'its experiment notebook (the paper\'s tables, reproduced).\n'], []
    for key, paper in PAPERS.items():
        method = by_module.get(paper.method.removeprefix(PACKAGE + '.'))
        experiment = by_module.get(f'papers.{key}')
        label = staged[experiment]['title'].split(':')[0] if experiment else key
        lines.append(f'## {label}\n\n{paper.citation}.\n')
        if method: lines.append(f'- Method: [{staged[method]["title"]}]({method})')
        if experiment:
            lines.append(f'- Experiment: [{staged[experiment]["title"]}]({experiment})')
            entries.append(experiment.removesuffix('.ipynb'))
        lines.append('')
    lines.append(_toctree(entries, hidden=True))
    (src / 'papers.md').write_text('\n'.join(lines), encoding='utf-8')


def write_section(src, name, title, intro, staged, folder):
    "A section page (`name`.md) with a toctree of the staged notebooks in `folder` ('' = top level)."
    docs = sorted(p for p in staged if Path(p).parent.as_posix() == (folder or '.') and p != 'index.ipynb')
    items = '\n'.join(f'- [{staged[p]["title"]}]({p})' for p in docs)
    (src / f'{name}.md').write_text(f'# {title}\n\n{intro}\n\n{items}\n\n'
                                    + _toctree([p.removesuffix('.ipynb') for p in docs], hidden=True),
                                    encoding='utf-8')


def stage_results(dest, results=ROOT / 'results'):
    "The committed result tables (results/**/*.md), as pages the results notebook links to."
    for table in sorted(results.rglob('*.md')):
        if any(p.startswith('.') for p in table.relative_to(results).parts): continue
        page = dest / table.relative_to(results)
        page.parent.mkdir(parents=True, exist_ok=True)
        text = table.read_text(encoding='utf-8')
        title = re.sub(r'^\*\*(.+?)\*\*\s*', '', text.lstrip(), count=1)
        head = re.match(r'^\*\*(.+?)\*\*', text.lstrip())
        page.write_text('---\norphan: true\n---\n\n# ' + (head.group(1) if head else table.stem) + '\n\n'
                        + (title if head else text), encoding='utf-8')


# --- MathJax ----------------------------------------------------------------------------------------------------

def mathjax_dir():
    "MathJax 3's es5 bundle from the django-static-mathjax wheel (a static copy of MathJax; no Django needed)."
    try:
        import mathjax  # django-static-mathjax
    except ImportError:
        return None
    folder = Path(mathjax.__file__).parent / 'static' / 'mathjax' / 'es5'
    return folder if (folder / 'tex-chtml.js').exists() else None


def copy_mathjax(static):
    "Copy MathJax (TeX input, CHTML output with its fonts, menu) into the site: math renders offline."
    es5 = mathjax_dir()
    if es5 is None:
        raise SystemExit('MathJax not found: pip install django-static-mathjax (the [dev] extra has it)')
    dest = static / 'mathjax'
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(es5 / 'tex-chtml.js', dest)
    for sub in ('input/tex/extensions', 'output/chtml', 'ui', 'a11y'):
        if (es5 / sub).exists(): shutil.copytree(es5 / sub, dest / sub, dirs_exist_ok=True)


# --- the build --------------------------------------------------------------------------------------------------

def stage(src, nbs=NBS):
    "Stage the Sphinx source folder `src`: configuration, pages, notebooks, API reference, MathJax."
    shutil.copytree(DOCS, src, dirs_exist_ok=True)
    staged = {}
    for nb in find_notebooks(nbs):
        rel = nb.relative_to(nbs).as_posix()
        staged[rel] = stage_notebook(nb, src / rel, nbs)
        staged[rel]['source'] = nb.relative_to(nbs.parent).as_posix()
    stage_results(src / 'results')
    write_section(src, 'guide', 'User guide', 'Tasks, each with a short example that runs as it is.', staged, 'guide')
    write_section(src, 'methods', 'Methods', 'The library, one notebook per module: the method, the code and its '
                  'checks.', staged, '')
    write_papers_page(src, staged)
    write_api(src / 'api', public_modules())
    copy_mathjax(src / '_static')
    if 'index.ipynb' in staged:
        add_cell(src / 'index.ipynb', _toctree([name for name, _ in SECTIONS], hidden=True, maxdepth=2))
    return staged


def build(out_dir='_docs', nbs=NBS, quiet=False, keep_source=None):
    "Build the site into `out_dir`; return the manifest (pages, warnings, seconds) also written to build.json."
    from sphinx.application import Sphinx
    from sphinx.util.console import nocolor
    nocolor()
    if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))  # document this checkout's package
    start = time.perf_counter()
    out = Path(out_dir).resolve()
    with tempfile.TemporaryDirectory(prefix='kelm_nb_docs_') as tmp:
        src = Path(keep_source).resolve() if keep_source else Path(tmp) / 'src'
        if src.exists(): shutil.rmtree(src)
        staged = stage(src, nbs)
        if out.exists(): shutil.rmtree(out)
        warnings = io.StringIO()
        app = Sphinx(str(src), str(src), str(out), str(Path(tmp) / 'doctrees'), 'html', freshenv=True,
                     status=None if quiet else sys.stdout, warning=warnings, keep_going=True)
        app.build()
        text = warnings.getvalue().replace(str(src) + '/', '')
    manifest = {'pages': [{'source': info['source'], 'path': rel.removesuffix('.ipynb') + '.html',
                           'title': info['title'], 'module': info['module']} for rel, info in staged.items()],
                'warnings': [w for w in text.splitlines() if w.strip()],
                'seconds': round(time.perf_counter() - start, 1), 'status': app.statuscode}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding='utf-8')
    if app.statuscode: raise SystemExit(f'sphinx failed (status {app.statuscode})')
    return manifest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--out', default='_docs', help='output folder (default _docs)')
    parser.add_argument('--keep-source', metavar='DIR', help='stage the Sphinx sources in DIR and keep them')
    parser.add_argument('--quiet', action='store_true', help="only print the summary")
    args = parser.parse_args(argv)
    manifest = build(args.out, quiet=args.quiet, keep_source=args.keep_source)
    for w in manifest['warnings']: print(w, file=sys.stderr)
    print(f"docs: {len(manifest['pages'])} notebooks, {len(manifest['warnings'])} warnings, "
          f"{manifest['seconds']} s -> {Path(args.out) / 'index.html'}")


if __name__ == '__main__':
    main()
