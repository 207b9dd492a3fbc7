"""House style that the linter cannot see: lines under 120 characters (nbdev's generated `__all__` aside), no invalid
escape sequences in any module, and no control characters in its strings (a `\\a` in a docstring is a bell
character, not LaTeX)."""
import ast
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*ROOT.glob('kelm_nb/**/*.py'), *ROOT.glob('tests/*.py'), *ROOT.glob('tools/*.py')])
SOURCES = [p for p in SOURCES if p.name != '_modidx.py']


@pytest.mark.parametrize('path', SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_lines_under_120(path):
    long = []
    in_all = False
    for k, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
        in_all = line.startswith('__all__ = ') or (in_all and line.startswith(' ' * 11))
        if len(line) > 120 and not in_all:
            long.append(f'{k}: {line[:60]}...')
    assert not long, f'{len(long)} line(s) over 120 characters in {path.name} (fix the notebook): {long[:5]}'


@pytest.mark.parametrize('path', SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_invalid_escape_sequences(path):
    with warnings.catch_warnings():
        warnings.simplefilter('error', SyntaxWarning)
        compile(path.read_text(encoding='utf-8'), str(path), 'exec')


CONTROL = {chr(7): r'\a', chr(8): r'\b', chr(12): r'\f', chr(11): r'\v'}   # what '\a', '\b', ... become


@pytest.mark.parametrize('path', SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_control_characters_in_strings(path):
    found = [(node.lineno, CONTROL[c]) for node in ast.walk(ast.parse(path.read_text(encoding='utf-8')))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             for c in CONTROL if c in node.value]
    assert not found, f'{path.name}: control characters from escapes (write \\\\ in LaTeX): {found[:5]}'
