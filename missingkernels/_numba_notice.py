"""Say that numba is compiling, instead of pausing silently.

numba compiles the loops of a module (``@njit(cache=True)``) on their first
call and caches the machine code on disk, next to the module or under
``NUMBA_CACHE_DIR``. In a fresh install that first call takes about 20 s;
later processes load the cache in well under a second. :func:`notice_if_compiling`
looks at the cache before the first call and, when it is missing or stale,
logs one message on the ``missingkernels`` logger (shown on stderr by
Python's default logging setup; silence it with
``logging.getLogger("missingkernels").setLevel(logging.ERROR)``).
"""

from __future__ import annotations

import logging
from types import ModuleType
from typing import Any

logger = logging.getLogger("missingkernels")

_noticed: set[str] = set()
#: Modules handed to :func:`notice_if_compiling`: what their loops are and
#: how long they take to compile, for the notice of a later compile.
_watched: dict[str, tuple[str, int]] = {}
#: Module defining a watched loop -> the watched module that gathers it (a
#: module may re-export loops defined in modules of its own).
_owner: dict[str, str] = {}
_listening = False


def _message(what: str, seconds: int) -> str:
    return (
        f"missingkernels: compiling {what} with numba (first use after "
        f"installing: about {seconds} s, once; the machine code is cached on "
        "disk for later runs)"
    )


def _listen() -> None:
    """Log the notice when numba actually compiles a watched module's loop.

    numba raises its ``"numba:compile"`` event only for a real compilation
    (not when the machine code is loaded from the disk cache), so a loop
    compiled later than the module's first use (e.g. the mixed kernel's,
    after the RBF kernels' are cached) is announced too, and only then.
    """
    global _listening
    if _listening:
        return
    try:
        from numba.core import event

        class _Notice(event.Listener):  # type: ignore[misc]
            def on_start(self, ev: Any) -> None:
                data = ev.data or {}
                func = getattr(data.get("dispatcher"), "py_func", None)
                name = _owner.get(getattr(func, "__module__", None) or "")
                if name in _watched and name not in _noticed:
                    _noticed.add(name)
                    what, seconds = _watched[name]
                    logger.warning(_message(what, seconds))

            def on_end(self, ev: Any) -> None:
                pass

        event.register("numba:compile", _Notice())
    except Exception:  # pragma: no cover - numba's event API changed
        return
    _listening = True


def needs_compiling(module: ModuleType) -> bool:
    """Whether the module's compiled functions would be compiled on use.

    True when none of its cached entry points (dispatchers that are not
    inlined into the others) has a valid on-disk cache yet (first use after
    installing), or when one has a cache written for other sources or another
    numba (an upgrade). An entry point that has never run while others have
    (a loop kept for rare inputs) compiles on its own first use, briefly,
    without a notice: otherwise every process would announce it. Reads
    numba's cache index through numba's own cache objects; with a numba whose
    internals differ, answers False (no notice rather than a wrong one).
    """
    import os

    try:
        from numba.core.dispatcher import Dispatcher

        any_valid = False
        for obj in vars(module).values():
            if not isinstance(obj, Dispatcher):
                continue
            if obj.signatures:
                any_valid = True  # already compiled in this process
                continue
            if obj.targetoptions.get("inline", "never") != "never":
                continue  # compiled as part of its callers
            cache = getattr(obj, "_cache", None)
            cache_file = getattr(cache, "_cache_file", None)
            if cache_file is None:
                continue  # cache=False: nothing to say about it
            if cache_file._load_index():
                any_valid = True
            elif os.path.exists(cache_file._index_path):
                return True  # stale: other sources or another numba
    except Exception:  # pragma: no cover - numba internals changed
        return False
    return not any_valid


def notice_if_compiling(module: ModuleType, what: str, seconds: int = 20) -> bool:
    """Log once per process that ``module``'s loops are about to be compiled.

    Parameters
    ----------
    module : module
        A module of ``@njit(cache=True)`` functions (defined there or imported
        from modules of its own), imported, not yet called.
    what : str
        What is compiled, for the message (e.g. ``"the RBF kernels' loops"``).
    seconds : int, default=20
        The usual compile time, for the message.

    Returns
    -------
    noticed : bool
        Whether the message was logged by this call. If not, the message is
        logged later, once, when numba does compile one of the module's loops
        (one not run before, e.g. a kernel's own loop).
    """
    _watched[module.__name__] = (what, seconds)
    _owner[module.__name__] = module.__name__
    for obj in vars(module).values():
        defined_in = getattr(getattr(obj, "py_func", None), "__module__", None)
        if isinstance(defined_in, str):
            _owner.setdefault(defined_in, module.__name__)
    _listen()
    if module.__name__ in _noticed or not needs_compiling(module):
        return False
    _noticed.add(module.__name__)
    logger.warning(_message(what, seconds))
    return True
