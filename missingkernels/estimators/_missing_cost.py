"""What the missing entries cost: the decision once they are observed, its
spread, and the value of measuring one of them.

A fitted estimator knows, for every row, the distribution of its missing
entries given its observed ones (the density behind the kernel). Drawing a
completion ``z`` of the missing block turns the row into a complete row
``x_z``, and the model's decision on it, ``g(z)``, is what the model would say
had the entries been observed (the support vectors' own missing entries are
still averaged over by the kernel). Its distribution over the draws gives the
spread of the decision, its quantiles and the probability that the predicted
class changes. Observing a single entry ``j`` instead leaves a row with one
entry fewer missing, whose decision is the model's ordinary prediction: with
the entry's value drawn from its conditional, the chance that this prediction
differs from today's ranks the missing entries by what measuring them is
worth. Neither needs new kernel algebra, only draws and ordinary predictions;
every density whose conditionals can be sampled serves.

For the kernels that are linear in the distribution of a row (expected RBF,
linear, polynomial, Belanche's, the expected mixed kernel
``expected_mixed_rbf``) the mean of ``g`` over the draws is the model's own
decision. genRBF (and ``mixed_rbf``, normalised the same way) divides each
row by ``sqrt(E k(X, X'))``, which is 1 for a complete row, so the mean of ``g`` is
``b + (f(x) - b) * sqrt(E k(X, X'))`` (``b`` the intercept, and
``E k(X, X') <= 1``): the completed decisions are centred nearer the
intercept than the decision on the incomplete row, which the normaliser
inflated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import validate_missing_data
from ..conditionals._base import check_n_draws
from ._base import with_settings
from ._calibration import calibrated_proba, ovr_from_ovo
from ._scaling import apply_standardization

# Completed rows scored at once (rows x draws): bounds the draws held in memory.
_ROWS_PER_BATCH = 1 << 15


@dataclass(frozen=True)
class _CostRows:
    """New rows as the model reads them, and where they are incomplete."""

    standardized: np.ndarray  # coded and standardised, NaN where missing
    missing: np.ndarray  # (n, d) bool: missing in a column the model uses
    index: Any  # the DataFrame's index, else a RangeIndex

    @property
    def incomplete(self) -> np.ndarray:
        """Indices of the rows with a missing entry the model uses."""
        return np.flatnonzero(self.missing.any(axis=1))


def _check_draws(n_draws: Any, least: int) -> int:
    n_draws = check_n_draws(n_draws)
    if n_draws < least:
        raise ValueError(
            f"n_draws must be at least {least} to estimate a spread, got {n_draws}."
        )
    return n_draws


def _quantiles(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 5% and 95% quantiles over the draws (axis 1)."""
    q = np.quantile(values, [0.05, 0.95], axis=1)
    return q[0], q[1]


