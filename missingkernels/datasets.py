"""Named datasets of the method comparisons, in the shared CSV format.

A dataset file is ``<name>.csv``: one header row, feature columns, the last
column ``target``, missing values as empty fields. Files are read from a data
directory: the ``data_dir`` argument, else the environment variable
``MISSINGKERNELS_DATA_DIR``, else a user cache directory
(``$XDG_CACHE_HOME/missingkernels/data``, default ``~/.cache/...``). When a
file is absent and a network is available, the datasets with an OpenML id are
fetched and written in that format. Two datasets shipped with scikit-learn
(``sklearn_breast_cancer``, ``sklearn_diabetes``) need neither.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._optional import import_optional

__all__ = [
    "DATA_DIR_ENV",
    "Dataset",
    "describe_datasets",
    "get_data_dir",
    "list_datasets",
    "load_csv",
    "load_dataset",
]

#: The environment variable naming the data directory (see :func:`get_data_dir`).
DATA_DIR_ENV = "MISSINGKERNELS_DATA_DIR"


@dataclass(frozen=True)
class _Entry:
    task: str
    note: str = ""
    drop: tuple[str, ...] = ()
    one_hot: tuple[str, ...] = ()
    binarise_above: float | None = None  # y = target > value
    openml: int | None = None
    openml_target: dict = field(default_factory=dict)
    openml_values: dict = field(default_factory=dict)
    shape: tuple[int, int] | None = None
    nominal: tuple[str, ...] = ()  # nominal columns (category codes) of X


_C, _R = "classification", "regression"

# Nominal columns (issue 20). A column is nominal when its codes name
# categories without an order the value of the code reflects: every binary
# code (yes/no, sex, 0/1 votes), and multi-level codes whose documented order
# is not a scale of one quantity (e.g. a "normal" level in the middle, or
# unrelated findings). Levels of a monotone scale (none < slight < moderate <
# severe; the source documentation calls them ordinal) stay numeric: the RBF
# on the numeric columns uses their order. The choice per dataset is given
# beside its entry; ``Dataset.nominal`` names the columns, the codes stay
# floats in ``X`` and callers pass them as ``nominal_features``.
_AUSTRALIAN_NOMINAL = ("a1", "a4", "a5", "a6", "a8", "a9", "a11", "a12")
# Statlog and Cleveland heart: sex, fasting blood sugar > 120 and
# exercise-induced angina are binary; chest pain type (typical, atypical,
# non-anginal, asymptomatic), resting ECG (normal, ST-T abnormality, left
# ventricular hypertrophy) and thal (normal, fixed, reversible defect) name
# unordered findings. The ST slope (up, flat, down) is an ordered angle and
# ``ca`` (vessels coloured, 0-3) a count: numeric.
_HEART_NOMINAL = ("sex", "cp", "fbs", "restecg", "exang", "thal")
_STATLOG_NOMINAL = (
    "sex",
    "chest_pain_type",
    "fasting_blood_sugar",
    "resting_ecg",
    "exercise_induced_angina",
    "thal",
)
# Horse colic (UCI horse-colic.names): surgery and age are binary; the
# temperature of extremities (normal, warm, cool, cold), peripheral pulse
# (normal, increased, reduced, absent), peristalsis (hypermotile, normal,
# hypomotile, absent), nasogastric reflux (none, > 1 l, < 1 l) and rectal
# feces (normal, increased, decreased, absent) put "normal" or "none" amid
# the levels; mucous membranes (6 colours) and abdomen (5 findings) are
# unordered; capillary refill time is binary (< 3 s, >= 3 s); pain is
# nominal as the UCI documentation says ("should NOT be treated as a ordered
# or discrete variable"). Abdominal distension (none, slight, moderate,
# severe), the nasogastric tube gas (none, slight, significant) and the
# abdominocentesis appearance (clear, cloudy, serosanguinous) are monotone
# severity scales: numeric.
_HORSE_COLIC_NOMINAL = (
    "surgery",
    "age",
    "temperature_of_extremities",
    "peripheral_pulse",
    "mucous_membranes",
    "capillary_refill_time",
    "pain",
    "peristalsis",
    "nasogastric_reflux",
    "rectal_examination_feces",
    "abdomen",
)
# Hepatitis: every coded column is binary (sex; the others no / yes).
_HEPATITIS_NOMINAL = (
    "sex",
    "steroid",
    "antivirals",
    "fatigue",
    "malaise",
    "anorexia",
    "liver_big",
    "liver_firm",
    "spleen_palpable",
    "spiders",
    "ascites",
    "varices",
    "histology",
)
_HOUSE_VOTES = (
    "handicapped_infants",
    "water_project_cost_sharing",
    "adoption_of_the_budget_resolution",
    "physician_fee_freeze",
    "el_salvador_aid",
    "religious_groups_in_schools",
    "anti_satellite_test_ban",
    "aid_to_nicaraguan_contras",
    "mx_missile",
    "immigration",
    "synfuels_corporation_cutback",
    "education_spending",
    "superfund_right_to_sue",
    "crime",
    "duty_free_exports",
    "export_administration_act_south_africa",
)

_CATALOG: dict[str, _Entry] = {
    # genRBF paper, Table 2 (classification).
    # Australian: the anonymised Statlog codes (binary a1, a8, a9, a11;
    # multi-level a4, a5, a6, a12 without a documented order).
    "australian": _Entry(_C, shape=(690, 14), nominal=_AUSTRALIAN_NOMINAL),
    "banknote_authentication": _Entry(
        _C, openml=1462, openml_target={"1": 0, "2": 1}, shape=(1372, 4)
    ),
    "breast_cancer_wisconsin": _Entry(
        _C, openml=15, openml_target={"benign": 2, "malignant": 4}, shape=(699, 9)
    ),
    "climate_model_crashes": _Entry(_C, shape=(540, 18)),
    "statlog_heart": _Entry(
        _C,
        openml=53,
        openml_target={"absent": 1, "present": 2},
        shape=(270, 13),
        nominal=_STATLOG_NOMINAL,
    ),
    "ionosphere": _Entry(_C, openml=59, shape=(351, 34)),
    "liver_disorders_bupa": _Entry(_C, shape=(345, 6)),
    "pima_indians_diabetes": _Entry(
        _C,
        openml=37,
        openml_target={"tested_negative": 0, "tested_positive": 1},
        shape=(768, 8),
    ),
    # Struski et al., Table 5 (regression). Abalone's sex (M/F/I) is loaded
    # one-hot (three 0/1 columns, numeric), as in the paper's comparisons.
    "abalone": _Entry(_R, note="sex one-hot encoded", one_hot=("sex",)),
    "airfoil_self_noise": _Entry(_R),
    "concrete_compressive_strength": _Entry(_R),
    "friedman": _Entry(_R),
    "laser": _Entry(_R),
    "mortgage": _Entry(_R),
    "stock": _Entry(_R),
    # Real missing values.
    # House votes: every vote is binary (1 yea, 0 nay).
    "house_votes_84": _Entry(
        _C,
        openml=56,
        openml_values={"y": 1, "n": 0},
        shape=(435, 16),
        nominal=_HOUSE_VOTES,
    ),
    "horse_colic": _Entry(
        _C,
        note="post-hoc 'outcome' dropped",
        drop=("outcome",),
        nominal=_HORSE_COLIC_NOMINAL,
    ),
    "hepatitis": _Entry(_C, nominal=_HEPATITIS_NOMINAL),
    # Mammographic masses: shape (round, oval, lobular, irregular) and margin
    # (5 kinds) are nominal in the UCI description; density (high, iso, low,
    # fat-containing) is ordinal there: numeric.
    "mammographic_masses": _Entry(
        _C,
        note="non-predictive 'bi_rads' dropped",
        drop=("bi_rads",),
        nominal=("shape", "margin"),
    ),
    "cleveland_heart_disease": _Entry(
        _C,
        note="target num > 0 (disease)",
        binarise_above=0.0,
        nominal=_HEART_NOMINAL,
    ),
    "pima_indians_diabetes_na": _Entry(_C),
    # Shipped with scikit-learn: available without network.
    "sklearn_breast_cancer": _Entry(_C, note="sklearn.datasets.load_breast_cancer"),
    "sklearn_diabetes": _Entry(_R, note="sklearn.datasets.load_diabetes"),
}


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset.

    Attributes
    ----------
    name : str
    X : ndarray of shape (n_samples, n_features)
        Float features, NaN where missing.
    y : ndarray of shape (n_samples,)
        Class labels (classification) or floats (regression).
    task : {"classification", "regression"}
    feature_names : list of str
    note : str
        The transformations applied on top of the file (dropped columns...).
    nominal : list of str
        The nominal columns (category codes in ``X``, NaN where missing):
        those the catalogue declares for a named dataset, the string columns
        and those named for :func:`load_csv`. Pass ``nominal_indices`` as
        ``nominal_features`` to the estimators.
    categories : dict of str to dict
        Per nominal column, its codes in ``X`` and the labels they stand for
        (``{0.0: "no", 1.0: "yes"}`` for a text column; a numeric code stands
        for itself, ``{1.0: 1, 2.0: 2}``): what messages show instead of the
        codes.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    task: str
    feature_names: list[str]
    note: str = ""
    nominal: list[str] = field(default_factory=list)
    categories: dict[str, dict[float, Any]] = field(default_factory=dict)

    @property
    def nominal_indices(self) -> list[int]:
        """0-based indices of the nominal columns in ``X``."""
        wanted = set(self.nominal)
        return [j for j, name in enumerate(self.feature_names) if name in wanted]

    @property
    def missing_rate(self) -> float:
        """Fraction of missing feature entries."""
        return float(np.isnan(self.X).mean()) if self.X.size else 0.0


def list_datasets() -> dict[str, str]:
    """Return the known dataset names and their task.

    Returns
    -------
    datasets : dict of str to str
        Name -> ``"classification"`` or ``"regression"``.

    Examples
    --------
    >>> from missingkernels.datasets import list_datasets
    >>> list_datasets()["ionosphere"]
    'classification'
    """
    return {name: entry.task for name, entry in sorted(_CATALOG.items())}


def describe_datasets(
    data_dir: str | os.PathLike | None = None,
) -> list[dict[str, Any]]:
    """Describe every named dataset: task, source and whether it is here.

    Parameters
    ----------
    data_dir : path or None
        The data directory to look in (see :func:`get_data_dir`).

    Returns
    -------
    datasets : list of dict
        One dict per dataset, sorted by name, with the keys ``name``,
        ``task``, ``shape`` (``(rows, features)`` where the catalogue records
        it, else None), ``source`` (``"scikit-learn"``, ``"OpenML <id>"`` or
        ``"file"``: only the CSV format, no automatic download), ``status``
        (``"bundled"``: shipped with scikit-learn; ``"present"``: the CSV is
        in the data directory; ``"fetchable"``: absent, fetched from OpenML
        on first use; ``"absent"``: absent, put ``<name>.csv`` in the data
        directory) and ``note``.

    Examples
    --------
    >>> from missingkernels.datasets import describe_datasets
    >>> rows = {r["name"]: r for r in describe_datasets("/nonexistent")}
    >>> rows["sklearn_diabetes"]["status"], rows["ionosphere"]["status"]
    ('bundled', 'fetchable')
    >>> rows["ionosphere"]["source"], rows["ionosphere"]["shape"]
    ('OpenML 59', (351, 34))
    """
    directory = get_data_dir(data_dir)
    out = []
    for name, entry in sorted(_CATALOG.items()):
        if name.startswith("sklearn_"):
            source, status = "scikit-learn", "bundled"
        else:
            source = "file" if entry.openml is None else f"OpenML {entry.openml}"
            if (directory / f"{name}.csv").exists():
                status = "present"
            else:
                status = "absent" if entry.openml is None else "fetchable"
        out.append(
            {
                "name": name,
                "task": entry.task,
                "shape": entry.shape,
                "source": source,
                "status": status,
                "note": entry.note,
            }
        )
    return out


def get_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: argument, else ``$MISSINGKERNELS_DATA_DIR``, else cache.

    Parameters
    ----------
    data_dir : path or None

    Returns
    -------
    path : pathlib.Path

    Examples
    --------
    >>> from missingkernels.datasets import get_data_dir
    >>> get_data_dir("/tmp/mk").as_posix()
    '/tmp/mk'
    """
    if data_dir is not None:
        return Path(data_dir)
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env)
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "missingkernels" / "data"


