"""helix: the sharding planner and compiler for LLM decoding, from Python.

The functions run helix's own command line in process (the same options,
checks and one-line errors as `helix import|plan|cost|compile`) and helix-opt
on a string. Keyword arguments are the CLI's flags with '-' written '_':
``plan(model, hardware="h200", max_gpus=16)`` is ``helix plan --hardware
h200 --max-gpus 16``. A bad value raises :class:`Error` with the CLI's
message. docs/embedding.md has worked examples.
"""

import json as _json
import os as _os
import warnings as _warnings

from . import _helix

__all__ = ["Error", "Model", "import_config", "from_torch", "plan", "cost",
           "compile",
           "run_pipeline"]


class Error(Exception):
    """A helix command failed: ``str(error)`` is the CLI's error line,
    ``error.stderr`` all it printed there, ``error.exit_code`` its code."""

    def __init__(self, message, stderr="", exit_code=1):
        super().__init__(message)
        self.stderr = stderr
        self.exit_code = exit_code


def _raise(err, exit_code, fallback):
    lines = [l for l in err.splitlines() if l.strip()]
    errors = [l for l in lines if ": error:" in l]
    message = errors[-1] if errors else (lines[0] if lines else fallback)
    raise Error(message, err, exit_code)


def _warn(err):
    for line in err.splitlines():
        if ": warning:" in line or ": note:" in line:
            _warnings.warn(line, stacklevel=3)


def _run(args, model=None, memory=()):
    text, name = (None, "") if model is None else (model.text, model.source)
    rc, out, err, files = _helix.run(list(args), text, name, list(memory))
    if rc != 0:
        _raise(err, rc, "helix %s: error: failed" % args[0])
    _warn(err)
    return out, files


class Model:
    """A model helix can plan: a Hugging Face config.json's text, or helix
    model IR. Made by :func:`import_config` or :meth:`Model.from_mlir`."""

    def __init__(self, text, source="", is_config=True):
        self.text = text
        #: What messages call it; its stem names the model ("" = model_type).
        self.source = source
        self.is_config = is_config
        self._ir = None if is_config else text

    @classmethod
    def from_mlir(cls, text, source=""):
        """helix model IR text (what :meth:`to_mlir` or `helix import`
        print)."""
        return cls(text, source, is_config=False)

    def to_mlir(self):
        """The model IR: one decode step, every layer (`helix import`)."""
        if self._ir is None:
            self._ir, _ = _run(["import", "-"], self)
        return self._ir

    def summary(self):
        """A readable summary of the layers (`helix import --summary`)."""
        if not self.is_config:
            raise Error("helix import: error: --summary reads a config.json, "
                        "not model IR")
        out, _ = _run(["import", "-", "--summary"], self)
        return out

    def __repr__(self):
        kind = "config" if self.is_config else "model IR"
        return "helix.Model(%s%s)" % (kind, ", " + self.source
                                      if self.source else "")


