"""Tables whose columns used to be read silently wrong."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from missingkernels import MissingKernelSVC, MissingKernelTransformer


def _frame(rng, n=60):
    x = rng.normal(size=n)
    y = (x + 0.3 * rng.normal(size=n) > 0).astype(int)
    return pd.DataFrame({"x": x}), y


def test_a_datetime_column_is_refused_with_the_remedy(rng):
    X, y = _frame(rng)
    X["when"] = pd.date_range("2020-01-01", periods=len(X), freq="D")
    with pytest.raises(ValueError, match=r"feature 'when' holds dates.*\.dt\.days"):
        MissingKernelSVC().fit(X, y)
    X["when"] = X["when"] - X["when"].min()  # a timedelta column
    with pytest.raises(ValueError, match="feature 'when' holds dates or times"):
        MissingKernelSVC().fit(X, y)
    A = np.array(["2020-01-01", "2020-02-01"] * 30, dtype="datetime64[D]")
    with pytest.raises(ValueError, match="holds dates or times"):
        MissingKernelSVC().fit(A[:, None], y)


def test_numbers_written_as_text_warn_when_they_look_like_measurements(rng):
    X, y = _frame(rng)
    X["weight"] = [f"{v:.2f}" for v in rng.normal(70, 10, len(X))]
    with pytest.warns(UserWarning, match=r"feature 'weight' holds only numbers"):
        clf = MissingKernelSVC().fit(X, y)
    assert clf.is_nominal_.tolist() == [False, True]
    # Converted, or declared numeric, it is a number again (no warning).
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        numeric = MissingKernelSVC(nominal_features=None).fit(X, y)
    assert numeric.is_nominal_.tolist() == [False, False]
    np.testing.assert_allclose(numeric.x_center_[1], pd.to_numeric(X["weight"]).mean())
    # Few integer codes written as text are taken as categories silently.
    X["grade"] = rng.choice(["1", "2", "3"], len(X))
    X = X.drop(columns="weight")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        assert MissingKernelSVC().fit(X, y).is_nominal_.tolist() == [False, True]


def test_true_and_one_are_different_categories(rng):
    X, y = _frame(rng, n=60)
    col = np.empty(60, dtype=object)
    col[:] = [True, 1, "x"] * 20
    X["mixed"] = col
    clf = MissingKernelSVC(nominal_features=["mixed"]).fit(X, y)
    assert len(clf.nominal_categories_[1]) == 3
    # The codes of the training rows (the transformer keeps them all).
    codes = MissingKernelTransformer(nominal_features=["mixed"]).fit(X).X_fit_[:, 1]
    assert codes[0] != codes[1] and len(np.unique(codes)) == 3
    # Only booleans and numbers: still apart.
    col[:] = [True, 1] * 30
    X["mixed"] = col
    clf = MissingKernelSVC(nominal_features=["mixed"]).fit(X, y)
    assert len(clf.nominal_categories_[1]) == 2


def test_an_unordered_categorical_declared_numeric_uses_its_values(rng):
    X, y = _frame(rng)
    levels = rng.choice([1.0, 2.0, 5.0], len(X))
    a = X.assign(dose=pd.Categorical(levels, categories=[1.0, 2.0, 5.0]))
    b = X.assign(dose=pd.Categorical(levels, categories=[5.0, 1.0, 2.0]))
    fa = MissingKernelSVC(nominal_features=None).fit(a, y)
    fb = MissingKernelSVC(nominal_features=None).fit(b, y)
    np.testing.assert_allclose(fa.decision_function(a), fb.decision_function(b))
    np.testing.assert_allclose(fa.x_center_[1], levels.mean())
    # Labels that are not numbers: no order to code them by.
    c = X.assign(colour=pd.Categorical(rng.choice(["red", "blue"], len(X))))
    with pytest.raises(ValueError, match="feature 'colour' is an unordered categ"):
        MissingKernelSVC(nominal_features=None).fit(c, y)


def test_columns_reordered_at_predict_are_named_as_such(rng):
    X, y = _frame(rng)
    X["colour"] = rng.choice(["red", "white"], len(X))
    clf = MissingKernelSVC().fit(X, y)
    with pytest.raises(ValueError, match="same order as they were in fit"):
        clf.predict(X[["colour", "x"]])
    with pytest.raises(ValueError, match="Feature names unseen at fit"):
        clf.predict(X.rename(columns={"colour": "color"}))


def test_errors_name_the_cell_and_the_remedy(rng):
    from missingkernels import MissingKernelSVR, get_density

    X, y = _frame(rng)
    X["size"] = rng.normal(size=len(X))
    clf = MissingKernelSVC().fit(X, y)
    bad = X.iloc[:3].astype({"size": object})
    bad.iloc[1, 1] = "big"
    with pytest.raises(ValueError, match=r"feature 'size' holds 'big' \(row 1, 0-b"):
        clf.predict(bad)
    with pytest.raises(ValueError, match=r"numeric target y.*MissingKernelSVC"):
        MissingKernelSVR().fit(X, np.array(["a", "b"] * 30))
    A = X.to_numpy()
    A[4, 1] = np.inf
    with pytest.raises(
        ValueError, match=r"infinite value \(column 1 \(0-based\), row 4"
    ):
        get_density("gaussian_em").fit(A)
    y_inf = y.astype(float)
    y_inf[2] = np.inf
    with pytest.raises(ValueError, match="Input y contains infinity"):
        MissingKernelSVR().fit(X, y_inf)


def test_the_unknown_category_warning_points_at_the_callers_line(rng):
    from sklearn.model_selection import GridSearchCV, KFold

    from missingkernels._table_encoding import UnknownCategoryWarning

    X, y = _frame(rng)
    X["colour"] = rng.choice(["red", "white"], len(X))
    X.loc[len(X) - 1, "colour"] = "blue"  # only in the last fold's test rows
    clf = MissingKernelSVC().fit(X.iloc[:-1], y[:-1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.predict(X.iloc[-3:])
    (w,) = [w for w in caught if w.category is UnknownCategoryWarning]
    assert w.filename == __file__
    assert "holds value(s) not seen in the training rows (['blue']" in str(w.message)
    search = GridSearchCV(MissingKernelSVC(), {"C": [1.0, 2.0, 4.0]}, cv=KFold(3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y)
    unknown = [w for w in caught if w.category is UnknownCategoryWarning]
    # One fold meets 'blue', at every C: the same message, at the user's line.
    assert len(unknown) == 3 and len({str(w.message) for w in unknown}) == 1
    assert {w.filename for w in unknown} == {__file__}


def test_a_grid_search_warns_of_an_unseen_category_once(rng):
    # Issue 38: scikit-learn's Parallel resets the filters' memory for every
    # task, so Python's default filter showed the warning once per grid point
    # and fold (3 here). Now once per distinct (column, value), whatever the
    # number of fits; "always" still shows every one (above).
    from sklearn.model_selection import GridSearchCV, KFold

    from missingkernels._table_encoding import UnknownCategoryWarning

    X, y = _frame(rng, n=90)
    X["colour"] = rng.choice(["red", "white"], len(X))
    X["size"] = rng.choice(["S", "M"], len(X))
    X.loc[len(X) - 1, "colour"] = "blue"  # only in the last fold's test rows
    X.loc[len(X) - 2, "colour"] = "green"
    X.loc[len(X) - 3, "size"] = "XL"
    grid = {"C": [1.0, 2.0, 4.0], "gamma": [0.5, 1.0]}
    search = GridSearchCV(MissingKernelSVC(), grid, cv=KFold(3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(2):  # the same line again: nothing new to say
            search.fit(X, y)
    unknown = [str(w.message) for w in caught if w.category is UnknownCategoryWarning]
    assert len(unknown) == 2, unknown
    assert any("feature 'colour'" in m and "['green', 'blue']" in m for m in unknown)
    assert any("feature 'size'" in m and "['XL']" in m for m in unknown)
    clf = MissingKernelSVC().fit(X.iloc[:-3], y[:-3])
    for _ in range(2):  # an error filter is never folded away
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnknownCategoryWarning)
            with pytest.raises(UnknownCategoryWarning, match="blue"):
                clf.predict(X.iloc[-3:])


def test_a_new_recorder_sees_the_unseen_category_again(rng):
    # R's bridge records each call's warnings with catch_warnings(record=True)
    # (and its mk_tune counts the folds with an unseen level): every new
    # recorder gets the warning again under the default filters.
    from missingkernels._table_encoding import UnknownCategoryWarning

    X, y = _frame(rng)
    X["colour"] = rng.choice(["red", "white"], len(X))
    X.loc[len(X) - 1, "colour"] = "blue"
    clf = MissingKernelSVC().fit(X.iloc[:-1], y[:-1])
    counts = []
    for _ in range(3):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            clf.predict(X.iloc[-2:])
            clf.predict(X.iloc[-2:])  # another line, the same recorder
        counts.append(sum(w.category is UnknownCategoryWarning for w in caught))
    assert counts == [2, 2, 2]


def test_the_unseen_category_warning_reads_every_kind_of_filter(rng):
    # Filters with a message or module pattern (compiled by filterwarnings,
    # as reticulate's session has) broke the warning ("cannot process flags
    # argument with a compiled pattern"); a matching "ignore" applies.
    from missingkernels._table_encoding import UnknownCategoryWarning

    X, y = _frame(rng)
    X["colour"] = rng.choice(["red", "white"], len(X))
    X.loc[len(X) - 1, "colour"] = "blue"
    clf = MissingKernelSVC().fit(X.iloc[:-1], y[:-1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        warnings.filterwarnings("ignore", message="another message")
        warnings.filterwarnings("ignore", module="another_module")
        clf.predict(X.iloc[-2:])
        warnings.filterwarnings("ignore", message=".*feature 'colour'")
        clf.predict(X.iloc[-2:])
    assert sum(w.category is UnknownCategoryWarning for w in caught) == 1
