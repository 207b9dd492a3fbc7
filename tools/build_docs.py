#!/usr/bin/env python
"""Build kelm_nb's documentation site: static HTML from the notebooks, without Quarto.

    python tools/build_docs.py [--out _docs] [--execute | --no-execute] [--export-source fold|show|hide]

Each notebook in ``nbs/`` (found by glob, sub-folders such as ``nbs/papers/`` included) is processed the way
nbdev 2 prepares notebooks for its docs, with nbdev's own processors (``NBProcessor``, ``add_show_docs``,
``hide_``, ``hide_line``, ``filter_stream_``, ``rm_header_dash``, ``clean_magics``, ``mv_exports``, ...): cells
marked ``#| hide`` are dropped, directives are stripped, exported source is folded (or shown, or hidden) and a
``show_doc`` cell is added after every exported function and class. The ``show_doc`` cells are rendered through
``nbdev.showdoc.show_doc`` with a numpydoc renderer on the objects of the installed package (the exported
module), so no notebook code runs. nbconvert's HTML exporter then renders each notebook with a small template
(sidebar, page table of contents); LaTeX becomes MathML at build time (``latex2mathml``), so math reads without
any script or network. The committed outputs (tables, figures) are used as they are; ``--execute`` re-runs each
notebook first (cells marked ``#| slow`` keep their committed outputs).

Besides one page per notebook the site has a page per paper (``kelm_nb.experiments.PAPERS``: its method
notebook and its experiment notebook), an API reference of every name in every module's ``__all__``, and a page
on how it is built (``docs/building.md``). This script never calls ``nbdev_docs``, ``nbdev_preview``,
``nbdev_install`` or Quarto: see ``docs/building.md`` for why.
"""
from __future__ import annotations

import argparse
import ast
import configparser
import copy
import functools
import html
import importlib
import inspect
import json
import pkgutil
import re
import reprlib
import shutil
import sys
import time
import warnings
from collections import ChainMap
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / 'nbs'
DOCS_SRC = ROOT / 'docs'
TEMPLATES = DOCS_SRC / 'templates'
TEMPLATE_NAME = 'kelm'
PACKAGE = 'kelm_nb'
MANIFEST = 'pages.json'
EXPORT_SOURCE_MODES = ('fold', 'show', 'hide')


# ---------------------------------------------------------------------------------------------------------------
# Build warnings: collected, printed and written to the manifest (a build never fails on a rendering detail).

class BuildLog:
    "Warnings met while building, each with the page it concerns."

    def __init__(self):
        self.items = []

    def warn(self, page, message):
        self.items.append(f'{page}: {message}')


LOG = BuildLog()


# ---------------------------------------------------------------------------------------------------------------
# Math: TeX to MathML at build time; what latex2mathml cannot convert stays as legible TeX.

_TAG = re.compile(r'\\tag\*?\{([^{}]*)\}')
_ALIGN_ENV = re.compile(r'\\begin\{(aligned|align\*?|split|gathered|gather\*?)\}(.*?)\\end\{\1\}', re.S)
_UNKNOWN_COMMAND = re.compile(r'<mi>\\[A-Za-z]+</mi>')
# standard LaTeX operators latex2mathml does not know
_MISSING_OPERATORS = re.compile(r'\\(arg|deg|gcd|hom|lg|coth|csc|sec|cot)(?![A-Za-z])')


_FENCED_MATRIX = re.compile(r'\\begin\{([bpvBV])matrix\}(.*?)\\end\{\1matrix\}', re.S)
_FENCES = {'b': ('[', ']'), 'p': ('(', ')'), 'v': ('|', '|'), 'V': ('\\|', '\\|'), 'B': ('\\{', '\\}')}


def _fenced_matrix(match):
    "bmatrix & co. as \\left[ matrix \\right]: latex2mathml then marks the brackets stretchy, so they span the rows."
    left, right = _FENCES[match.group(1)]
    return rf'\left{left}\begin{{matrix}}{match.group(2)}\end{{matrix}}\right{right}'


def _align_as_array(match):
    "amsmath's alignment environments as an `array` of right/left column pairs (latex2mathml renders arrays)."
    body = match.group(2)
    n_cols = max(row.count('&') for row in re.split(r'\\\\', body)) + 1
    spec = ('rl' * n_cols)[:n_cols] if match.group(1).startswith(('align', 'split')) else 'c'
    return r'\begin{array}{' + spec + '}' + body + r'\end{array}'


def tex_to_html(tex, display, page='?'):
    "MathML for `tex` (`display`: a block equation, with its `\\tag` number at the right), or TeX if unsupported."
    from latex2mathml.converter import convert
    tag = _TAG.search(tex)
    body = _ALIGN_ENV.sub(_align_as_array, _TAG.sub('', tex))
    body = _FENCED_MATRIX.sub(_fenced_matrix, _MISSING_OPERATORS.sub(r'\\operatorname{\1}', body)).strip()
    try:
        mathml = convert(body, display='block' if display else 'inline')
    except Exception as exc:  # latex2mathml raises its own exception types for unsupported input
        mathml, why = None, f'{type(exc).__name__}: {exc}'
    else:
        why = 'unknown command' if _UNKNOWN_COMMAND.search(mathml) else None
    if why is not None:
        LOG.warn(page, f'math left as TeX ({why}): {tex.strip()[:80]}')
        delim = '$$' if display else '$'
        return f'<code class="tex-fallback" title="TeX source">{delim}{html.escape(tex.strip())}{delim}</code>'
    if not display: return mathml
    eqno = f'<span class="eqno">({html.escape(tag.group(1))})</span>' if tag else ''
    return f'<span class="math-display">{mathml}{eqno}</span>'


# ---------------------------------------------------------------------------------------------------------------
# Markdown: nbconvert's mistune renderer, with MathML for math and API links for `names` in backticks.

def _renderer_class():
    from nbconvert.filters.markdown_mistune import IPythonRenderer

    class DocsRenderer(IPythonRenderer):
        "nbconvert's markdown renderer with build-time MathML and links from `name` to its API entry."

        def __init__(self, linker=None, page='?', **kwargs):
            super().__init__(escape=False, anchor_link_text='¶', **kwargs)
            self.linker, self.page = linker, page

        def block_math(self, body):
            return tex_to_html(body, True, self.page)

        def inline_math(self, body):
            return tex_to_html(body, False, self.page)

        def latex_environment(self, name, body):
            return tex_to_html(f'\\begin{{{name}}}{body}\\end{{{name}}}', True, self.page)

        def codespan(self, text):
            code = super().codespan(text)
            href = self.linker(text) if self.linker else None
            return f'<a class="api-link" href="{href}">{code}</a>' if href else code

    return DocsRenderer


