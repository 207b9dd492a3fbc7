"""The documentation site: built from the notebooks by tools/build_docs.py and looked at in headless Chromium.

The site is built once per session into ``_docs/`` (or ``KELM_NB_DOCS_DIR``), in a subprocess whose PATH has
stubs for ``sudo``, ``curl``, ``quarto``, ``pip`` and ``pip3`` that record any call: the build must use none of
them and must not import ``nbdev.quarto`` (nbdev 2's ``nbdev_docs`` hazard, see docs/building.md). The browser
tests need Debian's ``chromium`` and ``chromium-driver`` and are skipped, saying so, only when those are absent.
Screenshots of the home page and of a paper page are saved in ``<site>/screenshots/``.
"""
import ast
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
from docs_browser import chromium_driver, chromium_paths, png_summary, probe_page, screenshot, serve  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
BUILDER = ROOT / 'tools' / 'build_docs.py'
STUBBED = ('sudo', 'curl', 'quarto', 'pip', 'pip3')
BUILD_TIMEOUT = 600


def _load_builder():
    spec = importlib.util.spec_from_file_location('build_docs', BUILDER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
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
    "The site, built now by tools/build_docs.py (committed outputs, no execution) under the no-Quarto guard."
    out = Path(os.environ.get('KELM_NB_DOCS_DIR') or ROOT / '_docs').resolve()
    guard = tmp_path_factory.mktemp('guard')
    log = guard / 'calls.log'
    env = dict(os.environ, PATH=f'{_stub_bin(guard / "bin", log)}{os.pathsep}{os.environ.get("PATH", "")}')
    proc = subprocess.run([sys.executable, '-c', _GUARDED_BUILD, str(BUILDER), str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert proc.returncode == 0, f'docs build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}'
    calls = log.read_text() if log.exists() else ''
    assert not calls, f'the docs build called tools it must never use:\n{calls}'
    manifest = json.loads((out / builder.MANIFEST).read_text())
    return out, manifest


def _page(site_dir, path):
    return (site_dir / path).read_text(encoding='utf-8')


def _visible_text(page_html):
    "Rough text of a page (tags dropped): what a reader could see, for absence checks."
    return html.unescape(re.sub(r'<[^>]+>', '', page_html))


# --- the build: pages, nbdev processing, API reference, paper pages ---------------------------------------------

def test_every_notebook_has_a_page(site):
    site_dir, manifest = site
    pages = {p['source']: p for p in manifest['pages'] if p['kind'] == 'notebook'}
    notebooks = builder.find_notebooks(NBS)
    assert notebooks and (NBS / 'index.ipynb') in notebooks
    for nb in notebooks:
        source = nb.relative_to(ROOT).as_posix()
        assert source in pages, f'{source} has no page'
        html_text = _page(site_dir, pages[source]['path'])
        title = pages[source]['title']
        assert title and title != nb.stem, f'{source}: no title taken from its first "# " heading'
        assert '<h1>' in html_text and 'class="sidebar"' in html_text
    assert (site_dir / 'index.html').exists()
    unresolved = [w for w in manifest['warnings'] if 'show_doc' in w or 'cannot import' in w]
    assert not unresolved, 'show_doc targets not found in the exported package:\n' + '\n'.join(unresolved)


def _cells_with(nb_path, pattern):
    nb = json.loads(nb_path.read_text())
    return [''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'code'
            and re.search(pattern, ''.join(c['source']), re.M)]


_INPUT_AREA = re.compile(r'<div class="input_area">\s*<div class="[^"]*highlight[^"]*">\s*<pre>(.*?)</pre>', re.S)
_HIDE = r'^#\|\s*hide\b'
_EXPORT = r'^#\|\s*export\b'


def _exported_defs(sources):
    "Public functions and classes defined at the top of '#| export' cells: nbdev documents each one."
    names = []
    for src in sources:
        code = '\n'.join(line for line in src.splitlines() if not line.lstrip().startswith(('#|', '%')))
        names += [n.name for n in ast.parse(code).body
                  if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith('_')]
    return names


def test_notebook_pages_are_processed_like_nbdev_docs(site):
    site_dir, manifest = site
    checked_hidden = 0
    for page in (p for p in manifest['pages'] if p['kind'] == 'notebook'):
        nb = ROOT / page['source']
        html_text = _page(site_dir, page['path'])
        text = _visible_text(html_text)
        code = _visible_text(''.join(_INPUT_AREA.findall(html_text)))
        assert code.strip() or not _cells_with(nb, r'.'), f'{nb.name}: no code cell found on the page'
        assert not re.search(r'#\|\s*(export|hide|default_exp)', code), f'{nb.name}: nbdev directives in the code'
        # a hidden cell's code is gone: lines of '#| hide' cells that appear in no visible cell
        visible = '\n'.join(s for s in _cells_with(nb, r'.') if not re.search(_HIDE, s, re.M))
        lines = [ln.strip() for s in _cells_with(nb, _HIDE) for ln in s.splitlines()[1:]
                 if len(ln.strip()) > 25 and ln.strip() not in visible]
        for line in lines[:5]:
            assert html.escape(line, quote=False) not in html_text and line not in text, f'{nb.name}: shows {line}'
        checked_hidden += len(lines[:5])
        # exported source is folded, and every public def/class of the export cells has its rendered show_doc
        exported = _cells_with(nb, _EXPORT)
        if not exported: continue
        assert '<summary>Exported source</summary>' in html_text, f'{nb.name}: exported source not folded'
        module = next(m for m in [re.search(r'^#\|\s*default_exp\s+(\S+)', s, re.M) for s in
                                  _cells_with(nb, r'default_exp')] if m).group(1)
        for name in _exported_defs(exported):
            assert f'id="kelm_nb.{module}.{name}"' in html_text, f'{nb.name}: no show_doc for {name}'
        if _exported_defs(exported): assert 'class="doc-sig"' in html_text
    assert checked_hidden, "found no '#| hide' cell to check in any notebook"


def test_api_reference_lists_every_public_name(site):
    site_dir, manifest = site
    modules = builder.public_modules()
    assert {m.__name__ for m in modules} >= {'kelm_nb.core', 'kelm_nb.kernels', 'kelm_nb.experiments'}
    index = _page(site_dir, 'api/index.html')
    for mod in modules:
        page = _page(site_dir, f'api/{mod.__name__}.html')
        assert f'href="{mod.__name__}.html"' in index
        for name in mod.__all__:
            assert f'id="{mod.__name__}.{name}"' in page, f'{mod.__name__}.{name} missing from the API reference'
    core = _page(site_dir, 'api/kelm_nb.core.html')
    entry = core.split('id="kelm_nb.core.ELMRegressor"', 1)[1].split('<section class="doc doc-class"', 1)[0]
    for section in ('Parameters', 'Attributes', 'Examples'):
        assert f'<h5>{section}</h5>' in entry, f'ELMRegressor: {section} not rendered'
    assert 'ELMRegressor(' in _visible_text(entry) and '<dl class="params">' in entry
    assert '----------' not in _visible_text(entry), 'a numpydoc underline shown as raw text'
    assert '<math' in entry, 'the docstring math was not rendered'


def test_a_page_per_paper_links_its_notebooks(site):
    site_dir, manifest = site
    from kelm_nb.experiments import PAPERS
    for key, paper in PAPERS.items():
        info = manifest['papers'][key]
        html_text = _page(site_dir, info['page'])
        assert info['method'], f'{key}: no notebook has default_exp {paper.method}'
        assert f'href="{info["method"]}"' in html_text
        experiments = [nb for nb in builder.find_notebooks(NBS)
                       if re.search(rf'^#\|\s*default_exp\s+papers\.{key}\s*$', '\n'.join(
                           ''.join(c['source']) for c in json.loads(nb.read_text())['cells']), re.M)]
        if experiments:
            assert info['experiment'] and f'href="{info["experiment"]}"' in html_text
        else:
            assert info['experiment'] is None and 'Not written yet' in html_text
        assert f'href="paper-{key}.html"' in _page(site_dir, 'index.html'), 'paper page not in the sidebar'


def test_experiment_notebooks_are_found_by_glob(tmp_path):
    "A papers notebook in nbs/papers/ joins its paper's page, next to the method notebook."
    nbs = tmp_path / 'nbs'
    (nbs / 'papers').mkdir(parents=True)
    (nbs / 'index.ipynb').write_text((NBS / 'index.ipynb').read_text())
    (nbs / '03_kernels.ipynb').write_text((NBS / '03_kernels.ipynb').read_text())
    cells = [{'cell_type': 'markdown', 'metadata': {}, 'source': '# Frénay 2011: the experiment\n\n> Tables 2-3.'},
             {'cell_type': 'code', 'metadata': {}, 'execution_count': None, 'outputs': [],
              'source': '#| default_exp papers.frenay2011'},
             {'cell_type': 'markdown', 'metadata': {}, 'source': '## Setup\n\nThe kernel is $k(x, z)$.'}]
    (nbs / 'papers' / '03_frenay2011.ipynb').write_text(json.dumps(
        {'cells': cells, 'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}))
    manifest = builder.build(tmp_path / 'site', nbs=nbs, quiet=True)
    assert manifest['papers']['frenay2011'] == {'page': 'paper-frenay2011.html', 'method': '03_kernels.html',
                                                'experiment': 'papers/03_frenay2011.html'}
    paper = (tmp_path / 'site' / 'paper-frenay2011.html').read_text()
    assert 'href="papers/03_frenay2011.html"' in paper and 'href="03_kernels.html"' in paper
    exp = (tmp_path / 'site' / 'papers' / '03_frenay2011.html').read_text()
    assert 'href="../static/style.css"' in exp and '<h1>Frénay 2011: the experiment</h1>' in exp
    assert '<math' in exp


def _one_notebook(folder, cells):
    code = {'outputs': [], 'execution_count': None}
    nb = {'cells': [{**(code if c['cell_type'] == 'code' else {}), 'metadata': {}, **c} for c in cells],
          'metadata': {}, 'nbformat': 4, 'nbformat_minor': 5}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / 'index.ipynb').write_text(json.dumps(nb))
    return folder


@pytest.mark.parametrize('mode', ['fold', 'show', 'hide'])
def test_notebook_processing_options(tmp_path, mode):
    "Exported source folded/shown/hidden, '#| hide' cells gone, show_doc added, widget outputs as text."
    nbs = _one_notebook(tmp_path / 'nbs', [
        {'cell_type': 'markdown', 'source': '# Checks\n\n> One exported function.'},
        {'cell_type': 'code', 'source': '#| default_exp validation'},
        {'cell_type': 'code', 'source': '#| export\ndef check_positive(value, name):\n    return value  # EXPORTED'},
        {'cell_type': 'code', 'source': '#| hide\nsecret_value = 1  # HIDDEN'},
        {'cell_type': 'code', 'source': 'shown_value = 2  # VISIBLE'},
        {'cell_type': 'code', 'source': 'for _ in tqdm(range(3)): pass', 'outputs': [{
            'output_type': 'display_data', 'metadata': {},
            'data': {'application/vnd.jupyter.widget-view+json': {'model_id': 'x', 'version_major': 2,
                                                                  'version_minor': 0},
                     'text/plain': 'PROGRESS 3/3'}},
            {'output_type': 'display_data', 'metadata': {},
             'data': {'application/javascript': 'element.text("live")', 'text/plain': 'STATIC TEXT'}}]}])
    builder.build(tmp_path / 'site', nbs=nbs, export_source=mode, quiet=True)
    page = (tmp_path / 'site' / 'index.html').read_text()
    text = _visible_text(page)
    assert 'VISIBLE' in text and 'HIDDEN' not in text and 'default_exp' not in text and '#|' not in text
    assert ('EXPORTED' in text) == (mode != 'hide')
    assert 'PROGRESS 3/3' in text and 'STATIC TEXT' in text, 'widget and script outputs keep their text'
    assert '<script' not in page, 'pages carry no script (a JavaScript output needs jQuery and a kernel)'
    assert ('class="exported-source"' in page) == (mode == 'fold')
    # nbdev's add_show_docs documented the exported function from the installed kelm_nb.validation, rendered
    assert 'id="kelm_nb.validation.check_positive"' in page and 'class="doc-sig"' in page
    assert 'check_positive(value, name, allow_none=' in text and 'if it is a finite positive' in text


def test_math_becomes_mathml_or_stays_legible_tex():
    html_out = builder.tex_to_html(r'Q_i = \begin{bmatrix} a & b \\ c & d \end{bmatrix} \tag{9}', True)
    assert '<math' in html_out and 'stretchy="true"' in html_out and '<span class="eqno">(9)</span>' in html_out
    fallback = builder.tex_to_html(r'\notacommand{x}', False, page='t')
    assert fallback.startswith('<code class="tex-fallback"') and r'\notacommand{x}' in fallback


def test_numpydoc_sections_are_parsed():
    doc = '''Summary line.

    More text.

    Parameters
    ----------
    x : int, default=1
        The x.
    y, z
        Two more.

    Returns
    -------
    float
        The result.
    '''
    intro, sections = builder.split_numpydoc(doc)
    assert intro[0] == 'Summary line.' and [t for t, _ in sections] == ['Parameters', 'Returns']
    assert builder.parse_params(sections[0][1]) == [('x', 'int, default=1', 'The x.'), ('y, z', '', 'Two more.')]
    assert builder.parse_params(sections[1][1], name_optional=True) == [('', 'float', 'The result.')]


# --- in a real browser ------------------------------------------------------------------------------------------

def _need_chromium():
    chromium, driver = chromium_paths()
    if chromium is None or driver is None:
        pytest.skip('Chromium is not installed (apt-get install -y chromium chromium-driver): '
                    'the docs were built and checked as files, not in a browser')


def _expected_figures(source):
    "Image outputs of the notebook's cells that the docs show (not '#| hide', 'include: false', 'output: false')."
    nb = json.loads((ROOT / source).read_text())
    count = 0
    for cell in nb['cells']:
        src = ''.join(cell['source'])
        if cell['cell_type'] != 'code' or re.search(r'^#\|\s*(hide\b|include:\s*false|output:\s*false)', src, re.M):
            continue
        count += sum(1 for o in cell.get('outputs', []) for k in o.get('data', {}) if k.startswith('image/'))
    return count


def test_every_page_in_headless_chromium(site):
    _need_chromium()
    site_dir, manifest = site
    pages = sorted(p.relative_to(site_dir).as_posix() for p in site_dir.rglob('*.html'))
    assert len(pages) >= len(manifest['pages'])
    sources = {p['path']: p for p in manifest['pages']}
    problems = []
    with serve(site_dir) as (base, requests), chromium_driver() as driver:
        for path in pages:
            report = probe_page(driver, base + path)
            status = [s for p, s in requests if p.split('?')[0] == '/' + path]
            if not status or status[-1] != 200: problems.append(f'{path}: HTTP {status}')
            if not report['title'].strip() or not report['h1'].strip(): problems.append(f'{path}: no title/h1')
            for entry in report['console']: problems.append(f'{path}: console error {entry["message"][:200]}')
            bad = [i['src'] for i in report['images'] if not (i['complete'] and i['width'] > 0)]
            if bad: problems.append(f'{path}: images that did not load: {bad}')
            if 'Traceback (most recent call last)' in report['text'] or report['errors']:
                problems.append(f'{path}: shows a Python traceback / error output')
            if '$$' in report['text']: problems.append(f'{path}: raw $$ TeX visible')
            if any(w == 0 for w in report['math_widths']): problems.append(f'{path}: a <math> laid out with no width')
            page = sources.get(path)
            if page and page['kind'] == 'notebook':
                expected = _expected_figures(page['source'])
                shown = sum(1 for i in report['images'] if i['width'] > 0)
                if shown < expected: problems.append(f'{path}: {shown} figures shown, notebook has {expected}')
            local = [u for u in report['links'] if u.startswith(base)]
            for url in local:
                target = site_dir / url[len(base):].split('#')[0].split('?')[0]
                if target.is_dir(): target = target / 'index.html'
                if not target.exists(): problems.append(f'{path}: broken link {url[len(base):]}')
        failed = [(p, s) for p, s in requests if s >= 400]
        assert not failed, f'requests that failed: {failed[:20]}'
        shots = _screenshots(driver, base, site_dir, manifest)
    assert not problems, '\n'.join(problems)
    for shot in shots:
        fmt, width, height, levels = png_summary(shot)
        assert fmt == 'PNG' and width >= 1000 and height >= 800, (shot, fmt, width, height)
        assert levels > 16 and shot.stat().st_size > 20_000, f'{shot} looks blank ({levels} grey levels)'


def _screenshots(driver, base, site_dir, manifest):
    "The home page, a paper's page (the first with an experiment notebook) and its method notebook."
    papers = manifest['papers']
    key = next((k for k, v in papers.items() if v['experiment']), next(iter(papers)))
    paper = manifest['papers'][key]
    shots = [('index.html', 'index.png'), (paper['page'], f'paper-{key}.png')]
    if paper['method']: shots.append((paper['method'], Path(paper['method']).with_suffix('.png').name))
    return [screenshot(driver, base + page, site_dir / 'screenshots' / name) for page, name in shots]
