"""Every classifier at its default parameters on every bundled classification set, beside a majority vote and
scikit-learn's `SVC()`: accuracy and (for models with `predict_proba`) log loss against `SVC(probability=True)`.

Protocol: each set subsampled (stratified) to at most `--max-rows` rows, standardised inside a pipeline, scored by
stratified 5-fold cross-validation with shuffled folds (seed 0). A default passes when its mean accuracy is at least
the majority rate and at most 3 points below `SVC()`'s; its log loss, where it has one, is within 10 % of
`SVC(probability=True)`'s.

    python tools/defaults_check.py                    # all classifiers, all sets
    python tools/defaults_check.py --estimators NuOELMClassifier --sets sonar balance
"""
import argparse
import sys
import time
import warnings

import numpy as np
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import StratifiedKFold, cross_validate, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

import kelm_nb
from kelm_nb.datasets import list_datasets, load_dataset

CLASSIFIERS = ['ELMClassifier', 'KernelELMClassifier', 'OELMClassifier', 'NuOELMClassifier', 'NuOELMClassifierCV',
               'MKLELMClassifier', 'OSELMClassifier', 'KOSELMClassifier']
ACCURACY_MARGIN = 0.03      # at most 3 points below SVC()
LOG_LOSS_RATIO = 1.10       # at most 10 % above SVC(probability=True)


def classification_sets():
    "Names of the bundled classification sets."
    return [d['name'] for d in list_datasets() if d['task'] != 'regression']


def load_small(name, max_rows, seed=0):
    "The set `name`, stratified-subsampled to at most `max_rows` rows."
    X, y = load_dataset(name)
    if len(y) > max_rows:
        X, _, y, _ = train_test_split(X, y, train_size=max_rows, stratify=y, random_state=seed)
    return X, y


def cv_scores(estimator, X, y, proba, seed=0):
    "Mean accuracy and (with `proba`) mean log loss over stratified 5-fold CV of `estimator` after standardising."
    cv = StratifiedKFold(5, shuffle=True, random_state=seed)
    scoring = ['accuracy', 'neg_log_loss'] if proba else ['accuracy']
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        res = cross_validate(make_pipeline(StandardScaler(), estimator), X, y, cv=cv, scoring=scoring,
                             error_score='raise')
    loss = -res['test_neg_log_loss'].mean() if proba else np.nan
    return res['test_accuracy'].mean(), loss


def check_set(name, estimators, max_rows):
    "One row per estimator on the set `name`: accuracy, majority rate, SVC accuracy, log losses and verdicts."
    X, y = load_small(name, max_rows)
    majority, _ = cv_scores(DummyClassifier(), X, y, proba=False)
    svc_acc, _ = cv_scores(SVC(), X, y, proba=False)
    _, svc_loss = cv_scores(SVC(probability=True, random_state=0), X, y, proba=True)
    rows = []
    for est_name in estimators:
        est = getattr(kelm_nb, est_name)()
        proba = hasattr(est, 'predict_proba')
        t0 = time.process_time()
        acc, loss = cv_scores(est, X, y, proba)
        ok_acc = acc >= majority - 1e-12 and acc >= svc_acc - ACCURACY_MARGIN
        ok_loss = proba and loss <= LOG_LOSS_RATIO * svc_loss
        rows.append(dict(set=name, estimator=est_name, n=len(y), accuracy=acc, majority=majority, svc=svc_acc,
                         log_loss=loss, svc_log_loss=svc_loss, ok_accuracy=ok_acc, ok_log_loss=ok_loss,
                         cpu_s=time.process_time() - t0))
    return rows


def _print_row(r):
    flag = ('ok ' if r['ok_accuracy'] else 'LOW') + ' ' + ('ok ' if r['ok_log_loss'] else 'BAD')
    print(f"{r['set']:16s} {r['estimator']:20s} n={r['n']:5d} acc {r['accuracy']:.3f} maj {r['majority']:.3f} "
          f"svc {r['svc']:.3f}  logloss {r['log_loss']:.3f} svc {r['svc_log_loss']:.3f}  {flag}  "
          f"{r['cpu_s']:.1f} CPU-s", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--estimators', nargs='+', default=CLASSIFIERS, choices=CLASSIFIERS)
    parser.add_argument('--sets', nargs='+', default=None)
    parser.add_argument('--max-rows', type=int, default=1000)
    args = parser.parse_args(argv)
    rows = []
    for name in args.sets or classification_sets():
        for r in check_set(name, args.estimators, args.max_rows):
            _print_row(r)
            rows.append(r)
    failed = [r for r in rows if not (r['ok_accuracy'] and r['ok_log_loss'])]
    print(f'{len(rows) - len(failed)} of {len(rows)} pass (accuracy and log loss)')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