def import_config(path_or_dict):
    """A Hugging Face config.json (a path, or the parsed dict) as a
    :class:`Model`, checked as `helix import` checks it."""
    if isinstance(path_or_dict, dict):
        name = path_or_dict.get("_name_or_path") or ""
        source = _os.path.basename(str(name).rstrip("/")) + ".json" \
            if name else ""
        try:
            text = _json.dumps(path_or_dict, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise Error("helix import: error: %s: not a JSON object: %s"
                        % (source or "<dict>", e)) from None
        model = Model(text, source)
    elif isinstance(path_or_dict, (str, bytes, _os.PathLike)):
        path = _os.fsdecode(path_or_dict)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise Error("helix import: error: cannot read %s: %s"
                        % (path, e.strerror or e)) from None
        except UnicodeDecodeError:
            raise Error("helix import: error: %s: not UTF-8 text"
                        % path) from None
        model = Model(text, path)
    else:
        raise Error("helix import: error: expected a config.json path or a "
                    "dict, got %s" % type(path_or_dict).__name__)
    model.to_mlir()  # the import's checks, now
    return model


def from_torch(module, example_inputs, name="", max_position_embeddings=None):
    """A PyTorch decoder as a :class:`Model`, with no config file: the module
    is traced at the aten level with `example_inputs` (token ids, shape
    [batch, positions]; the example needs more positions than a sliding
    window to show it), and its embedding, norms, attention (heads, KV
    heads, RoPE theta, causal mask and window), output projection, gated MLP
    or MoE and LM head are recognised in the graph and its parameters. They
    become the Hugging Face configuration they spell (llama, mistral,
    mixtral), imported as :func:`import_config` imports it; `name` names the
    model, `max_position_embeddings` is the longest context it supports
    (the graph does not say). The recognised configuration is the model's
    ``recognised`` attribute. Needs PyTorch (Debian's python3-torch);
    docs/embedding.md lists what is recognised."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise Error("helix.from_torch: error: PyTorch is not importable "
                    "(Debian: apt install python3-torch)") from None
    from . import _torch_frontend
    return _torch_frontend.from_torch(module, example_inputs, name=name,
                                      max_position_embeddings=
                                      max_position_embeddings)


def _as_model(model):
    if isinstance(model, Model):
        return model
    return import_config(model)


# Options given more than once on the command line, not comma-joined.
_REPEATED = {"layer_layout"}
# Options that take on / off: True and False mean those.
_ON_OFF = {"per_layer", "hopb"}


def _flags(options):
    flags = []
    for key, value in options.items():
        name = "--" + key.replace("_", "-")
        if key in _ON_OFF and isinstance(value, bool):
            value = "on" if value else "off"
        if value is None or value is False:
            continue
        if value is True:
            flags.append(name)
        elif isinstance(value, dict):  # layout={"kvp": 4, "tpa": 8}
            flags += [name, ",".join("%s=%s" % kv for kv in value.items())]
        elif isinstance(value, (list, tuple)):
            if key in _REPEATED:
                for v in value:
                    flags += [name, str(v)]
            else:
                flags += [name, ",".join(str(v) for v in value)]
        else:
            flags += [name, str(value)]
    return flags


def plan(model, **options):
    """Searches layouts (`helix plan`): the content of `helix plan --json`
    as a dict. Options: hardware, context, max_gpus, min_gpus, dtype,
    weights_dtype, kv_dtype, compute_dtype, ttl_ms, strategies (a list or
    "helix,tp"), per_layer, mtp, acceptance, routing_skew,
    balanced_experts, emit_config with output, ..."""
    m = _as_model(model)
    _, files = _run(["plan", "--model", "-"] + _flags(options) +
                    ["--json", "<plan.json>"], m, ["<plan.json>"])
    return _json.loads(files["<plan.json>"])


def cost(model, **options):
    """Prices one configuration (`helix cost`): the content of `helix cost
    --json` as a dict. Needs batch and layout (a string or a dict)."""
    m = _as_model(model)
    _, files = _run(["cost", "--model", "-"] + _flags(options) +
                    ["--json", "<cost.json>"], m, ["<cost.json>"])
    return _json.loads(files["<cost.json>"])


def compile(model, emit="rank-ir", out=None, **options):
    """Compiles one configuration (`helix compile`): the rank IR or planned
    IR as text, or, with emit="project" and out=DIR, writes the CMake
    project there and returns DIR. Needs gpus and batch."""
    m = _as_model(model)
    args = ["compile", "--model", "-", "--emit", emit] + _flags(options)
    if out is not None:
        args += ["--output", _os.fsdecode(out)]
    text, _ = _run(args, m)
    return _os.fsdecode(out) if out is not None else text


def run_pipeline(mlir_text, pipeline):
    """helix-opt as a function: parses `mlir_text` with the helix dialects,
    runs the pass pipeline (e.g. "builtin.module(helix-search-layouts{gpus=32
    batch=8})") and returns the resulting IR. Diagnostics raise Error."""
    ok, text = _helix.run_pipeline(mlir_text, pipeline)
    if not ok:
        lines = [l for l in text.splitlines() if l.strip()]
        raise Error(lines[0] if lines else "helix-opt: error: failed", text)
    return text
