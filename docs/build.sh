#!/usr/bin/env bash
# Build the documentation site into docs/_build/html with warnings as errors,
# then run the doctests of the hand-written pages, the home page's example
# included (the package's docstring examples run in pytest). Needs the docs,
# experiments and plots extras.
#   bash docs/build.sh [PYTHON]     (default: .venv/bin/python, else python3)
set -euo pipefail
cd "$(dirname "$0")/.."
py="${1:-}"
if [ -z "$py" ]; then
    if [ -x .venv/bin/python ]; then py=.venv/bin/python; else py=python3; fi
fi
start=$SECONDS
# Fresh generated pages every time: a stale stub of a removed name must not hide.
rm -rf docs/generated docs/auto_examples docs/_vignettes docs/_generated docs/sg_execution_times.rst \
    docs/_build/html docs/_build/screenshots
MPLBACKEND=Agg "$py" -m sphinx -W --keep-going -b html -q docs docs/_build/html
echo "docs: HTML built in $((SECONDS - start)) s: docs/_build/html/index.html"
"$py" -m pytest -p no:cacheprovider -q --doctest-glob='*.rst' docs/user_guide docs/install.rst docs/index.rst
echo "docs: built and doctested in $((SECONDS - start)) s"
