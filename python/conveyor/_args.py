"""Argument checks for the public classes: a wrong type or an unknown choice raises an error that
names the class, the parameter and the value, before anything reaches the C++ binding (whose own
message would be its overload signature)."""
import operator
import os
from typing import Any, Literal, Optional, Sequence, Union

from . import _conveyor

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]

# The named choices of the Loader's and Preprocessor's options, for type checkers: the C++
# declarations' (`_conveyor.option_choices()`, which tests/python/test_typing.py holds them to), and
# the Python side's own output and image_backend.
OnError = Literal["raise", "skip"]
Decode = Literal["cpu", "gpu", "auto"]
GpuUpsampling = Literal["interpolated", "replicated"]
Output = Literal["torch", "numpy", "dlpack"]
ImageBackend = Literal["pil", "tensor"]


def _shown(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


# The C++ parameters' ranges: an int outside them would reach the binding, whose message is its
# overload signatures. Arguments are C++ ints unless a call says otherwise.
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
UINT64_MAX = 2**64 - 1


def integer(who: str, name: str, value: Any, minimum: Optional[int] = None, maximum: int = INT32_MAX) -> int:
    """`value` as an int: ints and objects with __index__ (numpy integers), not bools or floats, in
    [minimum, maximum] (a C++ int's range unless given)."""
    if isinstance(value, bool):
        raise TypeError(f"{who}: {name} must be an int, got {_shown(value)}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"{who}: {name} must be an int, got {_shown(value)}") from None
    lowest = INT32_MIN if minimum is None else minimum
    if number < lowest:
        raise _conveyor.ConfigError(f"{who}: {name} must be >= {lowest}, got {number}")
    if number > maximum:
        raise _conveyor.ConfigError(f"{who}: {name} must be <= {maximum}, got {number}")
    return number


def optional_integer(who: str, name: str, value: Any, minimum: Optional[int] = None,
                     maximum: int = INT32_MAX) -> Optional[int]:
    return None if value is None else integer(who, name, value, minimum, maximum)


def flag(who: str, name: str, value: Any) -> bool:
    """`value` as a bool: bools and the ints 0 and 1 (a string such as "False" would be true)."""
    if isinstance(value, bool):
        return value
    try:
        number = operator.index(value)
    except TypeError:
        number = None
    if number in (0, 1):
        return bool(number)
    raise TypeError(f"{who}: {name} must be True or False, got {_shown(value)}")


def real(who: str, name: str, value: Any) -> float:
    """`value` as a float: ints and floats, not bools or strings."""
    if isinstance(value, (bool, str, bytes)) or not hasattr(type(value), "__float__"):
        raise TypeError(f"{who}: {name} must be a number, got {_shown(value)}")
    return float(value)


def optional_real(who: str, name: str, value: Any) -> Optional[float]:
    return None if value is None else real(who, name, value)


def choice(who: str, name: str, value: Any, choices: Sequence[str]) -> str:
    """`value`, one of `choices`."""
    if not isinstance(value, str) or value not in choices:
        listed = ", ".join(repr(c) for c in choices)
        raise _conveyor.ConfigError(f"{who}: {name} must be one of {listed}, got {value!r}")
    return value


def text(who: str, name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{who}: {name} must be a str, got {_shown(value)}")
    return value


def path(who: str, name: str, value: Any) -> bytes:
    """A path (str, bytes or os.PathLike) as the bytes the OS uses: os.fsencode's, so a name in any
    encoding reaches the file system unchanged."""
    try:
        return os.fsencode(value)
    except TypeError:
        raise TypeError(f"{who}: {name} must be a path (str, bytes or os.PathLike), got {_shown(value)}") from None


_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def byte_size(who: str, name: str, value: Any) -> int:
    """`value` as bytes: an int, or a string of a number and a unit ("8GiB", "512 MB", "1.5GiB")."""
    if isinstance(value, str):
        text = value.strip().upper()
        digits = text.rstrip("KMGTIB ")
        unit = text[len(digits):].strip()
        try:
            number = float(digits)
        except ValueError:
            number = -1.0
        if unit not in _UNITS or not number >= 0:
            raise _conveyor.ConfigError(f"{who}: {name} must be bytes, an int or a size such as '8GiB' or '512MB', "
                                        f"got {value!r}")
        size = int(number * _UNITS[unit])
        if size > UINT64_MAX:
            raise _conveyor.ConfigError(f"{who}: {name} must be at most {UINT64_MAX} bytes, got {value!r}")
        return size
    return integer(who, name, value, 0, UINT64_MAX)
