"Every public callable of kelm_nb.kernels and kelm_nb.papers.frenay2011 has a numpydoc docstring with its sections."
import inspect
import re

import pytest

from kelm_nb import kernels
from kelm_nb.papers import frenay2011

MODULES = [kernels, frenay2011]
PUBLIC = [(m.__name__, name, getattr(m, name)) for m in MODULES for name in m.__all__ if callable(getattr(m, name))]


def _sections(doc):
    "Names of the numpydoc sections of a docstring (a title line followed by a line of dashes)."
    return set(re.findall(r'^\s*([A-Z][A-Za-z ]+)\n\s*-{3,}\s*$', doc or '', flags=re.M))


def _documented_parameters(doc):
    "Parameter names of a Parameters section, including 'a, b : type' lines."
    text = doc.split('Parameters')[1]
    text = re.split(r'\n\s*(Returns|Attributes|Examples|Notes|Yields)\n\s*-{3,}', text)[0]
    names = set()
    for line in text.splitlines():
        m = re.match(r'^([A-Za-z_][\w, ]*?)(\s*:.*)?$', line)     # getdoc dedents: names start the line
        if m:
            names.update(n.strip() for n in m.group(1).split(','))
    return names


@pytest.mark.parametrize('module, name, obj', PUBLIC, ids=[f'{m}.{n}' for m, n, _ in PUBLIC])
def test_numpydoc_sections(module, name, obj):
    doc = inspect.getdoc(obj)
    assert doc and len(doc.splitlines()[0]) > 10, f'{module}.{name} has no summary line'
    sections = _sections(doc)
    needed = {'Parameters', 'Attributes', 'Examples'} if inspect.isclass(obj) else {'Returns', 'Examples'}
    if inspect.isclass(obj) or inspect.signature(obj).parameters:
        needed.add('Parameters')
    assert needed <= sections, f'{module}.{name} lacks {sorted(needed - sections)}'
    params = [p for p in inspect.signature(obj).parameters if p not in ('self', 'args', 'kwargs')]
    if params:
        missing = set(params) - _documented_parameters(doc)
        assert not missing, f'{module}.{name} does not document {sorted(missing)}'


@pytest.mark.parametrize('cls', [kernels.ELMKernelSVR, kernels.AsymptoticELMKernel, frenay2011.KernelRun])
def test_public_methods_documented(cls):
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        if name.startswith('_') or member.__module__ != cls.__module__:
            continue
        doc = inspect.getdoc(member)
        assert doc, f'{cls.__name__}.{name} has no docstring'
        params = [p for p in inspect.signature(member).parameters if p != 'self']
        if params:
            assert 'Parameters' in _sections(doc), f'{cls.__name__}.{name} lacks Parameters'


def test_doctests_pass():
    import doctest
    for module in MODULES:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, f'{module.__name__}: {result.failed} doctest failures'
        assert result.attempted > 10
