"""The CLI's ``--density-params``: density parameters for the methods of a run."""

from __future__ import annotations

from typing import Any

from . import _registry


def _parse_density_params(text: str) -> dict[str, Any]:
    """``KEY=VALUE,KEY=VALUE`` as a dict; a value is a Python literal (a
    number, None, a tuple such as ``(1,6)``) or else a string (``bic``)."""
    import ast
    import re

    params: dict[str, Any] = {}
    for item in re.split(r",(?![^()]*\))", text):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ValueError(
                f"it takes KEY=VALUE pairs separated by commas "
                f"(e.g. prior_rows=0 or n_components=bic); got {item!r}."
            )
        value = value.strip()
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            parsed = {"none": None, "true": True, "false": False}.get(
                value.lower(), value
            )
        params[key.strip()] = parsed
    if not params:
        raise ValueError("it is empty; give e.g. prior_rows=0.")
    return params


def _with_density_params(
    methods: list[Any], params: dict[str, Any], C_grid: Any, gamma_grid: Any
) -> list[Any]:
    """``methods`` with the expected-kernel ones whose default density takes
    every key of ``params`` as specs with that density so set, named e.g.
    ``genrbf[prior_rows=0]`` (their results never mix with the default's)."""
    import dataclasses

    from .experiments import resolve_method

    label = ",".join(f"{k}={v}".replace(" ", "") for k, v in params.items())
    out: list[Any] = []
    for method in methods:
        if not isinstance(method, str) or method not in _registry.list_kernels():
            out.append(method)
            continue
        try:
            name = _registry.get_kernel(method).get_params(deep=False).get("density")
            density = _registry.new_density(name)
        except Exception:  # a plugin kernel or density that cannot be built bare
            out.append(method)
            continue
        if not set(params) <= set(density.get_params()):
            out.append(method)
            continue
        spec = resolve_method(
            method,
            C_grid=C_grid,
            gamma_grid=gamma_grid,
            kernel_params={"density": _checked(density.set_params(**params))},
        )
        out.append(dataclasses.replace(spec, name=f"{method}[{label}]"))
    return out


def _checked(density: Any) -> Any:
    """``density``, its parameters validated now rather than in every cell."""
    density._validate_params()
    return density


def apply_density_params(
    text: str, methods: list[Any], C_grid: Any, gamma_grid: Any
) -> tuple[list[Any], str | None]:
    """``methods`` with ``--density-params text`` applied, and the problem to
    report instead (a malformed or refused value, or no method it applies
    to), or None."""
    try:
        params = _parse_density_params(text)
        out = _with_density_params(methods, params, C_grid, gamma_grid)
    except ValueError as exc:
        return methods, f"--density-params: {exc}"
    if out == methods:
        return methods, (
            f"--density-params {text}: no method of "
            f"{', '.join(str(m) for m in methods)} has a density with "
            f"{', '.join(params)} (genrbf's gaussian_em takes prior_rows, "
            "ridge...; mixed_rbf's latent_class also n_components)."
        )
    return out, None