def load_csv(
    path: str | os.PathLike,
    target: str = "target",
    task: str | None = None,
    nominal: Sequence[str] | None = None,
) -> Dataset:
    """Load a CSV with a header row: feature columns and a target column.

    Parameters
    ----------
    path : path
        Empty fields (and ``NA``/``NaN``) are missing values. Fields are
        separated by commas; a file whose header holds no comma but
        semicolons, tabs or ``|`` is read with that separator.
    target : str, default="target"
        The name of the target column.
    task : {"classification", "regression"} or None
        None: regression for a float target with more than 10 distinct
        values, else classification.
    nominal : sequence of str or None, default=None
        Columns to treat as nominal besides the non-numeric ones (numeric
        category codes, e.g. 1 = yes, 2 = no).

    Returns
    -------
    dataset : Dataset
        A nominal column's values are kept as float codes in ``X``: numeric
        codes as they are, the labels of a non-numeric column as
        ``0, 1, ...`` in sorted order (``Dataset.nominal`` names them).

    Raises
    ------
    ValueError
        If the file is empty or has no data rows, the target column is
        absent, has missing values or is not numeric for a regression, a
        column of ``nominal`` is absent, or a column declared numeric mixes
        numbers and text.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> from missingkernels.datasets import load_csv
    >>> text = "age,smoker,target\\n31,yes,0\\n,no,1\\n45,,1\\n"
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "t.csv")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write(text)
    ...     ds = load_csv(path)
    >>> ds.nominal, ds.nominal_indices, ds.X[:, 1].tolist()
    (['smoker'], [1], [1.0, 0.0, nan])
    """
    pd = import_optional("pandas", "experiments", "load_csv")

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No such CSV file: {path}.")
    try:
        frame = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise ValueError(
            f"{path} is empty; a CSV needs a header row and one row per sample."
        ) from None
    if frame.shape[1] == 1:
        # One column whose name holds another separator: a semicolon- or
        # tab-separated file (the usual CSV where the comma is the decimal
        # separator). Read it with that separator.
        header = str(frame.columns[0])
        for sep in (";", "\t", "|"):
            if sep in header:
                frame = pd.read_csv(path, sep=sep)
                break
    return _from_frame(path.stem, frame, target, task, "", nominal or ())


