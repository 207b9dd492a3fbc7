"""Notebook kernels that load the package's compiled code from numba's cache instead of compiling it again.

A method notebook defines the numba kernels that ``nbdev_export`` copies into the package, and its checks compile
them: with an empty IPython cache that is the compilation the package's kernels already went through when an earlier
test used them (some 37 CPU-s for ``07_kos_elm``, 22 for ``06_mkl``, 13 for ``03_kernels``).
``share_exported_caches(module)`` lets every ``cache=True`` kernel the notebook defines load the cache entries of
its exported twin in ``module`` when the twin is the same kernel: the same source, the same numba options and, for
every global it reads, the same value (the same object, an equal constant, a kernel that is the same in turn, or a
NamedTuple class of the same name, fields and field types, which compiled code builds alike).
Anything else, a notebook that changes a constant before compiling included, compiles the notebook's own code. numba
keys entries by the types of the arguments (a class the notebook defines is not the package's) and the CPU. A twin's
entry whose result holds a named tuple is not used: the notebook would get instances of the package's class.

What the notebook compiles itself it saves to its own cache only: a cache entry records the module whose globals its
compiled code sees at run time (``__main__`` for a notebook), so an entry the notebook saved would leave the package's
kernel with the wrong globals.
"""
import dis
import inspect
import types

import numpy as np

__all__ = ['share_exported_caches', 'same_kernel']


def _global_names(code):
    "The global names a code object and the code objects nested in it read (attribute names are not globals)."
    names = {ins.argval for ins in dis.get_instructions(code) if ins.opname in ('LOAD_GLOBAL', 'LOAD_NAME')}
    for const in code.co_consts:
        if isinstance(const, types.CodeType): names |= _global_names(const)
    return names


def _source(obj):
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return None


def _is_named_tuple(cls):
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, '_fields')


def _same_named_tuple(a, b, seen):
    """Two NamedTuple classes that compiled code builds alike: the same name, fields, field types and defaults, and
    no function of their own that differs. (A class defined in a cell has no source that `inspect` can read.)"""
    own = lambda cls: {k: v for k, v in vars(cls).items() if isinstance(v, types.FunctionType)}
    shape = lambda cls: (cls.__name__, cls._fields, cls._field_defaults, cls.__bases__, cls.__annotations__)
    if shape(a) != shape(b): return False
    fa, fb = own(a), own(b)
    return fa.keys() == fb.keys() and all(_same_function(fa[k], fb[k], seen) for k in fa)


def _same_value(a, b, seen):
    "Whether a global of the notebook (`a`) and of the module (`b`) are the same for compiled code."
    if a is b: return True
    if type(a) is not type(b): return False
    if _is_named_tuple(a) and _is_named_tuple(b): return _same_named_tuple(a, b, seen)
    if hasattr(a, 'py_func'): return _same_dispatcher(a, b, seen)
    if hasattr(a, '_defn'): return _same_function(a._defn, b._defn, seen)          # a numba intrinsic
    if isinstance(a, types.FunctionType): return _same_function(a, b, seen)
    if isinstance(a, np.ndarray): return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    try:
        return bool(a == b)
    except Exception:                     # a comparison that is not a plain truth value: not the same
        return False


def _same_function(f, g, seen):
    "Whether two Python functions have the same source and read the same globals."
    key = (id(f), id(g))
    if key in seen: return True
    seen.add(key)
    src = _source(f)
    if src is None or src != _source(g): return False
    for name in _global_names(f.__code__):
        in_f, in_g = name in f.__globals__, name in g.__globals__
        if in_f != in_g: return False
        if in_f and not _same_value(f.__globals__[name], g.__globals__[name], seen): return False
    return True


def _same_dispatcher(a, b, seen):
    "Two numba dispatchers: the same options (fastmath, inline, ...: set where they are decorated) and functions."
    return a.targetoptions == b.targetoptions and _same_function(a.py_func, b.py_func, seen)


def same_kernel(f, g):
    """Whether the Python functions `f` (the notebook's) and `g` (the package's) compile to the same code: the same
    source, and every global they read the same (see the module docstring)."""
    return _same_function(f, g, set())


def _holds_named_tuple(numba_type):
    "Whether a numba type is a named tuple or a tuple holding one."
    from numba.core import types as nbtypes
    if isinstance(numba_type, nbtypes.BaseNamedTuple): return True
    return isinstance(numba_type, nbtypes.BaseTuple) and any(_holds_named_tuple(t) for t in numba_type.types)


class _TwinCache:
    """The cache of a notebook kernel: loads from its exported twin's cache when the twin is the same kernel (decided
    at the first load, once every global the kernel reads is defined), else from its own; saves to its own."""

    def __init__(self, dispatcher, own, module):
        self._dispatcher, self._own, self._module, self._twin = dispatcher, own, module, None

    def _twin_cache(self):
        if self._twin is None:
            from numba.core.caching import FunctionCache
            f = self._dispatcher.py_func
            twin = getattr(self._module, f.__name__, None)
            same = twin is not None and hasattr(twin, 'py_func') and _same_dispatcher(self._dispatcher, twin, set())
            self._twin = FunctionCache(twin.py_func) if same else False
        return self._twin

    def load_overload(self, sig, target_context):
        twin = self._twin_cache()
        found = twin.load_overload(sig, target_context) if twin else None
        if found is not None and _holds_named_tuple(found.signature.return_type):
            found = None                   # it would hand the notebook instances of the package's class
        return self._own.load_overload(sig, target_context) if found is None else found

    def __getattr__(self, name):               # save_overload, flush, cache_path, ...: the kernel's own cache
        return getattr(self._own, name)


def share_exported_caches(module):
    """From now on, every `cache=True` numba kernel defined outside a source file (a notebook cell) uses the cache of
    the kernel of the same name in `module` when that one is the same kernel (`same_kernel`). Returns a function
    that undoes this."""
    from numba.core.dispatcher import Dispatcher
    enable = Dispatcher.enable_caching

    def enable_caching(self):
        enable(self)
        if inspect.getfile(self.py_func).startswith('<'):      # defined in a cell, not in a module file
            self._cache = _TwinCache(self, self._cache, module)

    Dispatcher.enable_caching = enable_caching
    return lambda: setattr(Dispatcher, 'enable_caching', enable)
