"""Would a warning for float columns that look like category codes be safe?

Run::

    .venv/bin/python benchmarks/code_columns.py [--data-dir DIR]

A ``ColumnTransformer`` with an ``OrdinalEncoder`` and numpy output hands the
estimators its nominal columns as floats ``0, 1, ..., K-1``; passed without
``nominal_features``, they are modelled as numbers. The candidate warning:
a float column whose observed values are exactly ``0 .. K-1`` (every code
present), ``K >= k_min``. For every named dataset in the data directory
(``missingkernels.datasets``), this counts

* false alarms: the numeric columns (not nominal in the catalogue) the rule
  would flag;
* hits: the nominal columns it would flag once ordinal-encoded (their
  sorted distinct values coded ``0 .. K-1``, as ``OrdinalEncoder`` does).

Prints one line per ``k_min`` and the columns behind each false alarm.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from missingkernels import datasets as mkd


def _codes_0_to_k(values: np.ndarray) -> int:
    """K if the observed values are exactly 0 .. K-1, else 0."""
    distinct = np.unique(values[~np.isnan(values)])
    return distinct.size if np.array_equal(distinct, np.arange(distinct.size)) else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    numeric: list[tuple[str, int]] = []  # (dataset.column, K or 0)
    nominal: list[tuple[str, int]] = []
    tables = 0
    for name in mkd.list_datasets():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ds = mkd.load_dataset(name, data_dir=args.data_dir, download=False)
        except (FileNotFoundError, ValueError):
            continue
        tables += 1
        for j, column in enumerate(ds.feature_names):
            values = ds.X[:, j]
            if column in ds.nominal:
                observed = values[~np.isnan(values)]
                encoded = np.unique(observed, return_inverse=True)[1].astype(float)
                nominal.append((f"{name}.{column}", _codes_0_to_k(encoded)))
            else:
                numeric.append((f"{name}.{column}", _codes_0_to_k(values)))
    print(
        f"{tables} tables, {len(numeric)} numeric columns, {len(nominal)} "
        "nominal columns"
    )
    for k_min in (3, 4, 5):
        alarms = [c for c, k in numeric if k >= k_min]
        hits = sum(k >= k_min for _, k in nominal)
        print(
            f"K >= {k_min}: {len(alarms)} false alarm(s) {alarms}; flags {hits} "
            f"of {len(nominal)} nominal columns"
        )


if __name__ == "__main__":
    main()
