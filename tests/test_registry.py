"""The plugin registry: discovery, clashes, failing plugins, lookups, CLI."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

import missingkernels as mk
from missingkernels import cli
from missingkernels.hookspecs import hookimpl

EXAMPLE_PLUGIN_DIR = Path(__file__).parent / "plugin_example"


@pytest.fixture(scope="module")
def example_plugin_installed():
    """pip-install the tiny example plugin distribution into this environment."""
    pip = [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check"]
    try:
        metadata.distribution("mk-example-plugin")
        installed_here = False
    except metadata.PackageNotFoundError:
        subprocess.run(
            [
                *pip,
                "install",
                "--no-deps",
                "--no-build-isolation",
                str(EXAMPLE_PLUGIN_DIR),
            ],
            check=True,
        )
        installed_here = True
    yield "mk-example-plugin"
    if installed_here:
        # Leave the environment as found: users of this venv should not see it.
        subprocess.run([*pip, "uninstall", "--yes", "mk-example-plugin"], check=True)


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch):
    monkeypatch.delenv(mk._registry.AUTOLOAD_ENV_VAR, raising=False)
    mk.reload_plugins()
    yield
    mk.reload_plugins()


def _fake_distribution(tmp_path, monkeypatch, name, entry_points, modules):
    """Make an installed-looking distribution on sys.path (dist-info + modules)."""
    dist = tmp_path / f"{name.replace('-', '_')}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n"
    )
    lines = ["[missingkernels]"] + [f"{k} = {v}" for k, v in entry_points.items()]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    for module, source in modules.items():
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    mk.reload_plugins()


def test_entry_point_discovery_end_to_end(example_plugin_installed):
    kernels = mk.list_kernels()
    densities = mk.list_densities()
    assert "example_count_observed" in kernels
    assert kernels["example_count_observed"].plugin == "example"
    assert kernels["example_count_observed"].kind == "kernel"
    assert densities["example_standard_normal"].description == (
        "Standard normal density with fixed parameters (example plugin)"
    )
    X = np.array([[1.0, np.nan], [0.5, 2.0], [np.nan, np.nan]])
    k = mk.get_kernel("example_count_observed").fit(X)
    np.testing.assert_array_equal(k(X), [[1, 1, 0], [1, 2, 0], [0, 0, 0]])
    cond = mk.get_density("example_standard_normal").fit(X[:2]).conditionals(X)
    np.testing.assert_array_equal(cond.means, [[1, 0], [0.5, 2], [0, 0]])


def test_autoload_can_be_disabled(example_plugin_installed, monkeypatch):
    monkeypatch.setenv(mk._registry.AUTOLOAD_ENV_VAR, "1")
    mk.reload_plugins()
    assert "example_count_observed" not in mk.list_kernels()
    # Built-ins still register through the hooks.
    assert mk.get_plugin_manager().has_plugin("missingkernels.kernels")


def test_entry_point_name_clash_names_both_plugins(
    example_plugin_installed, tmp_path, monkeypatch
):
    _fake_distribution(
        tmp_path,
        monkeypatch,
        "clashing-plugin",
        {"clashing": "clashing_mod"},
        {
            "clashing_mod": """
            from missingkernels.hookspecs import hookimpl

            class Other:
                '''Another kernel with a taken name.'''

            @hookimpl
            def missingkernels_register_kernels():
                return {"example_count_observed": Other}
            """
        },
    )
    with pytest.raises(mk.RegistryError) as info:
        mk.list_kernels()
    assert "'example'" in str(info.value) and "'clashing'" in str(info.value)
    with pytest.raises(mk.RegistryError, match="example_count_observed"):
        mk.get_kernel("example_count_observed")
    # Densities are unaffected by a kernel clash.
    assert "example_standard_normal" in mk.list_densities()


def test_runtime_clash_is_an_error():
    class A:
        @hookimpl
        def missingkernels_register_densities(self):
            return {"dup_density": dict}

    class B:
        @hookimpl
        def missingkernels_register_densities(self):
            return {"dup_density": list}

    mk.register_plugin(A(), name="plugin-a")
    mk.register_plugin(B(), name="plugin-b")
    with pytest.raises(mk.RegistryError, match="'plugin-a' and 'plugin-b'"):
        mk.list_densities()
    mk.unregister_plugin("plugin-b")
    assert mk.list_densities()["dup_density"].factory is dict


def test_failing_plugin_is_reported_and_does_not_break_others(
    example_plugin_installed, tmp_path, monkeypatch
):
    _fake_distribution(
        tmp_path,
        monkeypatch,
        "broken-plugin",
        {"broken": "broken_mod"},
        {"broken_mod": "raise ImportError('needs the frobnicator library')\n"},
    )
    with pytest.warns(mk.PluginLoadWarning, match="'broken'.*frobnicator"):
        kernels = mk.list_kernels()
    assert "example_count_observed" in kernels
    errors = mk.plugin_errors()
    assert "ImportError: needs the frobnicator library" in errors["broken"]
    assert "broken-plugin" in errors["broken"]


def test_failing_hook_is_reported_and_does_not_break_others(recwarn):
    class Good:
        @hookimpl
        def missingkernels_register_baselines(self):
            return {"good_baseline": dict}

    class Bad:
        @hookimpl
        def missingkernels_register_baselines(self):
            raise RuntimeError("boom")

    class Invalid:
        @hookimpl
        def missingkernels_register_baselines(self):
            return ["not", "a", "mapping"]

    mk.register_plugin(Good(), name="good")
    mk.register_plugin(Bad(), name="bad")
    mk.register_plugin(Invalid(), name="invalid")
    with pytest.warns(mk.PluginLoadWarning):
        baselines = mk.list_baselines()
    assert "good_baseline" in baselines
    errors = mk.plugin_errors()
    assert "RuntimeError: boom" in errors["bad"]
    assert "missingkernels_register_baselines" in errors["bad"]
    assert "must return a mapping" in errors["invalid"]


def test_plugin_with_misspelled_hook_is_rejected(tmp_path, monkeypatch):
    _fake_distribution(
        tmp_path,
        monkeypatch,
        "typo-plugin",
        {"typo": "typo_mod"},
        {
            "typo_mod": """
            from missingkernels.hookspecs import hookimpl

            @hookimpl
            def missingkernels_register_kernel():
                return {}
            """
        },
    )
    with pytest.warns(mk.PluginLoadWarning, match="'typo'.*not a valid plugin"):
        mk.list_kernels()
    assert not mk.get_plugin_manager().has_plugin("typo")


def test_unknown_name_lists_known_names():
    class P:
        @hookimpl
        def missingkernels_register_kernels(self):
            return {"alpha_kernel": dict, "beta_kernel": dict}

    mk.register_plugin(P(), name="p")
    with pytest.raises(ValueError, match="Unknown kernel 'alpha_kernal'") as info:
        mk.get_kernel("alpha_kernal")
    assert "Did you mean 'alpha_kernel'" in str(info.value)
    assert "alpha_kernel" in str(info.value) and "beta_kernel" in str(info.value)
    with pytest.raises(TypeError, match="must be a str"):
        mk.get_density(3)


def test_register_plugin_twice_is_an_error():
    class P:
        pass

    mk.register_plugin(P(), name="same")
    with pytest.raises(ValueError, match="already registered"):
        mk.register_plugin(P(), name="same")
    with pytest.raises(ValueError, match="No plugin named 'nope'"):
        mk.unregister_plugin("nope")


def test_cli_list_and_version(example_plugin_installed, capsys):
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "kernels:" in out and "densities:" in out and "baselines:" in out
    assert "example_count_observed" in out and "[example]" in out
    assert cli.main(["list", "densities"]) == 0
    out = capsys.readouterr().out
    assert "example_standard_normal" in out and "kernels:" not in out
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert mk.__version__ in capsys.readouterr().out


def test_cli_entry_point_runs():
    exe = Path(sys.executable).with_name("missingkernels")
    out = subprocess.run(
        [str(exe), "--help"], check=True, capture_output=True, text=True
    ).stdout
    assert "list" in out


def test_import_does_not_load_optional_dependencies():
    code = (
        "import sys, missingkernels as mk; mk.list_kernels(); mk.list_densities();"
        "bad = [m for m in ('rpy2', 'cvxpy', 'matplotlib', 'statsmodels', 'dask',"
        " 'numba') if m in sys.modules]; assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_new_density_builds_by_name_and_never_reuses_an_object():
    from missingkernels._registry import new_density
    from missingkernels.densities import GaussianEMDensity

    built = new_density("gaussian_em", max_iter=7)
    assert isinstance(built, GaussianEMDensity) and built.max_iter == 7
    assert new_density("gaussian_em") is not new_density("gaussian_em")

    X = np.array([[0.0, 1.0], [1.0, np.nan], [2.0, 2.5], [np.nan, 0.0], [1.0, 1.0]])
    mine = GaussianEMDensity(max_iter=500).fit(X)
    copy = new_density(mine)
    assert copy is not mine and copy.max_iter == 500
    assert not hasattr(copy, "mean_")  # unfitted, the user's fit untouched
    assert hasattr(mine, "mean_")
    with pytest.raises(ValueError, match=r"given by name.*GaussianEMDensity object"):
        new_density(mine, max_iter=3)
