"""The Python package as its users call it (docs/embedding.md): the same
plans, costs and IR as the helix command line, and the CLI's errors as
helix.Error. Run by ctest (python-api) with the build's package on
PYTHONPATH, HELIX_BIN the helix executable, HELIX_MODELS the test configs."""
import json
import os
import subprocess
import warnings

import pytest

import helix

MODELS = os.environ["HELIX_MODELS"]
HELIX = os.environ["HELIX_BIN"]


def model_path(name):
    return os.path.join(MODELS, name + ".json")


def strip_times(d):
    """A plan without its wall times (search_seconds, at any depth)."""
    if isinstance(d, dict):
        return {k: strip_times(v) for k, v in d.items()
                if k != "search_seconds"}
    if isinstance(d, list):
        return [strip_times(v) for v in d]
    return d


def cli_json(tmp_path, command, name, *flags):
    out = tmp_path / (command + ".json")
    subprocess.run([HELIX, command, "--model", model_path(name)] +
                   list(flags) + ["--json", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


# The anchor models at their presets' defaults, and a Hopper plan.
ANCHORS = [
    ("DeepSeek-R1", {}, []),
    ("Llama-3.1-405B", {}, []),
    ("Qwen3-235B-A22B", {}, []),
    ("gpt-oss-120b", {"max_gpus": 32}, ["--max-gpus", "32"]),
    ("Llama-3.1-70B", {"hardware": "h200", "dtype": "fp8", "max_gpus": 16,
                       "strategies": ["helix", "tp", "kvp"]},
     ["--hardware", "h200", "--dtype", "fp8", "--max-gpus", "16",
      "--strategies", "helix,tp,kvp"]),
]


@pytest.mark.parametrize("name,kwargs,flags", ANCHORS,
                         ids=[a[0] for a in ANCHORS])
def test_plan_equals_cli(tmp_path, name, kwargs, flags):
    py = helix.plan(helix.import_config(model_path(name)), **kwargs)
    cli = cli_json(tmp_path, "plan", name, *flags)
    assert strip_times(py) == strip_times(cli)
    assert py["model"] == name
    assert py["frontiers"]


def test_readme_example():
    gains = helix.plan(helix.import_config(model_path("DeepSeek-R1")),
                       hardware="gb200-nvl72")["gains"]
    assert gains["interactivity"] > 1


def test_config_as_dict_or_path():
    with open(model_path("Llama-3.1-8B")) as f:
        config = json.load(f)
    from_dict = helix.plan(helix.import_config(config), hardware="h100",
                           dtype="fp8", max_gpus=8)
    from_path = helix.plan(model_path("Llama-3.1-8B"), hardware="h100",
                           dtype="fp8", max_gpus=8)
    assert strip_times(from_dict)["frontiers"] == \
        strip_times(from_path)["frontiers"]


def test_model_ir_and_summary():
    m = helix.import_config(model_path("tiny-llama-tied"))
    ir = m.to_mlir()
    assert "func.func @decode_step" in ir
    assert 'name = "tiny-llama-tied"' in ir
    assert "layers" in m.summary()
    # The IR plans as the config does.
    a = helix.plan(m, max_gpus=8)
    b = helix.plan(helix.Model.from_mlir(ir), max_gpus=8)
    assert strip_times(a)["frontiers"] == strip_times(b)["frontiers"]


def test_cost_equals_cli(tmp_path):
    py = helix.cost(model_path("DeepSeek-R1"), batch=8,
                    layout={"kvp": 8, "tpa": 1, "tpf": 8, "ep": 1})
    cli = cli_json(tmp_path, "cost", "DeepSeek-R1", "--batch", "8",
                   "--layout", "kvp=8,tpa=1,tpf=8,ep=1")
    assert py == cli
    assert py["ttl_ms"] > 0 if "ttl_ms" in py else True


def test_compile_rank_ir_and_project(tmp_path):
    m = helix.import_config(model_path("tiny-llama-tied"))
    flags = ["--gpus", "2", "--batch", "2", "--layout", "kvp=2,tpa=1,tpf=2"]
    cli = subprocess.run([HELIX, "compile", "--model",
                          model_path("tiny-llama-tied")] + flags,
                         check=True, capture_output=True, text=True).stdout
    rank_ir = helix.compile(m, gpus=2, batch=2, layout="kvp=2,tpa=1,tpf=2")
    assert rank_ir == cli
    planned = helix.compile(m, emit="planned-ir", gpus=2, batch=2,
                            layout="kvp=2,tpa=1,tpf=2")
    assert "helix.plan = #helix.plan<" in planned
    out = helix.compile(m, emit="project", out=tmp_path / "proj", gpus=2,
                        batch=2, layout="kvp=2,tpa=1,tpf=2")
    assert os.path.isfile(os.path.join(out, "CMakeLists.txt"))
    assert os.path.isfile(os.path.join(out, "plan.json"))


def test_run_pipeline():
    ir = helix.import_config(model_path("tiny-deepseek")).to_mlir()
    out = helix.run_pipeline(
        ir, "builtin.module(helix-search-layouts{gpus=8 batch=4 "
            "context=65536})")
    assert "helix.plan = #helix.plan<strategy = helix" in out
    assert "#helix.layout<gpus = 8, kvp = 8" in out
    # The same as helix-opt.
    opt = os.path.join(os.path.dirname(HELIX), "helix-opt")
    cli = subprocess.run([opt, "--pass-pipeline=builtin.module("
                          "helix-search-layouts{gpus=8 batch=4 "
                          "context=65536})"], input=ir, check=True,
                         capture_output=True, text=True).stdout
    assert out == cli


def test_run_pipeline_errors():
    ir = helix.import_config(model_path("tiny-deepseek")).to_mlir()
    with pytest.raises(helix.Error, match="no-such-pass"):
        helix.run_pipeline(ir, "builtin.module(no-such-pass)")
    with pytest.raises(helix.Error, match="<input>:1"):
        helix.run_pipeline("func.func @f(", "builtin.module()")
    with pytest.raises(helix.Error, match="strategy"):
        helix.run_pipeline(ir, "builtin.module(helix-search-layouts{gpus=8 "
                               "batch=4 strategy=nope})")


@pytest.mark.parametrize("call,message", [
    (lambda m: helix.plan(m, hardware="no-such-gpu"),
     "helix plan: error: unknown hardware 'no-such-gpu'"),
    (lambda m: helix.plan(m, dtype="fp5"), "helix plan: error: --dtype"),
    (lambda m: helix.plan(m, max_gpus=0), "helix plan: error: --max-gpus"),
    (lambda m: helix.plan(m, no_such_flag=1), "--no-such-flag"),
    (lambda m: helix.cost(m, batch=1, layout="kvp=3,tpf=5"),
     "helix cost: error:"),
    (lambda m: helix.compile(m, emit="project", gpus=1, batch=1),
     "helix compile: error: --emit project: the project directory"),
])
def test_errors_are_the_cli_lines(call, message):
    m = helix.import_config(model_path("tiny-llama-tied"))
    with pytest.raises(helix.Error) as e:
        call(m)
    assert str(e.value).startswith(message) or message in str(e.value)
    assert e.value.exit_code != 0


def test_on_off_options_take_bools():
    m = helix.import_config(model_path("tiny-llama-tied"))
    assert "per_layer" not in helix.plan(m, max_gpus=8, per_layer=False)
    assert "per_layer" in helix.plan(m, max_gpus=8, per_layer=True)
    off = helix.cost(m, batch=2, layout="kvp=2,tpa=1,tpf=2", hopb=False)
    assert off == helix.cost(m, batch=2, layout="kvp=2,tpa=1,tpf=2",
                             hopb="off")


def test_bad_configs():
    with pytest.raises(helix.Error, match="cannot read /no/such.json"):
        helix.import_config("/no/such.json")
    with pytest.raises(helix.Error, match="hidden_size"):
        helix.import_config({"model_type": "llama"})
    with pytest.raises(helix.Error, match="model_type"):
        helix.import_config({"_name_or_path": "org/Thing", "hidden_size": 8})
    with pytest.raises(helix.Error, match="not a JSON object"):
        helix.import_config({"model_type": "llama", "hidden_size": 1e999})
    with pytest.raises(helix.Error, match="expected a config.json path"):
        helix.import_config(42)


def test_warnings_reach_python(tmp_path):
    # vLLM bounds decode context parallelism by TP / KV heads: gpt-oss's
    # Helix plan runs as the nearest configuration it can, and helix warns.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        helix.plan(model_path("gpt-oss-120b"), emit_config="vllm",
                   output=str(tmp_path / "serve.sh"))
    assert (tmp_path / "serve.sh").is_file()
    assert any("warning:" in str(w.message) for w in caught)