@functools.cache
def _docs_renderer():
    return _renderer_class()


def markdown_to_html(text, linker=None, page='?', **kwargs):
    "HTML for markdown `text` with math (MathML) and API links."
    from nbconvert.filters.markdown_mistune import MarkdownWithMath
    renderer = _docs_renderer()(linker=linker, page=page, **kwargs)
    return MarkdownWithMath(renderer=renderer).render(text)


def inline_markdown(text, linker=None, page='?'):
    "Markdown of one line or paragraph as inline HTML (no enclosing <p>)."
    out = markdown_to_html(text, linker, page).strip()
    return out[3:-4] if out.startswith('<p>') and out.endswith('</p>') and out.count('<p>') == 1 else out


def highlight_python(code, console=False):
    "Pygments HTML for Python source (or a doctest session)."
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonConsoleLexer, PythonLexer
    lexer = PythonConsoleLexer() if console else PythonLexer()
    return highlight(code, lexer, HtmlFormatter(cssclass='highlight hl-python'))


# ---------------------------------------------------------------------------------------------------------------
# API index: every name in every module's __all__, and links from a name to its entry.

@dataclass
class ApiEntry:
    "One public name: where it lives and what it is."
    module: str
    name: str
    obj: object

    home: str = ''  # the public module that defines it, when that is another one (a re-export)

    @property
    def full(self):
        return f'{self.module}.{self.name}'


def public_modules(package=PACKAGE):
    "The package and its sub-modules that declare `__all__` (private modules skipped), imported."
    pkg = importlib.import_module(package)
    names = [package] + [m.name for m in pkgutil.walk_packages(pkg.__path__, package + '.')
                         if not any(part.startswith('_') for part in m.name.split('.'))]
    modules = [importlib.import_module(n) for n in names]
    return [m for m in modules if getattr(m, '__all__', None)]


def api_entries(modules):
    "Every name of every module's `__all__`, in order."
    entries = []
    for mod in modules:
        for name in mod.__all__:
            if not hasattr(mod, name):
                LOG.warn('api', f'{mod.__name__}.__all__ names {name!r}, which the module does not define')
                continue
            entries.append(ApiEntry(mod.__name__, name, getattr(mod, name)))
    defined = {(e.module, e.name) for e in entries}
    for e in entries:
        origin = getattr(e.obj, '__module__', None)
        if origin != e.module and (origin, e.name) in defined: e.home = origin
    return entries


def api_href(module, anchor=None):
    "Site-relative address of a module's API page (and an entry on it)."
    return f'api/{module}.html' + (f'#{anchor}' if anchor else '')


class Linker:
    "Turns `name`, `Class.method` or `kelm_nb.module.name` in backticks into a link to its API entry."

    def __init__(self, entries, rel='', prefer=(), pages=None):
        self.rel, self.prefer = rel, tuple(prefer)
        self.pages = dict(pages or {})  # `03_kernels` or `papers/06_li2014` -> that notebook's page
        self.by_full = {e.full: e for e in entries}
        self.modules = {e.module for e in entries}
        self.by_name = {}
        for e in entries: self.by_name.setdefault(e.name, []).append(e)

    def for_page(self, rel, prefer=()):
        "The same index, for a page at depth `rel` whose own modules win ambiguous names."
        twin = copy.copy(self)  # shares the index
        twin.rel, twin.prefer = rel, tuple(prefer)
        return twin

    def entry(self, name):
        "The entry a bare or dotted `name` refers to, or None (unknown or ambiguous)."
        if name in self.by_full: return self.by_full[name]
        found = [e for e in self.by_name.get(name, []) if not e.home]  # a re-export points to its origin
        mine = [e for e in found if e.module in self.prefer]
        if len(mine) == 1: return mine[0]
        return found[0] if len(found) == 1 else None

    def __call__(self, text):
        name = text.strip()
        if name.removesuffix('.ipynb') in self.pages: return self.rel + self.pages[name.removesuffix('.ipynb')]
        if name in self.modules: return self.rel + api_href(name)
        if name.endswith('()'): name = name[:-2]
        if not re.fullmatch(r'[A-Za-z_][\w.]*', name): return None
        entry = self.entry(name)
        if entry is not None: return self.rel + api_href(entry.module, entry.full)
        head, _, attr = name.rpartition('.')
        owner = self.entry(head) if head else None
        if owner is not None and inspect.isclass(owner.obj) and attr in vars(owner.obj):
            return self.rel + api_href(owner.module, f'{owner.full}.{attr}')
        return None


# ---------------------------------------------------------------------------------------------------------------
# numpydoc docstrings rendered as HTML.

PARAM_SECTIONS = {'Parameters', 'Other Parameters', 'Attributes', 'Returns', 'Yields', 'Receives', 'Raises',
                  'Warns', 'Methods'}
_RULE = re.compile(r'\s*-{3,}\s*')


def split_numpydoc(doc):
    "(intro lines, [(section title, lines)]) of a numpydoc docstring."
    lines = inspect.cleandoc(doc or '').splitlines()
    intro, sections, current = [], [], None
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        if line.strip() and not line.startswith(' ') and _RULE.fullmatch(nxt):
            current = (line.strip().title() if line.strip().lower() != 'see also' else 'See Also', [])
            sections.append(current)
            i += 2
            continue
        (current[1] if current else intro).append(line)
        i += 1
    return intro, sections


def parse_params(lines, name_optional=False):
    "[(name, type, description)] of a parameter-list section; for Returns/Raises a lone header is the type."
    items = []
    for line in lines:
        if line.strip() and not line.startswith((' ', '\t')):
            head, sep, typ = line.partition(' :')
            if not sep and name_optional: head, typ = '', line
            items.append([head.strip(), typ.strip(), []])
        elif items:
            items[-1][2].append(line)
    return [(n, t, inspect.cleandoc('\n'.join(d))) for n, t, d in items]


def _examples_html(lines, linker, page):
    "Doctest blocks highlighted as a console session; prose between them as markdown."
    html_parts, block, prose = [], [], []

    def flush_prose():
        if any(x.strip() for x in prose): html_parts.append(markdown_to_html('\n'.join(prose), linker, page))
        prose.clear()

    def flush_block():
        if block: html_parts.append(highlight_python('\n'.join(block), console=True))
        block.clear()

    for line in inspect.cleandoc('\n'.join(lines)).splitlines():
        if line.lstrip().startswith('>>>') or (block and line.strip()):
            flush_prose()
            block.append(line)
        else:
            flush_block()
            prose.append(line)
    flush_block()
    flush_prose()
    return ''.join(html_parts)


