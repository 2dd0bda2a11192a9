"""Draw docs/user_guide/missing_cost.png, the picture of "What the missing
entries cost", and print the numbers the page quotes.

Run from the repository root (about half a minute)::

    MISSINGKERNELS_DATA_DIR=../shared/data .venv/bin/python \
        docs/user_guide/missing_cost_figure.py

Pima diabetes with its natural missingness (``pima_indians_diabetes_na``:
the impossible zeros of the original file read as missing), split 3:1 with
a fixed seed; the default ``MissingKernelSVC`` (genRBF over ``gaussian_em``)
is fitted on the training rows and one test patient is shown: the histogram
of the model's decisions on 200 completions of the patient's missing entries
(drawn with ``plausible_values`` and scored with ``decision_function``: the
draws behind ``uncertainty_from_missing``), and ``value_of_measuring`` of
each of the patient's missing entries.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

from missingkernels import MissingKernelSVC
from missingkernels.datasets import load_dataset

OUT = Path(__file__).with_name("missing_cost.png")
PATIENT = 658  # a test row missing triceps and insulin, its decision near 0
N_DRAWS = 200


def main() -> None:
    data = load_dataset("pima_indians_diabetes_na")
    X = pd.DataFrame(data.X, columns=data.feature_names)
    X_train, X_test, y_train, _ = train_test_split(
        X, data.y, test_size=0.25, random_state=0, stratify=data.y
    )
    model = MissingKernelSVC().fit(X_train, y_train)

    table = model.uncertainty_from_missing(X_test, n_draws=N_DRAWS, random_state=0)
    incomplete = table[table["n_missing"] > 0]
    print(
        f"{len(X_test)} test rows, {len(incomplete)} incomplete; flip "
        f"probability above 0.05: {(incomplete['flip_probability'] > 0.05).sum()}, "
        f"above 0.2: {(incomplete['flip_probability'] > 0.2).sum()}"
    )
    complete = table[table["n_missing"] == 0]
    print(
        "complete rows: largest completed_sd "
        f"{complete['completed_sd'].max()}, flip probability "
        f"{complete['flip_probability'].max()}"
    )

    row = X_test.loc[[PATIENT]]
    summary = table.loc[PATIENT]
    print(row.to_string())
    print(summary.round(3).to_string())
    copies = model.plausible_values(row, n_draws=N_DRAWS, random_state=0)
    drawn = pd.concat(copies)
    below = (drawn["insulin"] < 0).mean()
    print(f"share of the insulin draws below 0: {below:.3f}")
    print("plausible values (5%, 50%, 95%):")
    print(drawn[["triceps", "insulin"]].quantile([0.05, 0.5, 0.95]).round(1))
    g = model.decision_function(drawn)
    print(f"completed decisions from {g.min():.3f} to {g.max():.3f}")
    other = np.mean(np.sign(g) != np.sign(summary["decision"]))
    print(
        f"mean of decision_function over the copies {g.mean():.4f} "
        f"(completed_mean {summary['completed_mean']:.4f}); share of "
        f"copies on the other side {other:.3f}"
    )
    print(f"intercept {model.intercept_}")
    value = model.value_of_measuring(row, random_state=0).loc[PATIENT].dropna()
    print("value of measuring:", value.round(3).to_dict())

    fig, (left, right) = plt.subplots(
        1, 2, figsize=(9.0, 3.4), width_ratios=[1.6, 1.0], layout="constrained"
    )
    flip = g < 0 if summary["decision"] > 0 else g > 0
    bins = np.linspace(g.min(), g.max(), 31)
    left.hist(g[~flip], bins=bins, color="tab:blue", label="same class")
    left.hist(g[flip], bins=bins, color="tab:orange", label="class flips")
    left.axvline(0.0, color="black", lw=1.2, label="threshold 0")
    left.axvline(
        summary["decision"], color="tab:red", ls="--", lw=1.5, label="decision today"
    )
    left.axvline(
        g.mean(), color="tab:purple", ls=":", lw=1.5, label="mean of completions"
    )
    left.set_xlabel("decision once triceps and insulin are observed")
    left.set_ylabel(f"completions (of {N_DRAWS})")
    left.set_title(
        f"Patient {PATIENT}: flip probability {summary['flip_probability']:.2f}",
        fontsize=10,
    )
    left.set_ylim(0, 1.6 * left.get_ylim()[1])
    left.yaxis.get_major_locator().set_params(integer=True)
    left.legend(fontsize=8, frameon=False, loc="upper right")

    right.barh(value.index, value.to_numpy(), color="tab:green")
    right.invert_yaxis()
    right.set_xlim(0, max(0.5, 1.2 * value.max()))
    right.set_xlabel("P(class changes | measure it alone)")
    right.set_title("Value of measuring", fontsize=10)
    for y, v in enumerate(value.to_numpy()):
        right.text(v + 0.01, y, f"{v:.2f}", va="center", fontsize=9)
    fig.savefig(OUT, dpi=110)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