def _from_frame(
    name: str,
    frame: Any,
    target: str,
    task: str | None,
    note: str,
    nominal: Sequence[str] = (),
) -> Dataset:
    pd = import_optional("pandas", "experiments", "load_csv and load_dataset")

    if len(frame) == 0:
        raise ValueError(
            f"{name}: no data rows, only the header {list(frame.columns)}; add "
            "one row per sample below it."
        )
    if target not in frame.columns:
        raise ValueError(
            f"{name}: no target column {target!r}; columns are {list(frame.columns)}. "
            "Name it with --target / target=."
        )
    y = frame.pop(target)
    if y.isna().any():
        raise ValueError(
            f"{name}: the target column {target!r} has {int(y.isna().sum())} "
            "missing values; drop those rows first."
        )
    nominal = [str(c) for c in nominal]
    absent = [c for c in nominal if c not in frame.columns]
    if absent:
        raise ValueError(
            f"{name}: nominal columns {absent} are not features; the features "
            f"are {[str(c) for c in frame.columns]}."
        )
    text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    categories: dict[str, dict[float, Any]] = {}
    for c in text:
        # A non-numeric column is nominal; one whose non-empty values are all
        # numbers was read as text only because of a stray token: refuse it.
        values = frame[c].dropna()
        numbers = pd.to_numeric(values, errors="coerce")
        if numbers.notna().any() and numbers.isna().any() and c not in nominal:
            bad = values[numbers.isna()].iloc[0]
            raise ValueError(
                f"{name}: feature {c!r} is not numeric: it mixes numbers and text "
                f"(e.g. {bad!r}); "
                "fix the values, or declare it nominal."
            )
        labels = sorted({str(v) for v in values})
        codes = {label: float(k) for k, label in enumerate(labels)}
        frame[c] = [np.nan if v is None or v != v else codes[str(v)] for v in frame[c]]
        categories[str(c)] = {code: label for label, code in codes.items()}
    nominal = [str(c) for c in frame.columns if str(c) in nominal or c in text]
    for c in nominal:
        if c not in categories:  # numeric codes: each stands for itself
            values = frame[c].to_numpy(dtype=np.float64)
            categories[c] = {
                float(v): int(v) if float(v).is_integer() else float(v)
                for v in np.unique(values[~np.isnan(values)])
            }
    if task is None:
        numeric = pd.api.types.is_float_dtype(y)
        task = "regression" if numeric and y.nunique() > 10 else "classification"
    if task not in ("classification", "regression"):
        raise ValueError(
            f"task must be 'classification' or 'regression', got {task!r}."
        )
    if task == "regression" and not pd.api.types.is_numeric_dtype(y):
        raise ValueError(
            f"{name}: the target column {target!r} is not numeric (e.g. "
            f"{y.iloc[0]!r}), so it cannot be a regression target; use task "
            "'classification' (--task classification) for class labels."
        )
    y_arr = y.to_numpy(dtype=float) if task == "regression" else y.to_numpy()
    return Dataset(
        name=name,
        X=frame.to_numpy(dtype=np.float64),
        y=y_arr,
        task=task,
        feature_names=[str(c) for c in frame.columns],
        note=note,
        nominal=nominal,
        categories={c: categories[c] for c in nominal},
    )