def _params_html(title, items, linker, page):
    rows = []
    for name, typ, desc in items:
        head = f'<code class="param">{html.escape(name)}</code>' if name else ''
        if typ: head += (' : ' if name else '') + f'<span class="ptype">{inline_markdown(typ, linker, page)}</span>'
        body = markdown_to_html(desc, linker, page) if desc else ''
        rows.append(f'<dt>{head}</dt><dd>{body}</dd>')
    return f'<div class="doc-section"><h5>{title}</h5><dl class="params">{"".join(rows)}</dl></div>'


def _see_also_html(lines, linker, page):
    text = '\n'.join(lines)
    refs = []
    for line in text.splitlines():
        if not line.strip() or line.startswith(' '): continue
        names, _, desc = line.partition(' : ')
        for name in names.split(','):
            refs.append((name.strip(), desc.strip()))
    items = ''.join(f'<li>{inline_markdown(f"`{n}`", linker, page)}'
                    f'{" — " + inline_markdown(d, linker, page) if d else ""}</li>' for n, d in refs if n)
    return f'<div class="doc-section"><h5>See also</h5><ul class="see-also">{items}</ul></div>'


def docstring_html(doc, linker=None, page='?'):
    "The rendered numpydoc docstring: summary, extended summary and every section."
    intro, sections = split_numpydoc(doc)
    parts = []
    text = '\n'.join(intro).strip()
    if text:
        summary, _, rest = text.partition('\n\n')
        parts.append(f'<div class="doc-summary">{markdown_to_html(summary, linker, page)}</div>')
        if rest.strip(): parts.append(f'<div class="doc-extended">{markdown_to_html(rest, linker, page)}</div>')
    for title, lines in sections:
        if title in PARAM_SECTIONS:
            optional = title in {'Returns', 'Yields', 'Receives', 'Raises', 'Warns'}
            parts.append(_params_html(title, parse_params(lines, optional), linker, page))
        elif title == 'Examples':
            parts.append(f'<div class="doc-section"><h5>Examples</h5>{_examples_html(lines, linker, page)}</div>')
        elif title == 'See Also':
            parts.append(_see_also_html(lines, linker, page))
        else:
            body = markdown_to_html(inspect.cleandoc('\n'.join(lines)), linker, page)
            parts.append(f'<div class="doc-section"><h5>{html.escape(title)}</h5>{body}</div>')
    return ''.join(parts)


# ---------------------------------------------------------------------------------------------------------------
# Signatures and one documented symbol.

def _unwrap(obj):
    "The Python function behind a numba dispatcher (or a functools wrapper)."
    if hasattr(obj, 'py_func'): return obj.py_func
    return inspect.unwrap(obj) if callable(obj) else obj


def symbol_kind(obj):
    if isinstance(obj, property): return 'property'
    if inspect.isclass(obj): return 'class'
    if hasattr(obj, 'py_func'): return 'jitted function'
    if inspect.isfunction(_unwrap(obj)) or inspect.isbuiltin(obj): return 'function'
    return 'data'


_CLASS_REPR = re.compile(r"<class '([\w.]+)'>")


def format_signature(obj, name, width=100):
    "`name(params) -> ret`, one parameter a line when it does not fit in `width`."
    target = obj.fget if isinstance(obj, property) else _unwrap(obj)
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return f'{name}(...)'
    params = [_CLASS_REPR.sub(r'\1', re.sub(r' at 0x[0-9a-f]+', '', str(p))) for p in sig.parameters.values()]
    if isinstance(obj, property) or (params and params[0] in ('self', 'cls') and not inspect.isclass(obj)):
        params = params[1:]
    ret = '' if sig.return_annotation is inspect.Signature.empty else \
        f' -> {inspect.formatannotation(sig.return_annotation)}'
    if isinstance(obj, property): return f'{name}{ret}'
    one_line = f'{name}({", ".join(params)}){ret}'
    if len(one_line) <= width: return one_line
    return f'{name}(\n    ' + ',\n    '.join(params) + f'\n){ret}'


def _short_repr():
    r = reprlib.Repr()
    r.maxstring = r.maxother = 200
    r.maxdict = r.maxlist = r.maxtuple = 8
    return r


_SHORT_REPR = _short_repr()


@dataclass
class DocContext:
    "What a rendered symbol needs from the page it is on."
    linker: Linker | None = None
    page: str = '?'
    links: dict = field(default_factory=dict)  # full name -> [(label, href)] shown beside the heading


def symbol_html(obj, name, full_name, ctx, level=3, kind=None, doc=None, inner=''):
    "One documented symbol: kind, name, signature, rendered docstring (`inner`: its members, nested)."
    kind = kind or symbol_kind(obj)
    links = ' · '.join(f'<a href="{href}">{label}</a>' for label, href in ctx.links.get(full_name, ()))
    head = (f'<div class="doc-head"><span class="doc-kind">{kind}</span>'
            f'<h{level} class="doc-name" id="{full_name}"><a href="#{full_name}">{html.escape(name)}</a></h{level}>'
            + (f'<span class="doc-links">{links}</span>' if links else '') + '</div>')
    if kind == 'data':
        body = (f'<div class="doc-sig"><code>{html.escape(name)}: {html.escape(type(obj).__name__)}</code></div>'
                f'<pre class="doc-value">{html.escape(_SHORT_REPR.repr(obj))}</pre>')
        return f'<section class="doc doc-data">{head}{body}</section>'
    body = f'<div class="doc-sig">{highlight_python(format_signature(obj, name))}</div>'
    if doc is None: doc = inspect.getdoc(obj.fget if isinstance(obj, property) else _unwrap(obj)) or ''
    if doc: doc_html = docstring_html(doc, ctx.linker, ctx.page)
    elif kind in ('method', 'property'): doc_html = ''  # e.g. fit/predict: the class docstring covers them
    else: doc_html = '<p class="doc-missing">No docstring.</p>'
    return f'<section class="doc doc-{kind.split()[-1]}">{head}{body}{doc_html}{inner}</section>'


def class_members(cls):
    "(name, object, docstring) of the public methods and properties `cls` defines (docstrings may be inherited)."
    out = []
    for name, value in vars(cls).items():
        if name.startswith('_'): continue
        if isinstance(value, (staticmethod, classmethod)): value = value.__func__
        if callable(value) or isinstance(value, property):
            out.append((name, value, inspect.getdoc(getattr(cls, name, value)) or ''))
    return out


def class_html(cls, name, full_name, ctx, level=3):
    "A class with its own public methods and properties nested under it."
    inner = ''.join(symbol_html(member, f'{name}.{attr}', f'{full_name}.{attr}', ctx, level + 1, doc=doc,
                                kind='property' if isinstance(member, property) else 'method')
                    for attr, member, doc in class_members(cls))
    return symbol_html(cls, name, full_name, ctx, level, inner=inner)


