"""`exported_kernels.same_kernel`: a notebook kernel shares its exported twin's compiled code only when both are the
same kernel (the same source, the same globals)."""
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from exported_kernels import same_kernel  # noqa: E402

SOURCE = '''
import numpy as np
from numba import njit
SCALE = {scale}
TABLE = np.arange(3.0)

@njit(cache=False)
def inner(x):
    return SCALE * x + TABLE[1]

@njit(cache=False)
def outer(x):
    return inner(x) + np.sqrt(x)
'''


def _module(name, source):
    "A module made from `source` (the linecache entry lets `inspect.getsource` read it, as for a notebook cell)."
    import linecache
    filename = f'<ipython-input-{name}>'          # how IPython names a cell's code
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = types.ModuleType(name)
    exec(compile(source, filename, 'exec'), module.__dict__)
    return module


def test_the_same_source_and_globals_are_the_same_kernel():
    a, b = _module('nb_a', SOURCE.format(scale=2.0)), _module('pkg_a', SOURCE.format(scale=2.0))
    assert same_kernel(a.outer.py_func, b.outer.py_func)


def test_a_changed_constant_of_a_callee_is_not_the_same_kernel():
    a, b = _module('nb_b', SOURCE.format(scale=2.0)), _module('pkg_b', SOURCE.format(scale=3.0))
    assert not same_kernel(a.inner.py_func, b.inner.py_func)
    assert not same_kernel(a.outer.py_func, b.outer.py_func)     # through the callee


def test_a_changed_array_or_source_is_not_the_same_kernel():
    a, b = _module('nb_c', SOURCE.format(scale=2.0)), _module('pkg_c', SOURCE.format(scale=2.0))
    b.TABLE = b.TABLE + 1
    assert not same_kernel(a.inner.py_func, b.inner.py_func)
    c = _module('pkg_d', SOURCE.format(scale=2.0).replace('+ np.sqrt(x)', '- np.sqrt(x)'))
    assert not same_kernel(a.outer.py_func, c.outer.py_func)


def test_a_cell_kernel_loads_its_twins_compiled_code(tmp_path, monkeypatch):
    "A kernel defined outside a file loads the entry its exported twin saved; a changed one compiles its own."
    import importlib
    from exported_kernels import share_exported_caches
    (tmp_path / 'xdg').mkdir()
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path / 'xdg'))       # the cells' own (IPython) cache, empty
    import numba.core.config
    monkeypatch.setattr(numba.core.config, 'CACHE_DIR', str(tmp_path / 'cache'))
    source = SOURCE.format(scale=2.0).replace('cache=False', 'cache=True')
    (tmp_path / 'twin_pkg.py').write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    pkg = importlib.import_module('twin_pkg')
    assert pkg.outer(4.0) == 2.0 * 4.0 + 1.0 + 2.0           # compiled and saved by the package's kernel
    undo = share_exported_caches(pkg)
    try:
        same = _module('cell_same', source)
        changed = _module('cell_changed', source.replace('SCALE = 2.0', 'SCALE = 5.0'))
        assert same.outer(4.0) == pkg.outer(4.0) and changed.outer(4.0) == 5.0 * 4.0 + 1.0 + 2.0
    finally:
        undo()
    assert sum(same.outer._cache_hits.values()) == 1 and not same.outer._cache_misses
    assert not changed.outer._cache_hits and sum(changed.outer._cache_misses.values()) == 1


def test_other_numba_options_are_not_the_same_kernel():
    "Options are evaluated where a kernel is decorated, outside its code: a changed one is caught all the same."
    source = SOURCE.format(scale=2.0).replace('@njit(cache=False)\ndef inner',
                                              '@njit(cache=False, fastmath=FAST)\ndef inner')
    a = _module('nb_e', 'FAST = False\n' + source)
    b = _module('pkg_e', 'FAST = True\n' + source)
    assert not same_kernel(a.outer.py_func, b.outer.py_func)
    assert same_kernel(a.outer.py_func, _module('pkg_f', 'FAST = False\n' + source).outer.py_func)


def test_a_notebook_global_named_like_an_attribute_does_not_matter():
    "`np.sqrt` reads the global `np`, not a global `sqrt`: a notebook that defines one still shares."
    a, b = _module('nb_g', 'sqrt = None\n' + SOURCE.format(scale=2.0)), _module('pkg_g', SOURCE.format(scale=2.0))
    assert same_kernel(a.outer.py_func, b.outer.py_func)


NAMED = '''
from typing import NamedTuple
from numba import njit

class Cfg(NamedTuple):
    scale: {kind}
    shift: float

@njit(cache=False)
def apply(x, config):
    cf = Cfg(*config)
    return cf.scale * x + cf.shift
'''


def test_a_named_tuple_class_of_the_same_fields_is_the_same():
    """A NamedTuple the cell defines again, with the same name, fields and field types, builds the same compiled
    struct; a changed field type or an added method is a different class."""
    a, b = _module('nb_n', NAMED.format(kind='float')), _module('pkg_n', NAMED.format(kind='float'))
    assert a.Cfg is not b.Cfg and same_kernel(a.apply.py_func, b.apply.py_func)
    c = _module('pkg_o', NAMED.format(kind='int'))
    assert not same_kernel(a.apply.py_func, c.apply.py_func)
    d = _module('pkg_p', NAMED.format(kind='float').replace('    shift: float\n',
                                                            '    shift: float\n\n    def twice(self): return 2\n'))
    assert not same_kernel(a.apply.py_func, d.apply.py_func)


def test_a_result_holding_a_named_tuple_is_not_taken_from_the_twin():
    "Such a result would be an instance of the package's class: the notebook compiles that kernel itself."
    from numba import typeof
    from exported_kernels import _holds_named_tuple
    value = _module('nb_q', NAMED.format(kind='float')).Cfg(1.0, 2.0)
    assert _holds_named_tuple(typeof(value)) and _holds_named_tuple(typeof((1.0, value)))
    assert not _holds_named_tuple(typeof((1.0, 2))) and not _holds_named_tuple(typeof(1.0))
