"""What a learner's function must leave as it found it: its arguments and the libraries.

The checker passes its own objects (no copies), so that a function which changes them in place
(`h.zero_()`, an in-place softmax, `refs.sort()`, `model.decoder.feed_context = False`) is
caught: `freeze` takes a snapshot of every argument before the call and `changed` compares it
afterwards (tensors by value, lists, dicts and objects' public attributes item by item, modules
by their submodules, their train/eval mode, their public attributes and their weights), naming
what changed in words.

`Globals` does the same for what every later cell relies on: the objects that the names of
torch, math, random, the builtins and the course's own `lib` modules are bound to (a learner
who writes `torch.equal = ...`, even `= torch.nn.functional.pad`, would make every later check,
and their own later code, wrong), PyTorch's gradient mode, default dtype and default device,
and the recursion limit. What changed is put back, and the checker says so.
"""

from __future__ import annotations

import sys

import torch

# A snapshot is a tuple (kind, ...). Containers keep each item's id, so that an item replaced by
# another object counts as a change of the container, and an item changed in place as a change
# of the item (the message then names the item: `batch.src`, `vocab.stoi`).
_ATOMS = (str, bytes, int, float, complex, bool, type(None), range)
_MAX_DEPTH = 6


def freeze(x, seen: frozenset = frozenset(), depth: int = 0):
    """A snapshot of `x` that `changed` compares `x` with after the call."""
    if isinstance(x, _ATOMS):
        return ("atom", x)
    if depth > _MAX_DEPTH or id(x) in seen or isinstance(x, torch.Generator):
        return ("skip",)  # too deep, already seen, or meant to change (a generator draws)
    if torch.is_tensor(x):
        return ("tensor", x.detach().clone())
    seen = seen | {id(x)}
    if isinstance(x, torch.nn.Module):
        parts = {name: (id(m), m.training, _public(m, seen, depth, skip=("training",)))
                 for name, m in x.named_modules()}
        return ("module", parts,
                {k: v.detach().clone() for k, v in x.state_dict(keep_vars=True).items()})
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [(id(v), freeze(v, seen, depth + 1)) for v in x])
    if isinstance(x, dict):
        return ("dict", {k: (id(v), freeze(v, seen, depth + 1)) for k, v in x.items()}, list(x))
    if isinstance(x, (set, frozenset)):
        return ("set", frozenset(x))
    if hasattr(x, "__dict__") and not callable(x):
        return ("object", _public(x, seen, depth))
    return ("skip",)


def _public(x, seen: frozenset, depth: int, skip: tuple = ()) -> dict:
    """Snapshots of an object's public attributes (a module's submodules have their own)."""
    return {k: (id(v), freeze(v, seen, depth + 1)) for k, v in vars(x).items()
            if not k.startswith("_") and k not in skip and not isinstance(v, torch.nn.Module)}


def _same_tensor(a, b) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if torch.equal(a, b):
        return True
    return bool(((a == b) | (a.isnan() & b.isnan())).all()) if a.is_floating_point() else False


_HOW = {
    "tensor": ("e.g. {p}.zero_(), {p} += ... or {p}[i] = ...",
               "compute a new tensor instead ({p} = {p} + ... makes one)"),
    "list": ("e.g. {p}.sort(), {p}.append(...), shuffle({p}) or {p}[i] = ...",
             "build a new list instead (sorted({p}), {p} + [...])"),
    "dict": ("e.g. {p}[key] = ..., {p}.pop(key) or {p}.setdefault(...)",
             "build a new dict instead (dict({p}), {{**{p}, key: value}})"),
    "set": ("e.g. {p}.add(...) or {p}.discard(...)", "build a new set instead ({p} | {{...}})"),
    "object": ("e.g. {p}.attribute = ...", "leave it as it was and keep your own variables"),
}


def _message(kind: str, path: str) -> str:
    how, instead = _HOW[kind]
    return (f"your function changed its input `{path}` in place ({how.format(p=path)}); "
            f"{instead.format(p=path)}")


