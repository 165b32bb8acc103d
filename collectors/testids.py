"""Real-looking test identities and skip reasons for generated histories (demo, scale stores).

The real node ids and skip reasons of vLLM, SGLang and PyTorch come from a folder of
`<framework>-test-ids.txt` and `<framework>-skip-reasons.txt` files ($PARITY_TEST_IDS_DIR,
else `../shared/data/test-ids` beside the checkout). Without that folder, ids of the same
shapes are synthesised, so a generator works on any machine; either way the same inputs give
the same ids. A suite takes the ids under its real directories; when a lane runs more tests
than the suite has, the ids are expanded with pytest parameters the way parametrised suites
grow (round k gives every id its k-th parameter set).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from parity.collectors.identity import skip_category
from parity.collectors.settings import Settings

# suite -> the directories its tests live in (the real suites' layout)
SUITE_DIRS = {
    ("vllm", "kernels"): ("tests/kernels/",),
    ("vllm", "entrypoints"): ("tests/entrypoints/",),
    ("vllm", "distributed"): ("tests/distributed/",),
    ("vllm", "spec_decode"): ("tests/v1/spec_decode/",),
    ("sglang", "srt-unit"): ("test/registered/unit/",),
    ("sglang", "srt-models"): ("test/registered/models/", "test/registered/attention/",
                               "test/registered/moe/", "test/registered/kernels/",
                               "test/registered/openai_server/", "test/registered/lora/"),
    ("pytorch", "inductor"): ("test/inductor/", "test/dynamo/"),
    ("pytorch", "distributed"): ("test/distributed/",),
}
# parameter sets that expansion round k appends (dtype × size, as kernel suites sweep them)
PARAMS = tuple(f"{dtype}-{size}" for size in (1, 16, 64, 128, 256, 512, 1024, 4096)
               for dtype in ("float16", "bfloat16", "float32", "fp8"))
# synthesised ids when the real ones are absent: topics per suite directory
TOPICS = ("attention", "moe", "sampler", "cache", "rotary", "layernorm", "quant", "gemm",
          "scheduler", "tokenizer", "lora", "prefix_caching", "chunked_prefill", "logprobs",
          "structured_output", "pipeline", "allreduce", "eagle", "ngram", "medusa")
VERBS = ("correctness", "shapes", "dtype", "batch", "long_context", "edge_cases", "graph",
         "compile", "stream", "offload")
FALLBACK_REASONS = {
    "vendor": ("not supported on ROCm", "requires CUDA"),
    "hardware": ("requires 8 GPUs",),
}


@dataclass(frozen=True, slots=True)
class TestId:
    """A test as a JUnit report names it: file, classname, name and parameters."""

    file: str
    classname: str
    name: str
    params: str | None


def folder() -> Path | None:
    """Where the real ids are: $PARITY_TEST_IDS_DIR, else ../shared/data/test-ids beside the
    checkout; None when neither exists."""
    configured = Settings.from_env().test_ids_dir
    candidates = [Path(configured)] if configured else [
        Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "test-ids"]
    return next((p for p in candidates if p.is_dir()), None)


def parse_node_id(node: str) -> TestId:
    """`path/test_x.py::TestA::test_b[p]` -> file, dotted classname, name, params (the
    parameters may themselves hold `::` or `/`, so split on the first `[` first)."""
    head, bracket, rest = node.partition("[")
    params = rest[:-1] if bracket and rest.endswith("]") else (rest if bracket else None)
    parts = head.split("::")
    file, classes, name = parts[0], parts[1:-1], parts[-1]
    module = file[:-3] if file.endswith(".py") else file
    classname = ".".join([module.replace("/", "."), *classes])
    return TestId(file=file, classname=classname, name=name, params=params)


@lru_cache(maxsize=8)
def _real_ids(framework: str) -> tuple[str, ...]:
    base = folder()
    path = base / f"{framework}-test-ids.txt" if base else None
    if path is None or not path.is_file():
        return ()
    return tuple(line.strip() for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip() and "::" in line)


def _synthesised(prefix: str) -> list[str]:
    out = []
    for t, topic in enumerate(TOPICS):
        for v, verb in enumerate(VERBS):
            file = f"{prefix}test_{topic}.py"
            if (t + v) % 3 == 0:
                out.append(f"{file}::Test{topic.title().replace('_', '')}::test_{verb}")
            else:
                out.append(f"{file}::test_{topic}_{verb}")
    return out


@lru_cache(maxsize=32)
def base_ids(framework: str, suite: str) -> tuple[TestId, ...]:
    """The suite's distinct tests before expansion: real ids under its directories, else
    synthesised ones."""
    dirs = SUITE_DIRS.get((framework, suite), (f"tests/{suite.replace('-', '_')}/",))
    nodes = [n for n in _real_ids(framework) if n.startswith(dirs)]
    if not nodes:
        nodes = [n for d in dirs for n in _synthesised(d)]
    return tuple(parse_node_id(n) for n in dict.fromkeys(nodes))


def suite_tests(framework: str, suite: str, n: int) -> list[TestId]:
    """The first `n` tests of the suite, expanded with parameter sets when it has fewer."""
    base = base_ids(framework, suite)
    out = list(base[:n])
    k = 0
    while len(out) < n:
        extra = PARAMS[k % len(PARAMS)] + (f"-r{k // len(PARAMS)}" if k >= len(PARAMS) else "")
        for t in base[:n - len(out)]:
            out.append(TestId(t.file, t.classname, t.name,
                              f"{t.params}-{extra}" if t.params else extra))
        k += 1
    return out


@lru_cache(maxsize=8)
def skip_reasons(framework: str) -> dict[str, tuple[str, ...]]:
    """Real skip reasons by kind: `vendor` (they say the test cannot run on AMD's stack) and
    `hardware` (GPU count or memory), most used first; the fallback strings without them."""
    base = folder()
    path = base / f"{framework}-skip-reasons.txt" if base else None
    out = {"vendor": [], "hardware": []}
    if path is not None and path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            bits = line.split("\t")
            if len(bits) < 2 or not bits[1].strip() or bits[1].startswith("@"):
                continue
            category = skip_category(bits[1])
            kind = "vendor" if category == "vendor_amd" else category
            if kind in out and len(out[kind]) < 12:
                out[kind].append(bits[1].strip())
    return {k: tuple(v) or FALLBACK_REASONS[k] for k, v in out.items()}
