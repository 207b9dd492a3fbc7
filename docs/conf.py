"""Sphinx configuration of kelm_nb's documentation site.

`python tools/build_docs.py --out _docs` stages the notebooks (directives handled, hidden cells dropped) next to
this file and the hand-written pages, generates the API reference, and runs Sphinx on the staged copy. The
notebooks are rendered with their stored outputs by myst-nb; nothing is executed.
"""
import re

project = 'kelm_nb'
author = 'kelm_nb developers'
copyright = '2026 onwards, kelm_nb developers'
root_doc = 'index'

extensions = ['myst_nb', 'sphinx.ext.autodoc', 'sphinx.ext.mathjax', 'numpydoc']
exclude_patterns = ['_build', '**.ipynb_checkpoints', 'build.json']
suppress_warnings = ['myst.header']  # notebooks jump heading levels (a title, then '###' findings)
default_role = 'py:obj'  # `name` in docstrings links to the API entry when there is one

# notebooks: the stored outputs as they are, never executed
nb_execution_mode = 'off'
nb_render_markdown_format = 'myst'  # markdown outputs (result tables) may hold tables and math
nb_ipywidgets_js = {}  # no widget manager from a CDN; widget outputs are staged as their text
nb_merge_streams = True
myst_enable_extensions = ['dollarmath', 'amsmath', 'colon_fence', 'deflist']
myst_heading_anchors = 3

# API reference: autodoc + numpydoc
autodoc_member_order = 'bysource'
autodoc_typehints = 'none'
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()

# math: MathJax 3 served from the site itself (tools/build_docs.py copies it into _static/mathjax)
mathjax_path = 'mathjax/tex-chtml.js'

html_theme = 'pydata_sphinx_theme'
html_title = 'kelm_nb'
html_static_path = ['_static']
html_css_files = ['kelm.css']
html_favicon = '_static/favicon.svg'
html_context = {'default_mode': 'auto'}  # light or dark as the reader's system is
html_copy_source = False
html_show_sourcelink = False
html_theme_options = {
    'navigation_depth': 3,
    'show_toc_level': 2,
    'header_links_before_dropdown': 6,
    'navbar_end': ['theme-switcher', 'navbar-icon-links'],
    'navbar_persistent': ['search-button'],
    'secondary_sidebar_items': ['page-toc'],
    'footer_start': ['copyright'],
    'footer_end': ['sphinx-version'],
}

_DISPLAY_LINES = re.compile(r'^([ \t]*)\$\$(.+?)\$\$[ \t]*$', re.S | re.M)
_DISPLAY = re.compile(r'\$\$(.+?)\$\$', re.S)
_INLINE = re.compile(r'(?<![\\$\w])\$(?!\$)([^$\n]+?)(?<!\\)\$(?!\$)')
_TICKED = re.compile(r'`[^`\n]+`')


def _math_roles(text):
    "Docstrings write TeX as $...$ and $$...$$ (as the notebooks do): turn it into reST math."
    text = _DISPLAY_LINES.sub(lambda m: f'\n{m.group(1)}.. math::\n\n{m.group(1)}   ' + ' '.join(m.group(2).split())
                              + '\n', text)
    role = lambda m: ':math:`' + ' '.join(m.group(1).split()).replace('`', "'") + '`'
    text = _DISPLAY.sub(role, text)
    text = _INLINE.sub(role, text)
    # `Table`s: reST needs a break after a closing backtick that a letter follows
    text = _TICKED.sub(lambda m: m.group(0) + ('\\ ' if re.match(r'\w', text[m.end():m.end() + 1]) else ''), text)
    return '\n'.join(line if _MATH_LINE.match(line) else _param_head(line) if _PARAM_HEAD.match(line) else _plain(line)
                     for line in text.split('\n'))


def _param_head(line):
    "A numpydoc 'name : type' line: numpydoc escapes the name; escape names inside the type (its shape)."
    name, sep, kind = line.partition(' : ')
    return name + sep + _TRAILING_UNDERSCORE.sub(r'\1\\_', kind)


_MATH_LINE = re.compile(r'^\s*(\.\. math::|\\|[^a-zA-Z`]*\\[a-z]+)')
_PARAM_HEAD = re.compile(r'^[\w*][\w, *]*( : .*)?$')  # numpydoc's 'name : type' lines escape names themselves
_TRAILING_UNDERSCORE = re.compile(r'\b([A-Za-z]\w*?)_(?=[\s,.;:)\]]|$)')
_BARS = re.compile(r'(?<![\w\\])\|(?=\S)([^|\n]+?)(?<=\S)\|(?!\w)')


def _plain(line):
    "Escape what reST reads as markup in plain docstring prose: `name_` (a reference), |x| (a substitution)."
    parts = re.split(r'(`[^`\n]+`)', line)
    for i in range(0, len(parts), 2):
        parts[i] = _BARS.sub(lambda m: r'\|' + m.group(1) + r'\|', _TRAILING_UNDERSCORE.sub(r'\1\\_', parts[i]))
    return ''.join(parts)


def _docstring_math(app, what, name, obj, options, lines):
    lines[:] = _math_roles('\n'.join(lines)).split('\n')


_SKLEARN_PLUMBING = re.compile(r'^(set_\w+_request|get_metadata_routing|set_output)$')


def _skip_sklearn_plumbing(app, what, name, obj, skip, options):
    "scikit-learn's metadata-routing and set_output methods: documented by scikit-learn, not here."
    return True if _SKLEARN_PLUMBING.match(name) else None


_TAG = re.compile(r'\\tag\*?\{[^{}]*\}')


def _tagged_multiline_math(app, doctree):
    "Sphinx wraps multi-line display math in `split`, where MathJax refuses `\\tag`: wrap it in `aligned` instead."
    from docutils import nodes
    for node in doctree.findall(nodes.math_block):
        tex = node.astext()
        tags = _TAG.findall(tex)
        if len(tags) == 1 and '\\\\' in tex and '\n\n' not in tex.strip() and not node.get('nowrap'):
            body = _TAG.sub('', tex).strip()
            node.children = [nodes.Text(f'\\[\\begin{{aligned}}{body}\\end{{aligned}}{tags[0]}\\]')]
            node['nowrap'] = True


def setup(app):
    app.connect('autodoc-process-docstring', _docstring_math, priority=400)  # before numpydoc (500)
    app.connect('autodoc-skip-member', _skip_sklearn_plumbing)
    app.connect('doctree-read', _tagged_multiline_math)
