"""What the probe wraps inside transformers, and the check that it is still there.

The probe replaces a handful of methods of transformers' continuous-batching classes for
the length of a run. Those are private internals: a new transformers release may rename
one, change its arguments or stop calling it, and a probe that silently wrapped nothing
would write a log with no steps that still looked like a run. So before a run the probe
checks every wrapped method's presence and parameter names, and refuses with one error
that names what changed; the versions it was written against are pinned in
requirements.txt and recorded in every log.
"""
from __future__ import annotations

import importlib
import inspect

WRITTEN_FOR = {"transformers": "5.25.0", "torch": "2.13.0"}
CB = "transformers.generation.continuous_batching"

# (module, class, method) -> the parameter names the probe relies on
WRAPPED = {
    (f"{CB}.continuous_api", "ContinuousBatchProcessor", "prepare_next_batch"): ("self",),
    (f"{CB}.continuous_api", "ContinuousBatchProcessor", "_generation_step"): ("self", "model"),
    (f"{CB}.continuous_api", "ContinuousBatchProcessor", "update_batch"): ("self",),
    (f"{CB}.offloading_manager", "OffloadingManager", "offload_requests"): ("self",),
    (f"{CB}.offloading_manager", "OffloadingManager", "restore_scheduled_requests"): ("self", "requests_in_batch"),
    (f"{CB}.requests", "RequestState", "update_and_check_completion"): ("self", "token_id", "logprob"),
    (f"{CB}.requests", "RequestState", "create_equivalent_initial_request"): ("self",),
}
# attributes read from the objects the wrapped methods receive
READ = {
    (f"{CB}.requests", "RequestState"): ("request_id", "_timestamps", "generated_tokens", "is_cpu_offloaded",
                                         "_true_initial_tokens", "record_timestamps"),
    (f"{CB}.requests", "FutureRequestState"): ("state", "query_length", "has_new_token"),
    (f"{CB}.continuous_api", "ContinuousBatchingManager"): ("add_request", "get_result", "is_running", "stop"),
}
# module globals replaced for a run (replay.swap_pool_on_cpu: the swap pool unpinned on a CPU)
MODULE_GLOBALS = {f"{CB}.offloading_manager": ("torch",)}


class ChangedInternals(RuntimeError):
    """transformers no longer has an internal the probe wraps, in the form it expects."""


def _members(cls) -> set:
    names = set(getattr(cls, "__dataclass_fields__", {})) | set(getattr(cls, "__slots__", ()))
    return names | set(dir(cls))


def problems() -> list[str]:
    """Each wrapped or read internal that is missing or changed, in words (empty: all there)."""
    out = []
    for (mod, cls_name, meth), params in WRAPPED.items():
        where = f"{mod}.{cls_name}.{meth}"
        try:
            cls = getattr(importlib.import_module(mod), cls_name)
        except (ImportError, AttributeError) as e:
            out.append(f"{mod}.{cls_name} is gone ({type(e).__name__}: {e})")
            continue
        fn = cls.__dict__.get(meth)
        if fn is None or not callable(fn):
            out.append(f"{where} is gone")
            continue
        got = tuple(inspect.signature(fn).parameters)
        if got[:len(params)] != params or any(
                p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                for p in list(inspect.signature(fn).parameters.values())[len(params):]):
            out.append(f"{where} now takes ({', '.join(got)}), the probe wraps ({', '.join(params)})")
    for (mod, cls_name), attrs in READ.items():
        try:
            cls = getattr(importlib.import_module(mod), cls_name)
        except (ImportError, AttributeError) as e:
            out.append(f"{mod}.{cls_name} is gone ({type(e).__name__}: {e})")
            continue
        missing = [a for a in attrs if a not in _members(cls)]
        if missing:
            out.append(f"{mod}.{cls_name} has no {', '.join(missing)}")
    for mod, names in MODULE_GLOBALS.items():
        missing = [n for n in names if not hasattr(importlib.import_module(mod), n)]
        if missing:
            out.append(f"{mod} has no module-level {', '.join(missing)}")
    return out


def versions() -> dict:
    """The installed versions of the libraries the probe was written for."""
    out = {}
    for name in WRITTEN_FOR:
        try:
            out[name] = importlib.import_module(name).__version__
        except ImportError:
            out[name] = None
    return out


def check() -> dict:
    """The installed versions, or ChangedInternals naming every internal that moved."""
    found = versions()
    if found["transformers"] is None or found["torch"] is None:
        raise ChangedInternals("the real-engine probe needs torch and transformers "
                               f"(pinned in requirements.txt: {', '.join(f'{k}=={v}' for k, v in WRITTEN_FOR.items())})")
    bad = problems()
    if bad:
        raise ChangedInternals(
            f"transformers {found['transformers']} has changed the internals the probe wraps (written for "
            f"{WRITTEN_FOR['transformers']}): " + "; ".join(bad)
            + ". Install the pinned version (requirements.txt) or update engine/real/internals.py and the probe.")
    return found
