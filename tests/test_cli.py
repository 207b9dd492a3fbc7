"""`kelm-nb`: datasets listing, argument errors, `reproduce` (with stand-in paper modules, so it stays fast), the
warm-up, `python -m kelm_nb`, and a start that loads none of the heavy modules."""
import inspect
import re
import subprocess
import sys
import types

import pytest

from kelm_nb import cli
from kelm_nb.cli import main
from kelm_nb.experiments import PAPERS, Paper
from kelm_nb.datasets import list_datasets


def test_datasets_lists_every_set(capsys):
    assert main(['datasets']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[0] == 'name'
    names = [d['name'] for d in list_datasets()]
    listed = [line.split()[0] for line in lines[2:] if line.strip()]
    assert listed == names
    assert 'calhousing' in listed and 'wdbc' in listed


@pytest.mark.parametrize('argv', [[], ['frobnicate'], ['datasets', '--bogus'], ['bench', '--frob'],
                                  ['reproduce', '--n-jobs', '0'], ['reproduce', '--n-jobs', 'two'],
                                  ['reproduce', '--random-state', '-1']])
def test_bad_arguments(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert 'usage: kelm-nb' in err


def test_help_and_version(capsys):
    assert main(['--help']) == 0
    assert 'reproduce' in capsys.readouterr().out
    assert main(['--version']) == 0
    assert 'kelm_nb' in capsys.readouterr().out


def test_reproduce_unknown_paper(capsys):
    assert main(['reproduce', 'nobody1999']) != 0
    err = capsys.readouterr().err
    assert 'nobody1999' in err and 'frenay2011' in err and 'usage: kelm-nb reproduce' in err


def test_paper_keys():
    assert set(PAPERS) == {'frenay2011', 'zhu2014', 'ding2017', 'li2014', 'scardapane2015'}
    assert {p.method for p in PAPERS.values()} == {'kelm_nb.kernels', 'kelm_nb.esvr', 'kelm_nb.nu_oelm',
                                                    'kelm_nb.mkl', 'kelm_nb.kos_elm'}
    assert all(p.module == f'kelm_nb.papers.{p.key}' for p in PAPERS.values())


@pytest.mark.parametrize('key', sorted(PAPERS))
def test_available_reproduce_has_the_agreed_signature(key):
    "Every paper module exists and has reproduce(full=False, n_jobs=1, random_state=0)."
    func, reason = cli.load_reproduce(key)
    assert func is not None, reason
    params = inspect.signature(func).parameters
    for name, default in [('full', False), ('n_jobs', 1), ('random_state', 0)]:
        assert name in params and params[name].default == default, (name, params)


@pytest.fixture
def fake_papers(monkeypatch):
    "Replace the paper map by stand-ins: one working, one failing, one without reproduce, one whose module is absent."
    from kelm_nb.experiments import ReproductionTable
    calls = []
    def reproduce(full=False, n_jobs=1, random_state=0):
        calls.append((full, n_jobs, random_state))
        return [ReproductionTable('TABLE one').add('r', ours=1.0), ReproductionTable('TABLE two').add('r', ours=2.0)]
    def reproduce_bad(full=False, n_jobs=1, random_state=0): raise RuntimeError('reproduction exploded')
    modules = {'good2020': types.SimpleNamespace(reproduce=reproduce),
               'bad2020': types.SimpleNamespace(reproduce=reproduce_bad),
               'empty2020': types.SimpleNamespace()}
    for key, m in modules.items(): monkeypatch.setitem(sys.modules, f'kelm_nb.papers.{key}', m)
    papers = {k: Paper(k, f'{k} et al.', f'kelm_nb._fake_{k}') for k in ('good2020', 'bad2020', 'empty2020',
                                                                         'missing2020')}
    monkeypatch.setattr(cli, 'PAPERS', papers)
    return calls


def test_reproduce_available_paper(fake_papers, capsys):
    assert main(['reproduce', 'good2020', '--n-jobs', '2', '--random-state', '7']) == 0
    out = capsys.readouterr().out
    assert 'TABLE one' in out and 'TABLE two' in out and 'good2020' in out and 'quick mode' in out
    assert fake_papers == [(False, 2, 7)]
    assert main(['reproduce', '_fake_good2020', '--full']) == 0  # the method module's name works too
    assert fake_papers[-1] == (True, 1, 0)
    assert 'full protocol' in capsys.readouterr().out



@pytest.fixture
def warm_here(monkeypatch):
    "Run the warm-up's units in this process (the stand-in papers live here only); records the n_jobs asked for."
    asked, run = [], cli._run_warm_units

    def run_here(units, n_jobs):
        asked.append(n_jobs)
        return run(units, 1)

    monkeypatch.setattr(cli, '_run_warm_units', run_here)
    return asked


def test_reproduce_with_workers_warms_up_the_papers_estimators_first(fake_papers, capsys, monkeypatch, warm_here):
    """With worker processes the estimators a paper's module imports are warmed up once, first, on the paper's
    workers; not without."""
    warmed = []
    monkeypatch.setattr(cli, '_warm', lambda name, *data: warmed.append(name))
    monkeypatch.setattr(sys.modules['kelm_nb.papers.good2020'], 'ELMRegressor', object(), raising=False)
    assert main(['reproduce', 'good2020', '--n-jobs', '2', '--no-progress']) == 0
    assert warmed == ['ELMRegressor'] and warm_here == [2]
    assert 'compiled for the worker processes: ELMRegressor' in capsys.readouterr().err
    assert main(['reproduce', 'good2020', '--no-progress']) == 0   # one process: it compiles what it uses
    assert warmed == ['ELMRegressor'] and 'compiled for' not in capsys.readouterr().err

def test_reproduce_with_workers_calls_the_papers_warm_up(fake_papers, capsys, monkeypatch, warm_here):
    "A paper module's own `warm_up` runs once before its tasks go to worker processes; not without workers."
    called = []
    monkeypatch.setattr(sys.modules['kelm_nb.papers.good2020'], 'warm_up', lambda: called.append(1), raising=False)
    assert main(['reproduce', 'good2020', '--n-jobs', '2', '--no-progress']) == 0
    assert called == [1] and '.warm_up' in capsys.readouterr().err
    assert main(['reproduce', 'good2020', '--no-progress']) == 0
    assert called == [1]


def test_the_papers_warm_ups():
    from kelm_nb.papers import frenay2011, li2014
    assert cli._paper_warm_up('li2014') is li2014.warm_up and cli._paper_warm_up('frenay2011') is frenay2011.warm_up
    assert cli._paper_warm_up('zhu2014') is None


@pytest.mark.parametrize('key', ['missing2020', 'empty2020'])
def test_reproduce_missing_paper(fake_papers, capsys, key):
    assert main(['reproduce', key]) == 1
    err = capsys.readouterr().err
    assert key in err and ('does not exist' in err or 'has no reproduce' in err)


def test_reproduce_failing_paper(fake_papers, capsys):
    assert main(['reproduce', 'bad2020']) == 1
    err = capsys.readouterr().err
    assert 'reproduction exploded' in err and 'failed: bad2020' in err


def test_reproduce_all(fake_papers, capsys, monkeypatch):
    assert main(['reproduce', 'all']) == 1  # bad2020 fails, two are missing
    captured = capsys.readouterr()
    assert 'TABLE one' in captured.out and 'missing2020' in captured.err and 'empty2020' in captured.err
    for key in ('bad2020', 'missing2020', 'empty2020'): monkeypatch.delitem(cli.PAPERS, key)
    assert main(['reproduce']) == 0  # 'all' by default
    assert 'TABLE two' in capsys.readouterr().out


def test_reproduce_out_writes_and_resumes(fake_papers, capsys, tmp_path):
    import json
    assert main(['reproduce', 'good2020', '--out', str(tmp_path), '--no-progress']) == 0
    summary = json.loads((tmp_path / 'summary.json').read_text())
    assert summary['papers'][0]['key'] == 'good2020' and summary['papers'][0]['status'] == 'ok'
    assert (tmp_path / 'good2020' / 'table-one.csv').read_text().splitlines()[1] == 'r,,1.0,,,,'
    assert (tmp_path / 'index.html').read_text().count('<table>') == 2


def test_reproduce_list(fake_papers, capsys):
    assert main(['reproduce', '--list']) == 0
    out = capsys.readouterr().out
    assert 'good2020' in out and 'available' in out and 'does not exist' in out and 'optional' in out


def test_import_error_inside_a_paper_module_is_not_hidden(monkeypatch, capsys):
    "A paper module that exists but fails to import (a bug) is a failure, not 'not available'."
    monkeypatch.setattr(cli, 'PAPERS', {'broken2020': Paper('broken2020', 'x', 'kelm_nb._fake_importerror')})
    def fail_import(name, *a, **k):
        raise ModuleNotFoundError("No module named 'some_dependency'", name='some_dependency')
    monkeypatch.setattr(cli.importlib, 'import_module', fail_import)
    with pytest.raises(ModuleNotFoundError, match='some_dependency'):
        main(['reproduce', 'broken2020'])


def test_console_script_datasets(console_script):
    proc = subprocess.run([console_script, 'datasets'], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert 'calhousing' in proc.stdout
    proc = subprocess.run([console_script, 'reproduce', 'nobody1999'], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and 'usage' not in proc.stdout and 'nobody1999' in proc.stderr


def test_reproduce_progress_line_and_no_progress(fake_papers, capsys):
    "A progress line per paper on standard error (a plain line off a terminal); --no-progress silences it."
    assert main(['reproduce', 'good2020']) == 0
    err = capsys.readouterr().err
    assert 'good2020: 0/0 tasks, ' in err and 'elapsed, ETA' in err and '\r' not in err
    assert main(['reproduce', 'good2020', '--no-progress']) == 0
    assert 'tasks' not in capsys.readouterr().err


def test_docs_is_not_a_subcommand(capsys):
    "The package never loads repository tooling: the docs are built by the checkout's own tools."
    assert main(['docs']) == 2
    assert "invalid choice: 'docs'" in capsys.readouterr().err


def test_warmup(capsys):
    "Two workers: every unit reports once, each estimator and the fixed-budget fit by name."
    assert main(['warmup', 'ELMRegressor', 'KOSELMClassifier', 'GaussianKernelBank', '--n-jobs', '2']) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith('warmup: ')]
    assert sorted(line.split()[1] for line in lines) == ['1/4', '2/4', '3/4', '4/4'] and 'failed' not in str(lines)
    for label in ('ELMRegressor', 'KOSELMClassifier', 'KOSELMClassifier (fixed budget)', 'GaussianKernelBank'):
        assert sum(bool(re.search(rf'[ ,]{re.escape(label)} \(\d', line)) for line in lines) == 1, (label, lines)
    assert main(['warmup', 'NotAnEstimator']) == 2
    assert 'unknown estimator(s) NotAnEstimator' in capsys.readouterr().err


def _fresh(code):
    "Run `code` in a fresh interpreter; its stdout and the CPU seconds it used (user + system)."
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def test_help_loads_no_heavy_module_and_is_fast():
    heavy = ('numpy', 'scipy', 'sklearn', 'numba', 'joblib', 'kelm_nb.experiments', 'kelm_nb.core')
    out, cpu = _fresh("import sys, contextlib, io\nfrom kelm_nb.cli import main\n"
                      "with contextlib.redirect_stdout(io.StringIO()): main(['--help'])\n"
                      f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
    assert out.strip() == '[]', out
    assert cpu <= 1.0, f'kelm-nb --help took {cpu:.2f} CPU-s'


def test_package_root_is_lazy_and_complete():
    out, _ = _fresh("import sys, kelm_nb\nprint('numba' in sys.modules)\nfrom kelm_nb import *\n"
                    "from kelm_nb.core import KERNELS\n"
                    "print(all(getattr(kelm_nb, n).__name__ == n for n in kelm_nb.__all__), sorted(KERNELS))")
    lazy, complete = out.splitlines()
    assert lazy == 'False'
    assert complete.startswith('True') and "'asymptotic'" in complete and "'rbf'" in complete


def test_kernels_are_registered_after_a_direct_core_import():
    out, _ = _fresh("from kelm_nb.core import KERNELS\nprint(sorted(KERNELS))")
    assert out.strip() == "['asymptotic', 'elm', 'laplacian', 'linear', 'poly', 'rbf']"


@pytest.mark.parametrize('module', ['kelm_nb', 'kelm_nb.cli'])
def test_python_dash_m(module):
    proc = subprocess.run([sys.executable, '-m', module, 'reproduce', 'nobody1999'], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2 and 'nobody1999' in proc.stderr and 'usage: kelm-nb' in proc.stderr
    proc = subprocess.run([sys.executable, '-m', module, '--help'], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.startswith('usage: kelm-nb') and 'warmup' in proc.stdout
