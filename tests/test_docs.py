"""The documentation site: built by tools/build_docs.py (Sphinx + myst-nb) and looked at in headless Chromium.

The site is built once per session into ``_docs/`` (or ``KELM_NB_DOCS_DIR``), in a subprocess whose PATH has
stubs for ``sudo``, ``curl``, ``quarto``, ``pip`` and ``pip3`` that record any call: the build must use none of
them and must not import ``nbdev.quarto`` (nbdev 2's ``nbdev_docs`` hazard, see docs/building.md). The browser
tests need Debian's ``chromium`` and ``chromium-driver`` and are skipped, saying so, only when those are absent.
``KELM_NB_DOCS_REUSE=1`` checks the site already in that folder instead of building it (the edit-test loop).
Screenshots of the home page, the API reference and a method page go to ``<site>/screenshots/`` (or
``KELM_NB_DOCS_SHOTS``).
"""
import html
import importlib.util
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_browser import (chromium_driver, chromium_paths, png_summary, probe_page, screenshot,  # noqa: E402
                          search, serve)

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
BUILDER = ROOT / 'tools' / 'build_docs.py'
STUBBED = ('sudo', 'curl', 'quarto', 'pip', 'pip3')
BUILD_TIMEOUT = 900
# Sphinx warnings a build may give, each listed with its reason (none today): anything else fails the build test.
KNOWN_WARNINGS = ()
GUIDE_TASKS = {'scale': 'StandardScaler', 'tune': 'GridSearchCV', 'stream': 'partial_fit',
               'probabilities': 'predict_proba', 'big data': 'nystrom', 'precomputed': "kernels='precomputed'"}


