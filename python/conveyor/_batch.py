"""A Loader's batch_transform: torchvision v2's MixUp and CutMix (or conveyor.transforms'), or a
RandomChoice of them, read into the ops the C++ pipeline runs on each finished batch."""
from typing import Any, List, Optional, Tuple

from . import _args
from . import _conveyor
from . import transforms as T

BatchOps = Tuple[List[Tuple[str, float, int]], List[float]]


def _op(t: Any, where: str) -> Tuple[str, float, int]:
    module, name = type(t).__module__, type(t).__name__
    ours = isinstance(t, (T.MixUp, T.CutMix))
    if not ours and not (module.startswith("torchvision.transforms.v2") and name in ("MixUp", "CutMix")):
        raise _conveyor.ConfigError(f"Loader: batch_transform{where} ({name}) is not a batch transform conveyor runs: "
                                    "MixUp, CutMix, or a RandomChoice of them (torchvision's v2 or conveyor.transforms')")
    who = f"batch_transform{where} ({name})"
    if t.num_classes is None:
        raise _conveyor.ConfigError(f"Loader: {who} needs num_classes: the loader's labels are class indices, which "
                                    "it makes one-hot")
    return (name.lower(), _args.real(who, "alpha", t.alpha), _args.integer(who, "num_classes", t.num_classes, 1))


def batch_ops(transform: Any) -> Optional[BatchOps]:
    """(ops, weights) for the C++ loader, or None for no batch transform."""
    if transform is None:
        return None
    module, name = type(transform).__module__, type(transform).__name__
    if name == "RandomChoice" and (module.startswith("torchvision.transforms.v2") or isinstance(transform, T.RandomChoice)):
        ops = [_op(t, f".transforms[{k}]") for k, t in enumerate(transform.transforms)]
        p = [] if transform.p is None else [_args.real("Loader: batch_transform (RandomChoice)", "p", w) for w in transform.p]
        return ops, p
    return [_op(transform, "")], []