def changed(x, frozen, path: str) -> str | None:
    """None if `x` still equals its snapshot `frozen`, else the message naming what changed."""
    kind = frozen[0]
    if kind in ("atom", "skip"):
        return None
    if kind == "tensor":
        return None if _same_tensor(x, frozen[1]) else _message("tensor", path)
    if kind == "module":
        return _module_changed(x, frozen, path)
    if kind == "set":
        return None if set(x) == frozen[1] else _message("set", path)
    if kind in ("list", "tuple"):
        items = frozen[1]
        if len(x) != len(items) or any(id(v) != i and not _equal_atom(v, f)
                                       for v, (i, f) in zip(x, items)):
            return _message("list", path)
        return _first(changed(v, f, f"{path}[{j}]") for j, (v, (_, f)) in enumerate(zip(x, items)))
    if kind == "dict":
        items, order = frozen[1], frozen[2]
        if list(x) != order or any(id(x[k]) != i and not _equal_atom(x[k], f)
                                   for k, (i, f) in items.items()):
            return _message("dict", path)
        return _first(changed(x[k], f, f"{path}[{k!r}]") for k, (_, f) in items.items())
    if kind == "object":
        items = frozen[1]
        now = {k: v for k, v in vars(x).items() if not k.startswith("_")}
        if set(now) != set(items) or any(id(now[k]) != i and not _equal_atom(now[k], f)
                                         for k, (i, f) in items.items()):
            return _message("object", path)
        return _first(changed(now[k], f, f"{path}.{k}") for k, (_, f) in items.items())
    return None


def _module_changed(x, frozen, path: str) -> str | None:
    """A module and its submodules: the same submodules, modes, attributes and weights."""
    parts, weights = frozen[1], frozen[2]
    now = dict(x.named_modules())
    for name, (ident, training, attrs) in parts.items():
        where = f"{path}.{name}" if name else path
        m = now.get(name)
        if m is None or id(m) != ident:
            return (f"your function replaced or removed the submodule `{where}` and left it so; "
                    f"a function that uses a model must leave it as it found it")
        if m.training != training:
            mode, method = ("training", "train") if m.training else ("evaluation", "eval")
            return (f"your function switched `{where}` to {mode} mode ({where}.{method}()) and "
                    f"left it so; leave the model as you found it (in training mode dropout "
                    f"makes its outputs random)")
        public = {k: v for k, v in vars(m).items() if not k.startswith("_") and k != "training"
                  and not isinstance(v, torch.nn.Module)}
        for k, (i, f) in attrs.items():
            if k not in public:
                return f"your function deleted `{where}.{k}`; leave the model as you found it"
            if id(public[k]) != i and not _equal_atom(public[k], f):
                was = f" from {f[1]!r} to {public[k]!r}" if f[0] == "atom" else ""
                return (f"your function changed `{where}.{k}`{was} and left it so; leave the "
                        f"model as you found it (keep your own variable, or put the attribute "
                        f"back before returning)")
            inner = changed(public[k], f, f"{where}.{k}")
            if inner:
                return inner
        added = sorted(set(public) - set(attrs))
        if added:
            return (f"your function added `{where}.{added[0]}` to the model; keep your own "
                    f"variables instead")
    state = x.state_dict(keep_vars=True)
    for key, value in weights.items():
        if key not in state or not _same_tensor(state[key].detach(), value):
            return (f"your function changed the weights of `{path}` in place ({key}); it must "
                    f"only read the model (no optimizer step, no assignment to its parameters)")
    return None


def _first(messages) -> str | None:
    return next((m for m in messages if m), None)


def _equal_atom(value, frozen) -> bool:
    """An immutable item replaced by an equal one (ids of equal ints or strings may differ)."""
    return frozen[0] == "atom" and type(value) is type(frozen[1]) and value == frozen[1]


# ---------------------------------------------------------------------------------------------
# The libraries and the process-wide settings
# ---------------------------------------------------------------------------------------------

# Modules whose names a learner's function must not rebind, and classes whose methods it must
# not replace (a method set on torch.Tensor hides the real one), besides every `lib` module.
MODULES = ("builtins", "math", "random", "torch", "torch.nn", "torch.nn.functional")
CLASSES = (torch.Tensor, torch.nn.Module)