def _sklearn(name: str) -> Dataset:
    from sklearn import datasets as skd

    loader = (
        skd.load_breast_cancer if name == "sklearn_breast_cancer" else skd.load_diabetes
    )
    bunch = loader()
    entry = _CATALOG[name]
    return Dataset(
        name=name,
        X=np.asarray(bunch.data, dtype=np.float64),
        y=np.asarray(bunch.target),
        task=entry.task,
        feature_names=list(bunch.feature_names),
        note=entry.note,
    )


def _fetch_openml(name: str, entry: _Entry, path: Path) -> None:
    """Fetch from OpenML and write ``path`` in the shared CSV format."""
    from sklearn.datasets import fetch_openml

    bunch = fetch_openml(data_id=entry.openml, as_frame=True, parser="auto")
    frame = bunch.frame.copy()
    target_col = bunch.target.name
    y = frame.pop(target_col).astype(str)
    if entry.openml_target:
        unknown = set(y.unique()) - set(entry.openml_target)
        if unknown:
            raise ValueError(
                f"OpenML dataset {entry.openml} for {name!r} has unexpected classes "
                f"{sorted(unknown)}; not writing it."
            )
        y = y.map(entry.openml_target)
    for col in frame.columns:
        if entry.openml_values and frame[col].dtype.name in ("category", "object"):
            frame[col] = frame[col].astype(object).map(entry.openml_values)
    frame = frame.apply(lambda c: c.astype(float))
    if entry.shape is not None and frame.shape != entry.shape:
        raise ValueError(
            f"OpenML dataset {entry.openml} has shape {frame.shape}, expected "
            f"{entry.shape} for {name!r}; not writing it."
        )
    frame["target"] = y.to_numpy()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    frame.to_csv(tmp, index=False, na_rep="")
    tmp.replace(path)