def _load_builder():
    spec = importlib.util.spec_from_file_location('build_docs', BUILDER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


builder = _load_builder()


def _stub_bin(folder, log):
    "Executables named like the tools nbdev_docs reaches for; each records its call in `log` and fails."
    folder.mkdir(parents=True, exist_ok=True)
    for name in STUBBED:
        stub = folder / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\nexit 1\n')
        stub.chmod(0o755)
    return folder


_GUARDED_BUILD = textwrap.dedent('''
    import importlib.util, sys
    spec = importlib.util.spec_from_file_location('build_docs', sys.argv[1])
    builder = sys.modules['build_docs'] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    builder.build(sys.argv[2], quiet=True)
    assert 'nbdev.quarto' not in sys.modules, 'the docs build imported nbdev.quarto (nbdev_docs and friends)'
''')


@pytest.fixture(scope='session')
def site(tmp_path_factory):
    "The site, built now by tools/build_docs.py (stored outputs, nothing executed) under the no-Quarto guard."
    out = Path(os.environ.get('KELM_NB_DOCS_DIR') or ROOT / '_docs').resolve()
    if os.environ.get('KELM_NB_DOCS_REUSE') == '1' and (out / builder.MANIFEST).exists():
        return out, json.loads((out / builder.MANIFEST).read_text())  # a site built a moment ago, as it is
    guard = tmp_path_factory.mktemp('guard')
    log = guard / 'calls.log'
    env = dict(os.environ, PATH=f'{_stub_bin(guard / "bin", log)}{os.pathsep}{os.environ.get("PATH", "")}')
    proc = subprocess.run([sys.executable, '-c', _GUARDED_BUILD, str(BUILDER), str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert proc.returncode == 0, f'docs build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}'
    calls = log.read_text() if log.exists() else ''
    assert not calls, f'the docs build called tools it must never use:\n{calls}'
    return out, json.loads((out / builder.MANIFEST).read_text())


def _text(page_html):
    "Rough visible text of a page: scripts and tags dropped."
    page_html = re.sub(r'<(script|style)\b.*?</\1>', '', page_html, flags=re.S)
    return html.unescape(re.sub(r'<[^>]+>', '', page_html))


def _code_cells(nb_path):
    return [''.join(c['source']) for c in json.loads(nb_path.read_text())['cells'] if c['cell_type'] == 'code']


def _visible_figures(nb_path):
    "PNG outputs of the cells the docs show (not '#| hide', 'include: false', 'output: false')."
    count = 0
    for cell in json.loads(nb_path.read_text())['cells']:
        src = ''.join(cell['source'])
        if cell['cell_type'] != 'code' or re.search(r'^#\|\s*(hide\b|include:\s*false|output:\s*false)', src, re.M):
            continue
        count += sum('image/png' in o.get('data', {}) for o in cell.get('outputs', []))
    return count


# --- the pre-pass (no build) ------------------------------------------------------------------------------------

def _cell(source, outputs=()):
    return {'cell_type': 'code', 'metadata': {}, 'source': source, 'outputs': list(outputs), 'execution_count': 1}


def test_directives_are_handled_like_nbdev():
    assert builder.stage_cell(_cell('#| hide\nsecret = 1'), 'core') is None
    assert builder.stage_cell(_cell('#| default_exp core'), 'core') is None
    assert builder.stage_cell(_cell('#| include: false\nx = 1'), 'core') is None
    exported = builder.stage_cell(_cell('#| export\ndef f(x):\n    return x'), 'core')
    assert exported['source'] == 'def f(x):\n    return x', 'exported source is shown, without its directive'
    echo = builder.stage_cell(_cell('#| echo: false\nMarkdown("table")'), 'core')
    assert echo['source'] == 'Markdown("table")' and echo['metadata']['tags'] == ['remove-input']
    slow = builder.stage_cell(_cell('#| slow\nrun()'), 'core')
    assert slow['source'] == 'run()' and not slow['metadata']
    link = builder.stage_cell(_cell('show_doc(ELMRegressor)'), 'core')
    assert link['cell_type'] == 'markdown' and '<kelm_nb.core.ELMRegressor>' in link['source']
    widget = builder.stage_cell(_cell('bar()', [{'output_type': 'display_data', 'metadata': {}, 'data': {
        'application/vnd.jupyter.widget-view+json': {'model_id': 'x'}, 'text/plain': 'PROGRESS 3/3'}}]), 'core')
    assert widget['outputs'][0]['data'] == {'text/plain': 'PROGRESS 3/3'}, 'widget outputs keep their text only'


def test_links_follow_the_staged_layout():
    # the home page is also the README: its links are written from the repository root
    assert builder.relink('[r](nbs/11_results.ipynb) [b](docs/building.md)', builder.ROOT, '') == \
        '[r](11_results.ipynb) [b](building.md)'
    assert builder.relink('[t](../results/li2014/t.md)', builder.NBS, '') == '[t](results/li2014/t.md)'
    assert builder.relink('[m](../02_core.ipynb#x)', builder.NBS / 'papers', 'papers') == '[m](../02_core.ipynb#x)'
    assert builder.relink('[w](https://example.org/a.md)', builder.NBS, '') == '[w](https://example.org/a.md)'


def test_the_api_groups_start_with_the_estimators():
    groups = builder.api_groups(builder.public_modules())
    names = [n for _, n in groups['estimators']]
    assert names[:len(builder.ESTIMATORS)] == list(builder.ESTIMATORS)
    helpers = {n for _, n, _ in groups['helpers']}
    assert {'POSITIVE', 'check_positive'} <= helpers
    listed = {n for items in groups['modules'].values() for n, _ in items}
    assert not listed & set(names) and not listed & helpers


# --- the built site (files) -------------------------------------------------------------------------------------

def test_build_gives_no_unlisted_warning(site):
    site_dir, manifest = site
    unknown = [w for w in manifest['warnings'] if not any(re.search(p, w) for p in KNOWN_WARNINGS)]
    assert not unknown, 'Sphinx warnings (fix them or list them in KNOWN_WARNINGS with a reason):\n' + '\n'.join(
        unknown[:30])
    assert manifest['status'] == 0


def test_every_notebook_has_a_page(site):
    site_dir, manifest = site
    pages = {p['source']: p for p in manifest['pages']}
    for nb in builder.find_notebooks(NBS):
        page = pages[nb.relative_to(ROOT).as_posix()]
        text = (site_dir / page['path']).read_text(encoding='utf-8')
        assert page['title'] != nb.stem, f'{nb}: no title taken from its first "# " heading'
        assert '<h1>' in text and 'bd-search' in text, f'{nb}: no page heading or search box'
    index = (site_dir / 'index.html').read_text(encoding='utf-8')
    for section in ('guide.html', 'methods.html', 'papers.html', 'api/index.html'):
        assert f'href="{section}"' in index, f'{section} not linked from the home page'


def test_hidden_cells_are_gone_and_exported_source_is_shown(site):
    site_dir, manifest = site
    checked = 0
    for page in manifest['pages']:
        cells = _code_cells(ROOT / page['source'])
        text = _text((site_dir / page['path']).read_text(encoding='utf-8'))
        assert not re.search(r'^\s*#\|\s*(export|hide|default_exp)', text, re.M), f'{page["path"]}: directives'
        visible = '\n'.join(c for c in cells if not re.match(r'\s*#\|\s*hide\b', c))
        for cell in (c for c in cells if re.match(r'\s*#\|\s*hide\b', c)):
            for line in (ln.strip() for ln in cell.splitlines()[1:]):
                if len(line) > 30 and line not in visible:
                    assert line not in text, f'{page["path"]} shows a hidden line: {line}'
                    checked += 1
        for cell in (c for c in cells if re.match(r'\s*#\|\s*export\b', c)):
            first = next(ln for ln in cell.splitlines()[1:] if ln.strip() and not ln.lstrip().startswith('#'))
            assert first.strip() in text, f'{page["path"]}: exported source not shown ({first.strip()})'
    assert checked, 'no hidden line was checked'


def test_search_index_math_and_figures(site):
    site_dir, manifest = site
    assert (site_dir / 'search.html').exists() and 'NuOELMClassifier' in (site_dir / 'searchindex.js').read_text()
    assert (site_dir / '_static' / 'mathjax' / 'tex-chtml.js').exists(), 'MathJax is served by the site itself'
    core = (site_dir / '02_core.html').read_text(encoding='utf-8')
    assert 'mathjax/tex-chtml.js' in core and core.count('class="math') > 10
    assert '$$' not in _text(core)
    for page in manifest['pages']:
        expected = _visible_figures(ROOT / page['source'])
        body = (site_dir / page['path']).read_text(encoding='utf-8')
        images = re.findall(r'<img [^>]*src="([^"]+\.png)"', body)
        assert len(images) >= expected, f'{page["path"]}: {len(images)} figures, the notebook shows {expected}'
        for src in images:
            assert (site_dir / page['path']).parent.joinpath(src).resolve().exists(), src


def test_api_reference_starts_with_the_estimators(site):
    site_dir, _ = site
    index = _text((site_dir / 'api' / 'index.html').read_text(encoding='utf-8'))
    first = [index.index(n) for n in builder.ESTIMATORS]
    assert first == sorted(first) and index.index('ELMRegressor') < index.index('Functions and classes')
    assert max(first) < index.index('check_positive') and max(first) < index.index('POSITIVE')
    pages = ''.join(p.read_text(encoding='utf-8') for p in (site_dir / 'api').glob('*.html'))
    for mod in builder.public_modules():
        for name in mod.__all__:
            obj = getattr(mod, name)
            where = getattr(obj, '__module__', mod.__name__)
            assert f'id="{where}.{name}"' in pages or f'id="{mod.__name__}.{name}"' in pages, f'{mod.__name__}.{name}'
    est = (site_dir / 'api' / 'estimators.html').read_text(encoding='utf-8')
    entry = est.split('id="kelm_nb.core.ELMRegressor"', 1)[1].split('id="kelm_nb.core.ELMClassifier"', 1)[0]
    assert 'Parameters' in entry and 'Examples' in entry and 'class="math' in entry
    assert '----------' not in _text(entry), 'a numpydoc underline shown as raw text'


def test_user_guide_covers_the_tasks(site):
    site_dir, manifest = site
    guide = [p for p in manifest['pages'] if p['source'].startswith('nbs/guide/')]
    text = ' '.join(_text((site_dir / p['path']).read_text(encoding='utf-8')) for p in guide)
    titles = ' '.join(p['title'].lower() for p in guide)
    for task, api in GUIDE_TASKS.items():
        assert task in titles, f'no guide page on {task}'
        assert api in text, f'the guide never shows {api}'
    for page in guide:  # each example ran and shows what it printed
        for src in _code_cells(ROOT / page['source']):
            cell = next(c for c in json.loads((ROOT / page['source']).read_text())['cells']
                        if ''.join(c['source']) == src)
            assert cell['outputs'], f'{page["source"]}: a code cell without stored output:\n{src[:200]}'


def test_no_page_shows_a_traceback_or_a_path(site):
    site_dir, _ = site
    bad = []
    for page in site_dir.rglob('*.html'):
        text = _text(page.read_text(encoding='utf-8'))
        for needle in ('Traceback (most recent call last)', '/work/', '/tmp/', '/home/', 'site-packages'):
            if needle in text: bad.append(f'{page.relative_to(site_dir)}: {needle}')
    assert not bad, '\n'.join(bad)


# --- in a real browser ------------------------------------------------------------------------------------------

def _need_chromium():
    chromium, driver = chromium_paths()
    if chromium is None or driver is None:
        pytest.skip('Chromium is not installed (apt-get install -y chromium chromium-driver): '
                    'the docs were built and checked as files, not in a browser')


def test_site_in_headless_chromium(site):
    "Every page but the result tables: loads, images load, math typeset, no traceback; search finds estimators."
    _need_chromium()
    site_dir, manifest = site
    pages = sorted(p.relative_to(site_dir).as_posix() for p in site_dir.rglob('*.html')
                   if not p.relative_to(site_dir).as_posix().startswith(('results/', '_', 'genindex', 'search')))
    problems, typeset, taken = [], 0, []
    shots = Path(os.environ.get('KELM_NB_DOCS_SHOTS') or site_dir / 'screenshots')
    shot_names = {'index.html': 'index.png', 'api/index.html': 'api.png', '05_nu_oelm.html': 'nu_oelm.png'}
    with serve(site_dir) as (base, requests), chromium_driver() as driver:
        for path in pages:
            report = probe_page(driver, base + path)
            if path in shot_names: taken.append(screenshot(driver, None, shots / shot_names[path]))  # as probed
            if not report['title'].strip() or not report['h1'].strip(): problems.append(f'{path}: no title/h1')
            problems += [f'{path}: console error {e["message"][:200]}' for e in report['console']]
            bad = [i['src'] for i in report['images'] if not (i['complete'] and i['width'] > 0)]
            if bad: problems.append(f'{path}: images that did not load: {bad}')
            if report['tracebacks'] or 'Traceback (most recent call last)' in report['text']:
                problems.append(f'{path}: shows a Python traceback')
            if any(s in report['text'] for s in ('/work/', '/tmp/', 'site-packages')):
                problems.append(f'{path}: shows a file path')
            if report['tex'] and report['mathjax'] < report['tex']:
                problems.append(f'{path}: {report["tex"]} formulas, {report["mathjax"]} typeset by MathJax')
            if report['math_errors']: problems.append(f'{path}: {report["math_errors"]} MathJax errors')
            typeset += report['mathjax']
            for url in (u for u in report['links'] if u.startswith(base)):
                target = site_dir / url[len(base):].split('#')[0].split('?')[0]
                if not (target / 'index.html' if target.is_dir() else target).exists():
                    problems.append(f'{path}: broken link {url[len(base):]}')
        for query, expected in (('partial_fit', 'guide/'), ('NuOELMClassifier', 'api/estimators.html')):
            hits = search(driver, base, query)
            if not any(expected in h for h in hits): problems.append(f'search {query!r}: {hits[:5]}')
        taken.append(screenshot(driver, None, shots / 'search.png'))  # the results page of the last search
        failed = [(p, s) for p, s in requests if s >= 400]
    assert not problems, '\n'.join(problems[:40])
    assert not failed, f'requests that failed: {failed[:20]}'
    assert typeset > 100, f'only {typeset} formulas typeset over the site'
    assert sorted(s.name for s in taken) == sorted([*shot_names.values(), 'search.png']), taken
    for shot in taken:
        fmt, width, height, levels = png_summary(shot)
        assert fmt == 'PNG' and width >= 1000 and height >= 800, (shot, fmt, width, height)
        assert levels > 16 and shot.stat().st_size > 20_000, f'{shot} looks blank ({levels} grey levels)'