class Globals:
    """A snapshot of the libraries' names (the objects they are bound to), of PyTorch's
    gradient mode, default dtype and device, and of the recursion limit; `restore()` puts back
    what a call changed and returns a message naming it (None if nothing changed)."""

    def __init__(self):
        self.settings = [(s, s.get()) for s in _SETTINGS if s.available()]
        self.spaces = [(m, dict(vars(m))) for m in _modules()]
        self.classes = [(c, dict(vars(c))) for c in CLASSES]

    def restore(self) -> str | None:
        messages = []
        for setting, before in self.settings:  # first: a default dtype rebinds torch.Storage
            now = setting.get()
            if now != before:
                setting.put(before)
                messages.append(setting.message(before, now))
        names = []
        for module, before in self.spaces:
            now = vars(module)
            for k, v in before.items():  # a name rebound or deleted (new names are harmless:
                if _replaced(now.get(k, _MISSING), v):  # a submodule imported on first use)
                    setattr(module, k, v)
                    names.append(f"{module.__name__}.{k}")
        for cls, before in self.classes:
            now = dict(vars(cls))
            for k in now.keys() - before.keys():  # hides the inherited attribute
                if _replaced(now[k], _inherited(cls, k)):
                    delattr(cls, k)
                    names.append(f"{cls.__module__}.{cls.__qualname__}.{k}")
            for k, v in before.items():
                if _replaced(now.get(k, _MISSING), v):
                    setattr(cls, k, v)
                    names.append(f"{cls.__module__}.{cls.__qualname__}.{k}")
        if names:
            shown = ", ".join(f"`{n}`" for n in names[:3]) + (
                f" and {len(names) - 3} more" if len(names) > 3 else "")
            messages.insert(0, f"your function replaced {shown}, which every later cell (and "
                               f"this check) relies on; it has been put back: give your own "
                               f"functions names of their own instead of assigning to a "
                               f"library's")
        return "; ".join(messages) or None


_MISSING = object()


def _replaced(new, old) -> bool:
    """`new` is another object than `old`, and not a wrapper of it: a library wraps its own
    functions on first use (torch._dynamo wraps torch.manual_seed, with `__wrapped__` set)."""
    for _ in range(8):
        if new is old:
            return False
        new = getattr(new, "__wrapped__", _MISSING)
        if new is _MISSING:
            return True
    return True


def _inherited(cls, name: str):
    return next((vars(b)[name] for b in cls.__mro__[1:] if name in vars(b)), _MISSING)


class _Setting:
    """A process-wide setting that a learner's function can leave changed, and how to say so:
    `say(before, now)` what the function did, `how` what to do instead."""

    def __init__(self, get, put, say, how: str, needs: str = ""):
        self.get, self.put, self.say, self.how, self.needs = get, put, say, how, needs

    def available(self) -> bool:
        return not self.needs or hasattr(torch, self.needs)

    def message(self, before, now) -> str:
        return (f"your function {self.say(before, now)} for the whole notebook and left it so; "
                f"it has been put back: {self.how}")


def _put_device(device) -> None:
    torch.set_default_device(None if device == torch.device("cpu") else device)


_SETTINGS = (
    _Setting(torch.is_grad_enabled, torch.set_grad_enabled,
             lambda was, now: f"switched gradient tracking {'on' if now else 'off'} "
                              f"(torch.set_grad_enabled)",
             "use `with torch.no_grad():` around the lines that need it"),
    _Setting(torch.get_default_dtype, torch.set_default_dtype,
             lambda was, now: f"changed the default dtype from {was} to {now} "
                              f"(torch.set_default_dtype)",
             "give the tensors you make their own dtype (torch.zeros(..., dtype=...), "
             "x.double())"),
    _Setting(lambda: torch.get_default_device(), _put_device,
             lambda was, now: f"changed the default device from {was} to {now} "
                              f"(torch.set_default_device)",
             "give the tensors you make their own device (torch.zeros(..., device=...), "
             "x.to(device))", needs="get_default_device"),
    _Setting(sys.getrecursionlimit, sys.setrecursionlimit,
             lambda was, now: f"changed the recursion limit from {was} to {now} "
                              f"(sys.setrecursionlimit)",
             "write a function that needs a deeper recursion as a loop"),
)


def _modules() -> list:
    names = [n for n in list(sys.modules) if n in MODULES or n == "lib" or n.startswith("lib.")]
    return [m for m in map(sys.modules.get, names) if m is not None]