def _show_doc_renderer_class():
    from fastcore.docments import ShowDocRenderer

    class NumpydocRenderer(ShowDocRenderer):
        "A `show_doc` renderer (nbdev.showdoc.show_doc(sym, renderer=...)) that renders numpydoc as HTML."

        def __init__(self, sym, name=None, title_level=3, ctx=None, full_name=None):
            self.sym, self.nm, self.title_level = sym, name or getattr(sym, '__name__', str(sym)), title_level
            self.ctx, self.full_name = ctx or DocContext(), full_name or self.nm

        def _repr_html_(self):
            if inspect.isclass(self.sym): return class_html(self.sym, self.nm, self.full_name, self.ctx,
                                                            self.title_level)
            return symbol_html(self.sym, self.nm, self.full_name, self.ctx, self.title_level)

        def _repr_markdown_(self):
            return f'```python\n{format_signature(self.sym, self.nm)}\n```\n\n{inspect.getdoc(_unwrap(self.sym))}'

    return NumpydocRenderer


@functools.cache
def numpydoc_renderer():
    return _show_doc_renderer_class()


# ---------------------------------------------------------------------------------------------------------------
# Notebook processing: nbdev's processors plus the few a site without Quarto needs.

def find_notebooks(nbs=NBS):
    "Notebooks as nbdev sees them: nbs/**/*.ipynb, skipping names and folders that start with '_' or '.'."
    found = []
    for path in sorted(nbs.rglob('*.ipynb')):
        if any(part.startswith(('_', '.')) for part in path.relative_to(nbs).parts): continue
        found.append(path)
    index = nbs / 'index.ipynb'
    return sorted(found, key=lambda p: (p != index, len(p.relative_to(nbs).parts), str(p)))


_DEFAULT_EXP = re.compile(r"^[ \t]*#\|[ \t]*default_exp[ \t]+(\S+)", re.M)
_EXPORT_TO = re.compile(r"^[ \t]*#\|[ \t]*export[si]?[ \t]+(\S+)", re.M)


def notebook_modules(nb_json):
    "(default_exp, [every module the notebook exports to]) from a notebook's JSON, as importable names."
    sources = [''.join(c['source']) if isinstance(c['source'], list) else c['source']
               for c in nb_json['cells'] if c['cell_type'] == 'code']
    default = next((m.group(1) for s in sources for m in [_DEFAULT_EXP.search(s)] if m), None)
    targets = [default] if default else []
    for s in sources:
        targets += [t for t in _EXPORT_TO.findall(s) if t not in targets and not t.startswith('#')]
    return default, [f'{PACKAGE}.{t}' for t in targets]


def split_title(source):
    "(title, description, rest) of a markdown cell that starts with `# Title` and an optional `> summary` block."
    lines = source.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None or not re.match(r'#\s+\S', lines[start]): return None
    title = lines[start].lstrip('#').strip()
    i = start + 1
    while i < len(lines) and not lines[i].strip(): i += 1
    quote = []
    while i < len(lines) and lines[i].startswith('>'):
        quote.append(lines[i].lstrip('>').strip())
        i += 1
    return title, ' '.join(quote), '\n'.join(lines[i:]).strip()


def _title_proc(page):
    "Processor: the first `# Title` and the `> summary` under it become the page header; the rest of the cell stays."
    done = []

    def proc(cell):
        if done or cell.cell_type != 'markdown' or not cell.source: return
        parts = split_title(cell.source)
        if parts is None: return
        done.append(True)
        page.title, page.description_md, rest = parts
        cell.source = rest if rest else None
    return proc


def _show_doc_calls(source):
    "The show_doc(...) calls a cell consists of, or None when it holds anything else."
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    calls = [n.value for n in tree.body if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
    if not calls or len(calls) != len(tree.body): return None
    if not all(isinstance(c.func, ast.Name) and c.func.id == 'show_doc' for c in calls): return None
    return calls


def _render_show_docs(page, namespace, ctx):
    "Processor: a `show_doc` cell gets nbdev's show_doc output (numpydoc as HTML) of the exported object; no input."
    from nbdev.showdoc import show_doc

    def proc(cell):
        if cell.cell_type != 'code' or not cell.source: return
        calls = _show_doc_calls(cell.source)
        if calls is None: return
        outputs = []
        for call in calls:
            if not call.args: continue
            expr = ast.unparse(call.args[0])
            try:
                obj = eval(compile(ast.Expression(call.args[0]), '<show_doc>', 'eval'), {}, namespace)
            except Exception as exc:
                LOG.warn(page.path, f'show_doc({expr}): not found in the exported module(s) ({exc})')
                continue
            kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg in ('name', 'title_level')}
            module = getattr(obj, '__module__', None) or ''
            full = f'{module}.{expr}' if module.startswith(PACKAGE) else expr
            renderer = functools.partial(numpydoc_renderer(), ctx=ctx, full_name=full)
            shown = show_doc(obj, renderer=renderer, **kwargs)
            outputs.append({'output_type': 'display_data', 'metadata': {},
                            'data': {'text/html': shown._repr_html_(), 'text/markdown': shown._repr_markdown_()}})
        cell.outputs = outputs
        cell.metadata['transient'] = {'remove_source': True}
        cell.metadata['docs_showdoc'] = True
    return proc


def _export_source(mode):
    "Processor: exported source folded, shown or hidden; `default_exp` cells dropped."
    def proc(cell):
        if cell.cell_type != 'code': return
        d = cell.directives_
        if 'default_exp' in d: cell.source = None
        elif d.keys() & {'export', 'exporti', 'exports'}:
            if mode == 'hide' and 'exports' not in d: cell.source = None
            elif mode == 'fold' or 'exports' in d: cell.metadata['docs_fold'] = True
    return proc


_QUARTO_LINE = re.compile(r'^\s*#\|\s*[\w-]+\s*:.*$\n?', re.M)


def _quarto_options(cell):
    "Processor: honour the Quarto cell options a reader would expect (echo, output, include, code-fold)."
    if cell.cell_type != 'code' or not cell.source: return
    d = {k.rstrip(':'): ' '.join(v).lower() for k, v in cell.directives_.items() if k.endswith(':')}
    if d.get('include') == 'false':
        cell.source = None
        return
    if d.get('echo') == 'false': cell.metadata['transient'] = {'remove_source': True}
    if d.get('output') == 'false': cell.outputs = []
    if d.get('code-fold') in ('true', 'show'): cell.metadata['docs_fold'] = True
    cell.source = _QUARTO_LINE.sub('', cell.source)


_SCRIPT_MIMES = ('application/javascript', 'application/vnd.jupyter.widget-view+json',
                 'application/vnd.jupyter.widget-state+json')


