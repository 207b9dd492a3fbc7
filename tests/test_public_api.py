"""The public API: the package root re-exports the estimators; every public callable of every module — the
names in its `__all__` — has a numpydoc docstring that documents each of its parameters; the library floor never
imports the papers floor or the experiment infrastructure."""
import ast
import importlib
import inspect
from pathlib import Path

import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc
from sklearn.base import BaseEstimator

import kelm_nb

ROOT = Path(kelm_nb.__file__).resolve().parent
LIBRARY = ['kelm_nb.validation', 'kelm_nb.calibration', 'kelm_nb.core',
           'kelm_nb.kernels', 'kelm_nb.esvr', 'kelm_nb.nu_oelm', 'kelm_nb.mkl',
           'kelm_nb.kos_elm']
MODULES = ['kelm_nb.datasets', 'kelm_nb.experiments', *LIBRARY, 'kelm_nb.bench', 'kelm_nb.cli'] + \
    [f'kelm_nb.papers.{p.stem}' for p in sorted((ROOT / 'papers').glob('*.py')) if p.stem != '__init__']


def _public_callables():
    for mod_name in MODULES:
        mod = importlib.import_module(mod_name)
        for name in getattr(mod, '__all__', []):
            obj = getattr(mod, name)
            if callable(obj) and getattr(obj, '__module__', None) == mod_name:   # defined here, not re-exported
                yield f'{mod_name}.{name}', obj


PUBLIC = dict(_public_callables())


def test_the_root_reexports_every_estimator():
    for mod_name in LIBRARY:
        mod = importlib.import_module(mod_name)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator) and not name.startswith('_') \
                    and obj.__module__ == mod_name and not name.endswith('Mixin'):
                assert getattr(kelm_nb, name, None) is obj, f'kelm_nb.{name} is missing'
                assert name in kelm_nb.__all__


def _documented_names(doc):
    names = set()
    for section in ('Parameters', 'Other Parameters'):
        for p in doc[section]:
            names |= {n.strip().lstrip('*') for n in p.name.split(',')}
    return names


@pytest.mark.parametrize('qualname', sorted(PUBLIC))
def test_numpydoc_docstring_with_every_parameter(qualname):
    obj = PUBLIC[qualname]
    assert inspect.getdoc(obj), f'{qualname} has no docstring'
    if inspect.isclass(obj):
        doc = ClassDoc(obj)
        try:
            params = [] if issubclass(obj, BaseException) else list(inspect.signature(obj).parameters)
        except (TypeError, ValueError):        # a class whose __init__ has no signature
            params = []
    else:
        doc = FunctionDoc(obj)
        try:
            params = list(inspect.signature(obj).parameters)
        except (TypeError, ValueError):        # a compiled function without a signature
            params = []
    params = [p for p in params if p not in ('self', 'cls', 'args', 'kwargs')]
    missing = [p for p in params if p not in _documented_names(doc)]
    assert not missing, f'{qualname}: parameters without a numpydoc entry: {missing}'


@pytest.mark.parametrize('module', LIBRARY)
def test_the_library_floor_never_imports_the_papers_floor(module):
    tree = ast.parse((ROOT / f"{module.split('.')[-1]}.py").read_text())
    imported = {n.module or '' for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | \
        {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    forbidden = [m for m in imported if m.lstrip('.').split('.')[0] in ('papers', 'experiments', 'bench', 'cli')
                 or m.startswith(('kelm_nb.papers', 'kelm_nb.experiments', 'kelm_nb.bench', 'kelm_nb.cli'))]
    assert not forbidden, f'{module} imports {forbidden}'
