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

logger = logging.getLogger("missingkernels")

_noticed: set[str] = set()


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
        A module of ``@njit(cache=True)`` functions, imported, not yet called.
    what : str
        What is compiled, for the message (e.g. ``"the RBF kernels' loops"``).
    seconds : int, default=20
        The usual compile time, for the message.

    Returns
    -------
    noticed : bool
        Whether the message was logged by this call.
    """
    if module.__name__ in _noticed or not needs_compiling(module):
        return False
    _noticed.add(module.__name__)
    logger.warning(
        "missingkernels: compiling %s with numba (first use after installing: "
        "about %d s, once; the machine code is cached on disk for later runs)",
        what,
        seconds,
    )
    return True