def _static_outputs(cell):
    "Processor: outputs that need a live kernel or a script (widgets such as tqdm bars, JavaScript) keep their text."
    for out in cell.get('outputs', []):
        data = out.get('data')
        if not data or not any(m in data for m in _SCRIPT_MIMES): continue
        for mime in _SCRIPT_MIMES: data.pop(mime, None)
        if not data: data['text/plain'] = ''


def _drop_empty(cell):
    "Processor: a code cell left with neither source nor outputs is dropped."
    if cell.cell_type == 'code' and not (cell.source or '').strip() and not cell.get('outputs'):
        cell.source = None


def process_notebook(nb, page, namespace, ctx, export_source='fold'):
    "Run nbdev's docs processors (and ours) over `nb` (an execnb notebook) in place."
    from nbdev.process import NBProcessor
    from nbdev.processors import (add_show_docs, clean_magics, filter_stream_, hide_, hide_line, mv_exports,
                                  populate_language, rm_header_dash, strip_ansi, strip_hidden_metadata)
    procs = [_title_proc(page), populate_language, add_show_docs, strip_ansi, hide_line, filter_stream_,
             rm_header_dash, _render_show_docs(page, namespace, ctx), _export_source(export_source),
             _quarto_options, clean_magics, hide_, mv_exports, strip_hidden_metadata, _static_outputs, _drop_empty]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # nbdev warns about cells mixing imports and code: a Quarto concern
        NBProcessor(nb=nb, procs=procs).process()
    return nb


def execute_notebook(path, timeout=1800):
    "Run a notebook (its folder as working directory; `#| slow` cells skipped, keeping their outputs)."
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == 'code' and re.search(r'^\s*#\|\s*slow\b', cell.source, re.M):
            cell.metadata.setdefault('tags', []).append('skip-execution')
    NotebookClient(nb, timeout=timeout, kernel_name='python3',
                   resources={'metadata': {'path': str(path.parent)}}).execute()
    return json.loads(nbformat.writes(nb))


# ---------------------------------------------------------------------------------------------------------------
# Pages and navigation.

@dataclass
class Page:
    "One page of the site."
    path: str  # site-relative, e.g. 'papers/03_frenay2011.html'
    kind: str  # 'notebook', 'paper', 'api', 'about'
    title: str = ''
    description_md: str = ''
    source: str = ''  # the notebook it comes from, repository-relative
    default_exp: str | None = None
    modules: list = field(default_factory=list)
    headings: list = field(default_factory=list)  # [(id, text)] of the h2 sections
    figures: list = field(default_factory=list)  # site-relative image paths
    paper: str | None = None

    @property
    def rel(self):
        return '../' * self.path.count('/')

    @property
    def short(self):
        "Sidebar label: the notebook number and the title up to its colon."
        stem = Path(self.path).stem
        num = stem.split('_', 1)[0] if stem[:2].isdigit() else ''
        label = self.title.split(':', 1)[0].replace('`', '').strip() or stem
        return f'{num} · {label}' if num else label


def paper_label(paper):
    "'Frénay & Verleysen (2011)' from a `Paper` (authors from its citation, year from its key)."
    parts = [p.strip() for p in paper.citation.split(',')]
    authors = []
    for p in parts:
        if not re.fullmatch(r'(?:[A-Z][a-z]?\.\s*-?)+\s*\S+', p): break
        authors.append(p.split()[-1])
    year = re.search(r'\d{4}', paper.key)
    first = authors[0] if authors else paper.key
    who = (f'{", ".join(authors[:-1])} & {authors[-1]}' if 1 < len(authors) <= 3 else
           f'{first} et al.' if len(authors) > 3 else first)
    return f'{who} ({year.group(0)})' if year else who


def paper_title(paper):
    "The paper's title from its citation: what follows the authors, up to the venue."
    parts = [p.strip() for p in paper.citation.split(',')]
    rest = [p for p in parts if not re.fullmatch(r'(?:[A-Z][a-z]?\.\s*-?)+\s*\S+', p)]
    return rest[0] if rest else paper.citation


def match_papers(pages, papers):
    "{paper key: (method page or None, experiment page or None)} by each notebook's default_exp."
    out = {}
    for key, paper in papers.items():
        method_mod = paper.method.removeprefix(PACKAGE + '.')
        method = next((p for p in pages if p.default_exp == method_mod), None)
        experiment = next((p for p in pages if p.default_exp == f'papers.{key}'), None)
        out[key] = (method, experiment)
    return out


def build_nav(pages, matched, papers, api_modules):
    "The sidebar: home, library notebooks, papers (each with its two notebooks), API reference, about."
    in_paper = {p.path for pair in matched.values() for p in pair if p is not None}
    home = [{'href': 'index.html', 'label': 'Home', 'children': []}]
    library = [{'href': p.path, 'label': p.short, 'children': []}
               for p in pages if p.kind == 'notebook' and p.path != 'index.html' and '/' not in p.path]
    paper_items = []
    for key, (method, experiment) in matched.items():
        kids = [{'href': p.path, 'label': f'{role}: {p.short}', 'children': []}
                for p, role in ((method, 'Method'), (experiment, 'Experiment')) if p is not None]
        paper_items.append({'href': f'paper-{key}.html', 'label': paper_label(papers[key]), 'children': kids})
    others = [{'href': p.path, 'label': p.short, 'children': []}
              for p in pages if p.kind == 'notebook' and '/' in p.path and p.path not in in_paper]
    api = [{'href': 'api/index.html', 'label': 'All modules', 'children': []}] + \
          [{'href': api_href(m.__name__), 'label': m.__name__, 'children': []} for m in api_modules]
    groups = [('kelm_nb', home), ('Library notebooks', library), ('Papers', paper_items),
              ('Other notebooks', others), ('API reference', api),
              ('About', [{'href': 'building.html', 'label': 'How these docs are built', 'children': []}])]
    return [{'title': t, 'items': items} for t, items in groups if items]


_H2 = re.compile(r'<h2 id="([^"]+)">(.*?)(?:<a class="anchor-link".*?</a>)?</h2>', re.S)


def page_toc(body):
    "[(id, text)] of the h2 sections of a rendered page."
    return [(i, html.unescape(re.sub(r'<[^>]+>', '', t)).strip()) for i, t in _H2.findall(body)]


def insert_toc(body, toc):
    "The page's own sections under its sidebar entry."
    if not toc: return body.replace('<!--PAGE-TOC-->', '', 1)
    items = ''.join(f'<li><a href="#{html.escape(i)}">{html.escape(t)}</a></li>' for i, t in toc)
    return body.replace('<!--PAGE-TOC-->', f'<ul class="page-toc">{items}</ul>', 1)