class MissingCostMixin:
    """``uncertainty_from_missing``, ``value_of_measuring`` and
    ``plausible_values`` for the kernel SVMs (see the module docstring)."""

    kernel_: Any
    x_center_: np.ndarray | None
    x_scale_: np.ndarray | None
    _encode: Any
    _score_standardized: Any

    # -- rows and draws -------------------------------------------------------
    def _cost_rows(self, X: Any) -> _CostRows:
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "kernel_")
        index = getattr(X, "index", None)
        coded = validate_missing_data(self, X, reset=False, encode=self._encode)
        if index is None or len(index) != len(coded):
            import pandas as pd

            index = pd.RangeIndex(len(coded))
        standardized = apply_standardization(coded, self.x_center_, self.x_scale_)
        missing = np.isnan(standardized)
        missing[:, ~self._used_columns(coded.shape[1])] = False
        return _CostRows(standardized, missing, index)

    def _used_columns(self, d: int) -> np.ndarray:
        """``(d,)`` bool: the columns the kernel reads (not dropped at fit)."""
        used = np.ones(d, dtype=bool)
        kept = getattr(self.kernel_, "_kept_features", None)
        if kept is not None:
            used[:] = False
            used[kept] = True
        return used

    def _completions(
        self, rows: np.ndarray, n_draws: int, random_state: Any
    ) -> np.ndarray:
        """``(n_draws, len(rows), d)`` completed copies of standardised rows,
        the missing entries drawn from the fitted density's conditionals.

        A row's draws depend on that row, ``n_draws`` and ``random_state``
        only (row-keyed streams), so the same rows give the same draws in any
        batch and in every method of this mixin.
        """
        out = np.broadcast_to(rows, (n_draws, *rows.shape)).copy()
        if not len(rows):
            return out
        _, conditionals = self.kernel_._conditionals(rows)
        draws = conditionals.sample(n_draws, random_state).samples
        used = self._used_columns(rows.shape[1])
        out[:, :, used] = draws
        return out

    def _row_batches(self, rows: np.ndarray, per_row: int) -> list[np.ndarray]:
        step = max(1, _ROWS_PER_BATCH // max(per_row, 1))
        return [rows[s : s + step] for s in range(0, len(rows), step)]

    def _in_target_units(self, prediction: np.ndarray) -> np.ndarray:
        center = getattr(self, "y_center_", None)
        if center is None:
            return prediction
        return prediction * self.y_scale_ + center  # type: ignore[attr-defined]

    # -- classification -----------------------------------------------------
    def _class_scores(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One-vs-rest decision values (1-D for two classes) and labels."""
        decision, labels = self._score_standardized(
            X, ("decision_function", "predict"), "uncertainty_from_missing"
        )
        n_classes = len(self.classes_)  # type: ignore[attr-defined]
        ovo = self.route_ == "exact" and (  # type: ignore[attr-defined]
            self.decision_function_shape == "ovo"  # type: ignore[attr-defined]
        )
        if n_classes > 2 and ovo:
            decision = ovr_from_ovo(decision, n_classes)
        return decision, labels

    def _proba(self, decision: np.ndarray) -> np.ndarray | None:
        maps = getattr(self, "_calibration_maps", None)
        if not getattr(self, "probability", False) or maps is None:
            return None
        return calibrated_proba(maps, decision)

    # -- public methods -------------------------------------------------------
    @with_settings
    def uncertainty_from_missing(
        self, X: Any, n_draws: int = 200, random_state: Any = None
    ) -> Any:
        """How uncertain each prediction is because of its missing entries.

        Each incomplete row is completed ``n_draws`` times with values drawn
        from the fitted density's conditional distribution of its missing
        entries given its observed ones; the model's decision on each
        completed row is the decision it would make had those entries been
        observed. The distribution of these completed decisions is summarised
        per row. Complete rows cost nothing: their spread is 0.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows with NaN where missing, as for ``predict``.
        n_draws : int, default=200
            Completions per incomplete row (at least 2). The Monte Carlo
            standard error of a probability ``p`` is ``sqrt(p (1 - p) /
            n_draws)``: at most 0.035 for 200 draws.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws. A row's draws depend on the row and the seed
            only, not on the other rows passed.

        Returns
        -------
        uncertainty : pandas.DataFrame
            One row per row of X (X's index for a DataFrame). Columns:

            - ``n_missing``: missing entries the model uses;
            - classifier, two classes: ``prediction``, ``decision`` (the
              model's decision), ``completed_mean``, ``completed_sd``,
              ``completed_q05``, ``completed_q95`` (of the completed
              decisions) and ``flip_probability`` (the share of completions
              whose predicted class differs from ``prediction``);
            - classifier, more classes: ``prediction``,
              ``change_probability``, and per class ``c``
              ``completed_share_<c>`` (share of completions predicted as
              ``c``) and the one-vs-rest ``decision_<c>``,
              ``completed_mean_<c>``, ``completed_sd_<c>``,
              ``completed_q05_<c>``, ``completed_q95_<c>``;
            - classifier with ``probability=True``: per class ``proba_<c>``,
              ``proba_q05_<c>`` and ``proba_q95_<c>``;
            - regressor: ``prediction``, ``completed_mean``, ``completed_sd``,
              ``completed_q05``, ``completed_q95``, in the target's units.

        Notes
        -----
        For kernels linear in a row's distribution (expected RBF, linear,
        polynomial, Belanche's, ``expected_mixed_rbf``) ``completed_mean``
        estimates the model's decision itself. genRBF and ``mixed_rbf`` divide
        by ``sqrt(E k(X, X'))``, which is 1 for a complete row: their
        ``completed_mean`` estimates
        ``b + (decision - b) * sqrt(E k(X, X'))`` with ``b`` the intercept
        (``E k(X, X') <= 1``, over independent copies of the row): nearer the
        intercept than ``decision``.

        Examples
        --------
        >>> import numpy as np
        >>> from missingkernels import MissingKernelSVC
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(60, 3))
        >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
        >>> X[rng.random(X.shape) < 0.2] = np.nan
        >>> model = MissingKernelSVC(random_state=0).fit(X, y)
        >>> table = model.uncertainty_from_missing(X[:5], random_state=0)
        >>> bool(table["flip_probability"].between(0, 1).all())
        True
        """
        n_draws = _check_draws(n_draws, 2)
        rows = self._cost_rows(X)
        if getattr(self, "_task", "") == "regression":
            return self._regression_uncertainty(rows, n_draws, random_state)
        return self._classification_uncertainty(rows, n_draws, random_state)

    def _completed_scores(
        self, rows: _CostRows, n_draws: int, random_state: Any, score: Any
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``score`` on every completion of the incomplete rows: the rows and
        a list of arrays of shape ``(n_incomplete, n_draws, ...)``."""
        incomplete = rows.incomplete
        d = rows.standardized.shape[1]
        pieces: list[list[np.ndarray]] = []
        for batch in self._row_batches(incomplete, n_draws):
            drawn = self._completions(rows.standardized[batch], n_draws, random_state)
            flat = drawn.transpose(1, 0, 2).reshape(-1, d)  # by row, then draw
            outs = score(flat)
            pieces.append([o.reshape(len(batch), n_draws, *o.shape[1:]) for o in outs])
        if not pieces:
            return incomplete, []
        return incomplete, [np.concatenate(p) for p in zip(*pieces, strict=True)]

    def _classification_uncertainty(
        self, rows: _CostRows, n_draws: int, random_state: Any
    ) -> Any:
        import pandas as pd

        classes = self.classes_  # type: ignore[attr-defined]
        decision, labels = self._class_scores(rows.standardized)
        proba = self._proba(decision)
        incomplete, drawn = self._completed_scores(
            rows, n_draws, random_state, self._class_scores
        )
        two = decision.ndim == 1
        dec = decision[:, None] if two else decision
        mean, sd, q05, q95 = dec.copy(), np.zeros_like(dec), dec.copy(), dec.copy()
        share = (labels[:, None] == classes[None, :]).astype(float)
        changed = np.zeros(len(labels))
        if len(incomplete):
            g, g_labels = drawn
            g = g[:, :, None] if two else g
            mean[incomplete] = g.mean(axis=1)
            sd[incomplete] = g.std(axis=1, ddof=1)
            q05[incomplete], q95[incomplete] = _quantiles(g)
            share[incomplete] = (g_labels[:, :, None] == classes).mean(axis=1)
            changed[incomplete] = (g_labels != labels[incomplete, None]).mean(axis=1)
        columns: dict[str, Any] = {
            "n_missing": rows.missing.sum(axis=1),
            "prediction": labels,
        }
        stats = {
            "decision": dec,
            "completed_mean": mean,
            "completed_sd": sd,
            "completed_q05": q05,
            "completed_q95": q95,
        }
        if two:
            columns.update({name: value[:, 0] for name, value in stats.items()})
            columns["flip_probability"] = changed
        else:
            columns["change_probability"] = changed
            for c, label in enumerate(classes):
                columns[f"completed_share_{label}"] = share[:, c]
            for name, value in stats.items():
                for c, label in enumerate(classes):
                    columns[f"{name}_{label}"] = value[:, c]
        if proba is not None:
            columns.update(self._proba_columns(proba, incomplete, drawn))
        return pd.DataFrame(columns, index=rows.index)

    def _proba_columns(
        self, proba: np.ndarray, incomplete: np.ndarray, drawn: list[np.ndarray]
    ) -> dict[str, np.ndarray]:
        low, high = proba.copy(), proba.copy()
        if len(incomplete):
            g = drawn[0]
            p = self._proba(g.reshape(-1, *g.shape[2:]))
            assert p is not None
            p = p.reshape(len(incomplete), g.shape[1], -1)
            low[incomplete], high[incomplete] = _quantiles(p)
        columns = {}
        for c, label in enumerate(self.classes_):  # type: ignore[attr-defined]
            columns[f"proba_{label}"] = proba[:, c]
            columns[f"proba_q05_{label}"] = low[:, c]
            columns[f"proba_q95_{label}"] = high[:, c]
        return columns

    def _predictions(
        self, X: np.ndarray, label: str = "value_of_measuring"
    ) -> tuple[np.ndarray]:
        """Predictions in the target's units (``label``: the progress bar's)."""
        (prediction,) = self._score_standardized(X, ("predict",), label)
        return (self._in_target_units(prediction),)

    def _uncertainty_predictions(self, X: np.ndarray) -> tuple[np.ndarray]:
        return self._predictions(X, "uncertainty_from_missing")

    def _regression_uncertainty(
        self, rows: _CostRows, n_draws: int, random_state: Any
    ) -> Any:
        import pandas as pd

        (prediction,) = self._uncertainty_predictions(rows.standardized)
        incomplete, drawn = self._completed_scores(
            rows, n_draws, random_state, self._uncertainty_predictions
        )
        mean, sd = prediction.copy(), np.zeros_like(prediction)
        q05, q95 = prediction.copy(), prediction.copy()
        if len(incomplete):
            g = drawn[0]
            mean[incomplete] = g.mean(axis=1)
            sd[incomplete] = g.std(axis=1, ddof=1)
            q05[incomplete], q95[incomplete] = _quantiles(g)
        return pd.DataFrame(
            {
                "n_missing": rows.missing.sum(axis=1),
                "prediction": prediction,
                "completed_mean": mean,
                "completed_sd": sd,
                "completed_q05": q05,
                "completed_q95": q95,
            },
            index=rows.index,
        )

    @with_settings
    def value_of_measuring(
        self, X: Any, n_draws: int = 100, random_state: Any = None
    ) -> Any:
        """What observing each missing entry alone would change.

        For a missing entry ``j`` of a row, ``n_draws`` values are drawn from
        its conditional distribution given the row's observed entries; each
        is filled in (the row's other missing entries stay missing) and the
        model predicts the row as usual. A classifier reports the share of
        these predictions that differ from the row's prediction today: the
        probability that measuring ``j`` alone changes the predicted class.
        A regressor reports the standard deviation of these predictions, in
        the target's units: the part of the prediction's uncertainty that
        measuring ``j`` would resolve.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows with NaN where missing, as for ``predict``.
        n_draws : int, default=100
            Values drawn per missing entry (at least 2).
        random_state : int, RandomState instance or None, default=None
            Seeds the draws (the same completions as
            :meth:`uncertainty_from_missing` and :meth:`plausible_values`
            with the same seed and ``n_draws``).

        Returns
        -------
        value : pandas.DataFrame of shape (n_samples, n_features)
            One column per feature (the feature names), X's index for a
            DataFrame. NaN where the entry is observed; 0 for a missing entry
            of a column the model dropped at fit (``dropped_features_``),
            whose value it ignores. Rank a row's missing entries by it to
            choose what to measure next.

        Examples
        --------
        >>> import numpy as np
        >>> from missingkernels import MissingKernelSVC
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(size=(60, 3))
        >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
        >>> X[rng.random(X.shape) < 0.2] = np.nan
        >>> model = MissingKernelSVC(random_state=0).fit(X, y)
        >>> value = model.value_of_measuring(X[:5], n_draws=50, random_state=0)
        >>> value.shape
        (5, 3)
        """
        import pandas as pd

        n_draws = _check_draws(n_draws, 2)
        rows = self._cost_rows(X)
        X_std = rows.standardized
        d = X_std.shape[1]
        value = np.where(np.isnan(X_std), 0.0, np.nan)
        regression = getattr(self, "_task", "") == "regression"
        (today,) = self._predictions(X_std)
        incomplete = rows.incomplete
        per_row = n_draws * max(1, int(rows.missing.sum(axis=1).max(initial=0)))
        for batch in self._row_batches(incomplete, per_row):
            drawn = self._completions(X_std[batch], n_draws, random_state)
            cells = np.argwhere(rows.missing[batch])  # (position in batch, column)
            filled = np.repeat(X_std[batch][cells[:, 0]], n_draws, axis=0)
            cols = np.repeat(cells[:, 1], n_draws)
            filled[np.arange(len(filled)), cols] = drawn[
                np.tile(np.arange(n_draws), len(cells)),
                np.repeat(cells[:, 0], n_draws),
                cols,
            ]
            (h,) = self._predictions(filled)
            h = h.reshape(len(cells), n_draws)
            if regression:
                worth = h.std(axis=1, ddof=1)
            else:
                base = today[batch][cells[:, 0]]
                worth = (h != base[:, None]).mean(axis=1)
            value[batch[cells[:, 0]], cells[:, 1]] = worth
        return pd.DataFrame(value, columns=self._feature_labels(d), index=rows.index)

    def _feature_labels(self, d: int) -> list[str]:
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            return [str(name) for name in names]
        return [f"x{j}" for j in range(d)]

    @with_settings
    def plausible_values(
        self, X: Any, n_draws: int = 5, random_state: Any = None
    ) -> list[Any]:
        """Completed copies of X, the missing entries drawn from the model's density.

        The draws are those behind :meth:`uncertainty_from_missing` (same
        seed, same draws), returned in the units and codes of X: numeric
        columns unstandardised, nominal columns as their category labels,
        ordered categoricals as the level nearest the drawn rank. Observed
        entries are returned unchanged. This is the model's own multiple
        imputation of X: the SVM itself never imputes.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows with NaN where missing.
        n_draws : int, default=5
            Number of completed copies.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws (see :meth:`uncertainty_from_missing`).

        Returns
        -------
        completions : list of DataFrame or ndarray
            ``n_draws`` copies of X (DataFrames with X's index, columns and
            dtypes where the drawn values fit them, for a DataFrame; arrays
            otherwise). Entries of a column the model dropped at fit
            (``dropped_features_``) stay missing.

        Examples
        --------
        >>> import numpy as np
        >>> from missingkernels import MissingKernelSVC
        >>> rng = np.random.default_rng(0)
        >>> X = rng.normal(loc=100, scale=15, size=(60, 3))
        >>> y = (X[:, 0] > 100).astype(int)
        >>> X[rng.random(X.shape) < 0.2] = np.nan
        >>> model = MissingKernelSVC(random_state=0).fit(X, y)
        >>> copies = model.plausible_values(X[:4], n_draws=3, random_state=0)
        >>> len(copies), bool(np.isnan(copies[0]).any())
        (3, False)
        """
        n_draws = check_n_draws(n_draws)
        rows = self._cost_rows(X)
        incomplete = rows.incomplete
        drawn = self._completions(rows.standardized[incomplete], n_draws, random_state)
        if self.x_center_ is not None:
            drawn = drawn * self.x_scale_ + self.x_center_
        return [
            self._fill(X, incomplete, rows.missing[incomplete], drawn[m])
            for m in range(n_draws)
        ]

    def _fill(
        self, X: Any, rows: np.ndarray, missing: np.ndarray, values: np.ndarray
    ) -> Any:
        """A copy of X with its ``missing`` entries in ``rows`` set to the
        drawn ``values`` (model units), decoded into X's units and codes."""
        encoding = getattr(self, "_table_encoding", None)
        kinds: list[Any] = [None] * values.shape[1]
        if encoding is not None:
            kinds = list(encoding.columns)
        frame = hasattr(X, "iloc") and hasattr(X, "columns")
        out: Any = X.copy() if frame else np.array(X, copy=True)
        if not frame and out.dtype.kind in "biuf":
            out = out.astype(np.float64)
        for j in np.flatnonzero(missing.any(axis=0)):
            where = rows[missing[:, j]]
            drawn = _decode(values[missing[:, j], j], kinds[j])
            if not frame:
                out[where, j] = drawn
                continue
            column = out.iloc[:, j]
            if kinds[j] is None or kinds[j].kind == "numeric":
                if column.dtype.kind != "f":
                    out[out.columns[j]] = column.astype(np.float64)
            out.iloc[where, j] = drawn
        return out


def _decode(values: np.ndarray, column: Any) -> np.ndarray:
    """Drawn values of one column in the column's own units: category labels
    for a nominal column (its codes), the level nearest the drawn rank for an
    ordered one, the numbers otherwise."""
    if column is None or column.kind == "numeric":
        return values
    labels = column.categories
    codes = np.clip(np.rint(values), 0, len(labels) - 1).astype(np.intp)
    out = np.empty(len(codes), dtype=object)
    out[:] = [labels[c] for c in codes]
    return out


# -- the same for pipelines and searches ----------------------------------------------


def _final_model(estimator: Any, X: Any, method: str) -> tuple[Any, Any]:
    """The fitted model that has ``method`` and X as that model receives it:
    a search's best estimator, a pipeline's last step after its other steps
    have transformed X (nested pipelines and searches unwrapped)."""
    from sklearn.pipeline import Pipeline

    model = estimator
    while True:
        if hasattr(model, "best_estimator_"):
            model = model.best_estimator_
        elif isinstance(model, Pipeline):
            head, model = model[:-1], model[-1]
            if len(head):
                X = head.transform(X)
        else:
            break
    if not callable(getattr(model, method, None)):
        raise TypeError(
            f"{method} needs a fitted MissingKernelSVC or MissingKernelSVR (alone, "
            "as the last step of a Pipeline, or as the best estimator of a "
            f"search refitted on all rows); got {type(estimator).__name__} whose "
            f"final model is {type(model).__name__}."
        )
    return model, X


def _on_final_model(
    estimator: Any, X: Any, method: str, n_draws: int, random_state: Any
) -> Any:
    model, X_in = _final_model(estimator, X, method)
    out = getattr(model, method)(X_in, n_draws=n_draws, random_state=random_state)
    index = getattr(X, "index", None)
    relabel = method != "plausible_values" and not hasattr(X_in, "index")
    if relabel and index is not None and len(index) == len(out):
        # A pipeline step returned an array: the rows keep the caller's labels.
        out.index = index
    return out


def uncertainty_from_missing(
    estimator: Any, X: Any, n_draws: int = 200, random_state: Any = None
) -> Any:
    """How uncertain each prediction is because of its missing entries.

    :meth:`MissingKernelSVC.uncertainty_from_missing
    <missingkernels.MissingKernelSVC.uncertainty_from_missing>` (or the
    regressor's) for a fitted estimator, a :class:`~sklearn.pipeline.Pipeline`
    ending in one (X goes through the pipeline's other steps first, which
    must keep NaN), or a fitted search (its ``best_estimator_``).

    Parameters
    ----------
    estimator : fitted estimator, Pipeline or search
        A MissingKernelSVC or MissingKernelSVR, possibly wrapped.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Rows with NaN where missing, as the estimator's ``predict`` takes them.
    n_draws : int, default=200
        Completions per incomplete row (at least 2).
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.

    Returns
    -------
    uncertainty : pandas.DataFrame
        As the method's, indexed by X's index for a DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import FunctionTransformer
    >>> from missingkernels import MissingKernelSVC, uncertainty_from_missing
    >>> rng = np.random.default_rng(0)
    >>> X = rng.lognormal(size=(60, 3))
    >>> y = (X[:, 0] > X[:, 1]).astype(int)
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> pipe = make_pipeline(FunctionTransformer(np.log), MissingKernelSVC())
    >>> table = uncertainty_from_missing(pipe.fit(X, y), X[:4], random_state=0)
    >>> list(table.columns[:3])
    ['n_missing', 'prediction', 'decision']
    """
    return _on_final_model(
        estimator, X, "uncertainty_from_missing", n_draws, random_state
    )


def value_of_measuring(
    estimator: Any, X: Any, n_draws: int = 100, random_state: Any = None
) -> Any:
    """What observing each missing entry alone would change.

    :meth:`MissingKernelSVC.value_of_measuring
    <missingkernels.MissingKernelSVC.value_of_measuring>` (or the
    regressor's) for a fitted estimator, a Pipeline ending in one, or a
    fitted search. Through a pipeline, the columns are the features the last
    step receives (a step that keeps columns one to one keeps their meaning).

    Parameters
    ----------
    estimator : fitted estimator, Pipeline or search
        A MissingKernelSVC or MissingKernelSVR, possibly wrapped.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Rows with NaN where missing.
    n_draws : int, default=100
        Values drawn per missing entry (at least 2).
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.

    Returns
    -------
    value : pandas.DataFrame
        As the method's, indexed by X's index for a DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV
    >>> from missingkernels import MissingKernelSVC, value_of_measuring
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> search = GridSearchCV(MissingKernelSVC(), {"C": [0.5, 2.0]}, cv=3).fit(X, y)
    >>> value_of_measuring(search, X[:4], n_draws=20, random_state=0).shape
    (4, 3)
    """
    return _on_final_model(estimator, X, "value_of_measuring", n_draws, random_state)


def plausible_values(
    estimator: Any, X: Any, n_draws: int = 5, random_state: Any = None
) -> list[Any]:
    """Completed copies of X, the missing entries drawn from the model's density.

    :meth:`MissingKernelSVC.plausible_values
    <missingkernels.MissingKernelSVC.plausible_values>` for a fitted
    estimator, a Pipeline ending in one, or a fitted search. Through a
    pipeline the copies are of the rows the last step receives (in the units
    of the pipeline's other steps' output, which cannot in general be
    inverted).

    Parameters
    ----------
    estimator : fitted estimator, Pipeline or search
        A MissingKernelSVC or MissingKernelSVR, possibly wrapped.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Rows with NaN where missing.
    n_draws : int, default=5
        Number of completed copies.
    random_state : int, RandomState instance or None, default=None
        Seeds the draws.

    Returns
    -------
    completions : list of DataFrame or ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from missingkernels import MissingKernelSVR, plausible_values
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3))
    >>> y = X[:, 0] - X[:, 1]
    >>> X[rng.random(X.shape) < 0.2] = np.nan
    >>> model = MissingKernelSVR().fit(X, y)
    >>> len(plausible_values(model, X[:4], n_draws=2, random_state=0))
    2
    """
    return _on_final_model(estimator, X, "plausible_values", n_draws, random_state)
