"""A Loader's batch_transform: torchvision v2's MixUp and CutMix (or conveyor.transforms'), a
RandomChoice of them, or timm's Mixup (modes 'batch', 'pair' and 'elem'), read into the ops the C++ pipeline
runs on each finished batch."""
from typing import Any, List, Optional, Tuple

from . import _args
from . import _conveyor
from . import transforms as T

Op = Tuple[str, List[float]]
BatchOps = Tuple[List[Op], List[float]]

_WHAT = ("MixUp, CutMix or a RandomChoice of them (torchvision's v2 or conveyor.transforms'), or timm's "
         "timm.data.Mixup")


def _torchvision(t: Any, where: str) -> Op:
    module, name = type(t).__module__, type(t).__name__
    ours = isinstance(t, (T.MixUp, T.CutMix))
    if not ours and not (module.startswith("torchvision.transforms.v2") and name in ("MixUp", "CutMix")):
        raise _conveyor.ConfigError(f"Loader: batch_transform{where} ({name}) is not a batch transform conveyor runs: "
                                    f"{_WHAT}")
    who = f"batch_transform{where} ({name})"
    if t.num_classes is None:
        raise _conveyor.ConfigError(f"Loader: {who} needs num_classes: the loader's labels are class indices, which "
                                    "it makes one-hot")
    return name.lower(), [_args.real(who, "alpha", t.alpha), float(_args.integer(who, "num_classes", t.num_classes, 1))]


_TIMM_MODES = ("batch", "pair", "elem")


def _timm(t: Any) -> Op:
    """timm.data.Mixup's arguments, as it keeps them."""
    who = "batch_transform (timm Mixup)"
    if t.mode not in _TIMM_MODES:
        raise _conveyor.ConfigError(f"Loader: {who} has mode={t.mode!r}: timm's modes are 'batch', 'pair' and 'elem'")
    if getattr(t, "multi_label", False):
        raise _conveyor.ConfigError(f"Loader: {who} has multi_label=True: the loader's labels are class indices")
    if not t.mixup_enabled:
        raise _conveyor.ConfigError(f"Loader: {who} has mixup_enabled=False: pass no batch_transform instead")
    minmax = [-1.0, -1.0] if t.cutmix_minmax is None else [_args.real(who, "cutmix_minmax", v) for v in t.cutmix_minmax]
    return "timm", [_args.real(who, "mixup_alpha", t.mixup_alpha), _args.real(who, "cutmix_alpha", t.cutmix_alpha),
                    *minmax, _args.real(who, "prob", t.mix_prob), _args.real(who, "switch_prob", t.switch_prob),
                    float(_args.flag(who, "correct_lam", t.correct_lam)),
                    _args.real(who, "label_smoothing", t.label_smoothing),
                    float(_args.integer(who, "num_classes", t.num_classes, 1)), float(_TIMM_MODES.index(t.mode))]


def batch_ops(transform: Any) -> Optional[BatchOps]:
    """(ops, weights) for the C++ loader, or None for no batch transform."""
    if transform is None:
        return None
    module, name = type(transform).__module__, type(transform).__name__
    if module == "timm.data.mixup" and name == "Mixup":
        return [_timm(transform)], []
    if name == "RandomChoice" and (module.startswith("torchvision.transforms.v2") or isinstance(transform, T.RandomChoice)):
        ops = [_torchvision(t, f".transforms[{k}]") for k, t in enumerate(transform.transforms)]
        p = [] if transform.p is None else [_args.real("Loader: batch_transform (RandomChoice)", "p", w) for w in transform.p]
        return ops, p
    return [_torchvision(transform, "")], []