# ---------------------------------------------------------------------------------------------------------------
# Rendering.

_IMG_NO_ALT = re.compile(r'<img(?![^>]*\balt=)(\s[^>]*)?>')


def make_exporter():
    "nbconvert's HTML exporter with the site template, no prompts, figures written as files, MathML for math."
    from jinja2 import pass_context
    from nbconvert import HTMLExporter
    from nbconvert.preprocessors import ExtractOutputPreprocessor

    class DocsExporter(HTMLExporter):
        def from_notebook_node(self, nb, resources=None, **kw):
            # HTMLExporter's own version ends with a BeautifulSoup pass over the whole page (to add missing alt
            # texts) that took half the build: register its two filters, render, and add alt texts ourselves.
            from nbconvert.exporters.templateexporter import TemplateExporter
            from nbconvert.filters.highlight import Highlight2HTML
            from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
            lang = nb.metadata.get('language_info', {})
            self.register_filter('highlight_code', Highlight2HTML(
                pygments_lexer=lang.get('pygments_lexer', lang.get('name')), parent=self))
            resources = self._init_resources(resources)
            self.register_filter('filter_data_type', WidgetsDataTypeFilter(
                notebook_metadata=self._nb_metadata, parent=self, resources=resources))
            out, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
            return _IMG_NO_ALT.sub(r'<img alt="figure"\1', out), resources

        @pass_context
        def markdown2html(self, context, source):
            res = context.get('resources', {})
            cell = context.get('cell', {})
            return markdown_to_html(source, res.get('docs_linker'), res.get('docs_page', {}).get('path', '?'),
                                    attachments=cell.get('attachments', {}))

    exporter = DocsExporter(template_name=TEMPLATE_NAME, extra_template_basedirs=[str(TEMPLATES)],
                            exclude_input_prompt=True, exclude_output_prompt=True)
    extract = ExtractOutputPreprocessor(output_filename_template='{unique_key}_{cell_index}_{index}{extension}')
    extract.extract_output_types = {'image/png', 'image/jpeg', 'image/svg+xml'}
    exporter.register_preprocessor(extract, enabled=True)
    return exporter


def page_context(page, linker):
    "What the templates show of a page."
    description = inline_markdown(page.description_md, linker, page.path) if page.description_md else ''
    kicker = {'paper': 'Paper', 'api': 'API reference', 'about': 'About'}.get(page.kind, '')
    if page.kind == 'notebook' and page.default_exp: kicker = f'Notebook · module {PACKAGE}.{page.default_exp}'
    return {'path': page.path, 'rel': page.rel, 'kind': page.kind, 'title': inline_markdown(page.title),
            'description': description, 'source': page.source, 'kicker': kicker}


def render_notebook(exporter, nb_json, page, site, linker, out_dir):
    "Write one notebook page (and its figures); return the page's HTML."
    import nbformat
    from execnb.nbio import nb2dict
    for cell in nb_json.cells: cell.pop('has_sd', None)  # nbdev's marker of the show_doc cells it added
    node = nbformat.reads(json.dumps(nb2dict(nb_json)), as_version=4)  # joins the line lists again
    node.metadata.pop('widgets', None)
    stem = Path(page.path).stem
    resources = {'metadata': {'name': stem, 'path': str(ROOT)}, 'output_files_dir': f'{stem}_files',
                 'unique_key': stem, 'docs_page': page_context(page, linker), 'docs_site': site,
                 'docs_linker': linker}
    body, res = exporter.from_notebook_node(node, resources=resources)
    page_dir = (out_dir / page.path).parent
    for name, data in res.get('outputs', {}).items():
        target = page_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        page.figures.append(str(Path(page.path).parent / name).removeprefix('./'))
    page.headings = page_toc(body)
    if page.path == 'index.html': body = repository_links_to_site(body)
    return ipynb_links_to_html(insert_toc(body, page.headings))


# The home page is also README.md at the repository's root, so its links are repository paths; the site lays the
# notebooks of nbs/ out at its top and renders docs/building.md as building.html.
_REPOSITORY_LINKS = {'href="nbs/': 'href="', 'href="docs/building.md"': 'href="building.html"'}


def repository_links_to_site(page_html):
    "The home page's repository paths as the site's paths."
    for path, site_path in _REPOSITORY_LINKS.items():
        page_html = page_html.replace(path, site_path)
    return page_html


_IPYNB_LINK = re.compile(r'href="(?![a-zA-Z][\w+.-]*:)([^"#?]*)\.ipynb([#?][^"]*)?"')


def ipynb_links_to_html(page_html):
    "Relative links to notebooks point to their pages, as nbdev's docs do."
    return _IPYNB_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', page_html)


def render_plain(env, page, site, body, linker):
    "A page that is not a notebook, in the same layout."
    out = env.get_template('page.html.j2').render(page=page_context(page, linker), site=site, body=body)
    page.headings = page_toc(out)
    return ipynb_links_to_html(insert_toc(out, page.headings))


def _heading_id(text):
    return re.sub(r'[^\w-]+', '-', text).strip('-')


def api_module_body(mod, entries, ctx, notebook_of):
    "One module's API page: its docstring, its notebook, every name of its __all__."
    parts = []
    rest = inspect.cleandoc(mod.__doc__ or '').partition('\n\n')[2]  # the first paragraph is the page's lead
    if rest.strip(): parts.append(markdown_to_html(rest, ctx.linker, ctx.page))
    nb_page = notebook_of.get(mod.__name__)
    if nb_page is not None:
        parts.append(f'<p class="defined-in">Written in the notebook <a href="../{nb_page.path}">'
                     f'{html.escape(nb_page.title)}</a> (<code>{nb_page.source}</code>).</p>')
    rows = ''.join(f'<tr><td><a href="#{e.full}"><code>{e.name}</code></a></td><td>{symbol_kind(e.obj)}</td>'
                   f'<td>{inline_markdown(first_line(e.obj), ctx.linker, ctx.page)}</td></tr>' for e in entries)
    parts.append(f'<table class="api-summary"><thead><tr><th>name</th><th>kind</th><th>summary</th></tr></thead>'
                 f'<tbody>{rows}</tbody></table>')
    for e in entries:
        if e.home:  # documented where it is defined
            parts.append(f'<section class="doc doc-reexport" id="{e.full}"><p><code>{e.name}</code>: re-exported '
                         f'from <a href="{e.home}.html#{e.home}.{e.name}"><code>{e.home}.{e.name}</code></a>.'
                         '</p></section>')
            continue
        parts.append(numpydoc_renderer()(e.obj, name=e.name, ctx=ctx, full_name=e.full)._repr_html_())
    return '\n'.join(parts)