def load_dataset(
    name: str, *, data_dir: str | os.PathLike | None = None, download: bool = True
) -> Dataset:
    """Load a named dataset (see :func:`list_datasets`).

    Parameters
    ----------
    name : str
    data_dir : path or None
        Where ``<name>.csv`` lives (see :func:`get_data_dir`).
    download : bool, default=True
        Fetch from OpenML when the file is absent and the dataset has an
        OpenML id.

    Returns
    -------
    dataset : Dataset

    Raises
    ------
    ValueError
        If the name is unknown.
    FileNotFoundError
        If the file is absent and cannot be fetched.

    Examples
    --------
    >>> from missingkernels.datasets import load_dataset
    >>> ds = load_dataset("sklearn_breast_cancer")
    >>> ds.X.shape, ds.task
    ((569, 30), 'classification')
    """
    if name not in _CATALOG:
        import difflib

        close = difflib.get_close_matches(name, list(_CATALOG), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(
            f"Unknown dataset {name!r}.{hint} Known: {', '.join(sorted(_CATALOG))}. "
            "For your own file use load_csv."
        )
    entry = _CATALOG[name]
    if name.startswith("sklearn_"):
        return _sklearn(name)
    path = get_data_dir(data_dir) / f"{name}.csv"
    if not path.exists():
        if download and entry.openml is not None:
            try:
                _fetch_openml(name, entry, path)
            except Exception as exc:
                raise FileNotFoundError(
                    f"{path} is absent and fetching OpenML dataset {entry.openml} "
                    f"failed ({type(exc).__name__}: {exc}). Set {DATA_DIR_ENV} to a "
                    "directory holding the CSV files."
                ) from exc
        else:
            raise FileNotFoundError(
                f"{path} is absent and {name!r} cannot be fetched automatically. Set "
                f"{DATA_DIR_ENV} (or data_dir=) to a directory holding {name}.csv."
            )
    pd = import_optional("pandas", "experiments", "load_dataset")

    frame = pd.read_csv(path)
    frame = frame.drop(columns=list(entry.drop))
    if entry.one_hot:
        frame = pd.get_dummies(frame, columns=list(entry.one_hot), dtype=float)
        frame = frame[[c for c in frame.columns if c != "target"] + ["target"]]
    if entry.binarise_above is not None:
        frame["target"] = (frame["target"] > entry.binarise_above).astype(int)
    return _from_frame(name, frame, "target", entry.task, entry.note, entry.nominal)