def first_line(obj):
    "The first line of an object's docstring ('' for data)."
    if symbol_kind(obj) == 'data': return ''
    doc = inspect.getdoc(_unwrap(obj)) or ''
    return doc.strip().split('\n\n', 1)[0].replace('\n', ' ')


def api_index_body(modules, entries, notebook_of, linker):
    "The API overview: every module, its one-line summary, its names."
    parts = ['<p>Every public name of the package: the names in each module\'s <code>__all__</code>, with '
             'signature and rendered docstring, in the order of the notebooks that write them.</p>']
    for mod in modules:
        names = [e for e in entries if e.module == mod.__name__]
        summary = inline_markdown((mod.__doc__ or '').strip().split('\n\n', 1)[0], linker, 'api/index.html')
        links = ', '.join(f'<a href="{mod.__name__}.html#{e.full}"><code>{e.name}</code></a>' for e in names)
        nb_page = notebook_of.get(mod.__name__)
        nb_link = f' — notebook <a href="../{nb_page.path}">{Path(nb_page.path).stem}</a>' if nb_page else ''
        parts.append(f'<h2 id="{mod.__name__}"><a href="{mod.__name__}.html">{mod.__name__}</a></h2>'
                     f'<p>{summary}{nb_link}</p><p class="name-list">{links}</p>')
    return '\n'.join(parts)


def paper_body(key, paper, method, experiment, modules_by_name, linker=None):
    "A paper's page: the citation, its method notebook and its experiment notebook with their sections, figures."
    parts = [f'<blockquote class="citation">{html.escape(paper.citation)}</blockquote>']
    for role, page, mod_name in (('The method', method, paper.method),
                                 ('The experiment', experiment, f'{PACKAGE}.papers.{key}')):
        parts.append(f'<h2 id="{_heading_id(role)}">{role}</h2>')
        if page is None:
            where = (f'nbs/papers/NN_{key}.ipynb (<code>#| default_exp papers.{key}</code>)'
                     if role == 'The experiment' else f'the notebook with <code>#| default_exp {mod_name}</code>')
            parts.append(f'<p class="missing">Not written yet: {where}.</p>')
            continue
        desc = inline_markdown(page.description_md, linker, page.path) if page.description_md else ''
        sections = ''.join(f'<li><a href="{page.path}#{html.escape(i)}">{html.escape(t)}</a></li>'
                           for i, t in page.headings)
        api = (f' · API: <a href="{api_href(mod_name)}"><code>{mod_name}</code></a>'
               if mod_name in modules_by_name else '')
        parts.append(f'<div class="card"><p class="card-title"><a href="{page.path}">{html.escape(page.title)}</a>'
                     f'</p><p>{desc}</p><p class="card-meta"><code>{page.source}</code>{api}</p>'
                     f'<ul class="sections">{sections}</ul></div>')
    figures = [(p, f) for p in (method, experiment) if p is not None for f in p.figures]
    if figures:
        thumbs = ''.join(f'<a href="{p.path}"><img src="{f}" alt="figure from {html.escape(p.title)}" '
                         f'loading="eager"></a>' for p, f in figures)
        parts.append(f'<h2 id="figures">Figures</h2><div class="thumbs">{thumbs}</div>')
    return '\n'.join(parts)


# ---------------------------------------------------------------------------------------------------------------
# The build.

def _site_info():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / 'settings.ini')
    desc = cfg.get('DEFAULT', 'description', fallback='')
    return {'name': PACKAGE, 'tagline': desc.split(':', 1)[0], 'title_prefix': f'{PACKAGE} · '}


def _prepare_out(out_dir):
    "Empty `out_dir` if it is a previous build (or empty); refuse to touch any other folder."
    if out_dir.exists() and any(out_dir.iterdir()):
        if not (out_dir / MANIFEST).exists():
            raise SystemExit(f'{out_dir} exists, is not empty and holds no {MANIFEST}: not a docs build, '
                             'refusing to overwrite it')
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MANIFEST).write_text('{"built_with": "tools/build_docs.py", "complete": false}\n')


def _write_static(out_dir):
    from pygments.formatters import HtmlFormatter
    static = out_dir / 'static'
    static.mkdir(parents=True, exist_ok=True)
    shutil.copy2(DOCS_SRC / 'static' / 'style.css', static / 'style.css')
    (static / 'pygments.css').write_text(HtmlFormatter(style='friendly').get_style_defs('.highlight'))


def _load_notebook(path, execute):
    from execnb.nbio import dict2nb, read_nb
    if not execute: return read_nb(path)
    nb = dict2nb(execute_notebook(path))
    nb['path_'] = str(path)
    return nb


def _namespace(modules, page):
    "The exported modules' namespaces, first module first (what show_doc cells refer to)."
    maps = []
    for name in modules:
        try:
            maps.append(vars(importlib.import_module(name)))
        except Exception as exc:
            LOG.warn(page.path, f'cannot import {name} for show_doc ({type(exc).__name__}: {exc})')
    return ChainMap(*maps)


def _notebook_page(path, nbs):
    rel = path.relative_to(nbs).with_suffix('.html')
    nb_json = json.loads(path.read_text(encoding='utf-8'))
    default, modules = notebook_modules(nb_json)
    first_md = next((c for c in nb_json['cells'] if c['cell_type'] == 'markdown'), None)
    parts = split_title(''.join(first_md['source'])) if first_md else None
    title, description = parts[:2] if parts else (path.stem, '')
    source = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    return Page(path=rel.as_posix(), kind='notebook', title=title, description_md=description, source=source,
                default_exp=default, modules=modules)


@dataclass
class Plan:
    "Everything known before a page is written: the notebooks, their pages, the papers, the API index."
    notebooks: list
    pages: list
    matched: dict
    modules: list
    entries: list
    linker: Linker
    site: dict
    notebook_of: dict  # module name -> the page of the notebook that writes it
    links: dict  # full name -> [(label, site-relative href)] beside its heading (its notebook)


def plan_site(nbs, papers):
    "Find the notebooks and the public modules; match papers; order the API; lay out the sidebar."
    modules = public_modules()
    entries = api_entries(modules)
    linker = Linker(entries)
    notebooks = find_notebooks(nbs)
    pages = [_notebook_page(p, nbs) for p in notebooks]
    for p in pages:
        linker.pages[p.path.removesuffix('.html')] = p.path
        linker.pages.setdefault(Path(p.path).stem, p.path)
    matched = match_papers(pages, papers)
    for key, pair in matched.items():
        for p in pair:
            if p is not None: p.paper = key
    notebook_of = {m: p for p in pages for m in p.modules[:1]}
    order = {p.path: i for i, p in enumerate(pages)}
    modules.sort(key=lambda m: (order.get(getattr(notebook_of.get(m.__name__), 'path', None), len(order)),
                                m.__name__))
    site = _site_info()
    site['nav'] = build_nav(pages, matched, papers, modules)
    links = {e.full: [('notebook', f'{notebook_of[e.module].path}#{e.full}')]
             for e in entries if e.module in notebook_of}
    return Plan(notebooks, pages, matched, modules, entries, linker, site, notebook_of, links)


def write_notebook_pages(plan, out_dir, execute, export_source, say):
    "One page per notebook, processed like nbdev's docs and converted by nbconvert."
    exporter = make_exporter()
    for path, page in zip(plan.notebooks, plan.pages, strict=True):
        t = time.perf_counter()
        nb = _load_notebook(path, execute)
        page_linker = plan.linker.for_page(page.rel, page.modules)
        api_links = {f: [('API', page.rel + api_href(f.rsplit('.', 1)[0], f))] for f in plan.links}
        ctx = DocContext(page_linker, page.path, api_links)
        process_notebook(nb, page, _namespace(page.modules, page), ctx, export_source)
        page.title = page.title or Path(page.path).stem
        out = render_notebook(exporter, nb, page, plan.site, page_linker, out_dir)
        (out_dir / page.path).parent.mkdir(parents=True, exist_ok=True)
        (out_dir / page.path).write_text(out, encoding='utf-8')
        say(f'  {page.path:<36} {len(page.figures):3d} figures  {time.perf_counter() - t:5.1f} s')


def paper_pages(plan, papers):
    "(page, body) of each paper's page."
    out = []
    for key, (method, experiment) in plan.matched.items():
        page = Page(path=f'paper-{key}.html', kind='paper', title=paper_label(papers[key]),
                    description_md=paper_title(papers[key]), paper=key)
        body = paper_body(key, papers[key], method, experiment, {m.__name__ for m in plan.modules},
                          plan.linker.for_page('', [papers[key].method]))
        page.figures = [f for p in (method, experiment) if p is not None for f in p.figures]
        out.append((page, body))
    return out


def api_pages(plan):
    "(page, body) of the API overview and of each module's API page."
    index = Page(path='api/index.html', kind='api', title='API reference',
                 description_md=f'Every public name of `{PACKAGE}`, module by module.')
    out = [(index, api_index_body(plan.modules, plan.entries, plan.notebook_of, plan.linker.for_page('../')))]
    links = {f: [(label, '../' + href) for label, href in v] for f, v in plan.links.items()}
    for mod in plan.modules:
        page = Page(path=api_href(mod.__name__), kind='api', title=mod.__name__,
                    description_md=(mod.__doc__ or '').strip().split('\n\n', 1)[0].replace('\n', ' '))
        ctx = DocContext(plan.linker.for_page('../', [mod.__name__]), page.path, links)
        entries = [e for e in plan.entries if e.module == mod.__name__]
        out.append((page, api_module_body(mod, entries, ctx, plan.notebook_of)))
    return out


def about_page(plan):
    "(page, body) of the page on how the docs are built (docs/building.md)."
    page = Page(path='building.html', kind='about', title='How these docs are built',
                description_md="One command, no Quarto: nbdev's processors, nbconvert and a little glue.",
                source='docs/building.md')
    text = (DOCS_SRC / 'building.md').read_text(encoding='utf-8')
    return page, markdown_to_html(text, plan.linker, page.path)


def write_manifest(out_dir, plan, pages, **info):
    "pages.json: every page (path, kind, title, source, figures), the papers, the build's settings and warnings."
    manifest = {'built_with': 'tools/build_docs.py', **info, 'warnings': list(LOG.items),
                'papers': {k: {'page': f'paper-{k}.html', 'method': m.path if m else None,
                               'experiment': x.path if x else None} for k, (m, x) in plan.matched.items()},
                'pages': [{'path': p.path, 'kind': p.kind, 'title': p.title, 'source': p.source,
                           'figures': p.figures, 'paper': p.paper} for p in pages]}
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding='utf-8')
    return manifest


def _copy_results(src, dst):
    "The committed results (tables, figures, summaries; no task store, no HTML index): the home page links there."
    if src.is_dir():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns('.tasks', '*.html'), dirs_exist_ok=True)


def build(out_dir='_docs', execute=False, export_source='fold', nbs=NBS, quiet=False):
    """Build the site into `out_dir`; return the manifest (pages, timings, warnings) also written as pages.json.

    `execute`: re-run each notebook first (default: use the committed outputs). `export_source`: 'fold'
    (exported source in a collapsed block), 'show' or 'hide'.
    """
    from jinja2 import Environment, FileSystemLoader
    from kelm_nb.experiments import PAPERS
    if export_source not in EXPORT_SOURCE_MODES:
        raise ValueError(f'export_source must be one of {EXPORT_SOURCE_MODES}, got {export_source!r}')
    t0 = time.perf_counter()
    LOG.items.clear()
    out_dir, nbs = Path(out_dir).resolve(), Path(nbs).resolve()
    _prepare_out(out_dir)
    _write_static(out_dir)
    _copy_results(nbs.parent / 'results', out_dir / 'results')
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, flush=True))

    plan = plan_site(nbs, PAPERS)
    write_notebook_pages(plan, out_dir, execute, export_source, say)
    env = Environment(loader=FileSystemLoader(str(TEMPLATES / TEMPLATE_NAME)), autoescape=False)
    extra = paper_pages(plan, PAPERS) + api_pages(plan) + [about_page(plan)]
    for page, body in extra:
        target = out_dir / page.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_plain(env, page, plan.site, body, plan.linker.for_page(page.rel)),
                          encoding='utf-8')

    pages = plan.pages + [p for p, _ in extra]
    manifest = write_manifest(out_dir, plan, pages, execute=execute, export_source=export_source,
                              seconds=round(time.perf_counter() - t0, 2))
    for w in LOG.items: say(f'  warning: {w}')
    say(f'built {len(pages)} pages into {out_dir} in {manifest["seconds"]:.1f} s')
    return manifest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--out', default=str(ROOT / '_docs'), help='output folder (default: _docs)')
    parser.add_argument('--execute', action=argparse.BooleanOptionalAction, default=False,
                        help='re-run every notebook before rendering (default: use the committed outputs)')
    parser.add_argument('--export-source', choices=EXPORT_SOURCE_MODES, default='fold',
                        help="exported source: 'fold' (collapsed, default), 'show' or 'hide'")
    parser.add_argument('--quiet', action='store_true', help='print only warnings and errors')
    args = parser.parse_args(argv)
    build(args.out, execute=args.execute, export_source=args.export_source, quiet=args.quiet)
    return 0


if __name__ == '__main__':
    sys.exit(main())
