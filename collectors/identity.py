"""Test identity helpers: the vendor-folded parity key and skip-reason categories.

A skip is *vendor-gated* when its reason says the test cannot run on one vendor's stack;
the parity views count an AMD vendor-gated skip against AMD."""
from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from itertools import accumulate

from parity.db.hardware import Vocabulary

SKIP_RULES: tuple[tuple[str, re.Pattern], ...] = tuple((cat, re.compile(rx, re.I)) for cat, rx in (
    ("vendor_amd", r"skipifrocm|skip_if_rocm|test_with_rocm|not (?:yet )?(?:supported|implemented|"
                   r"available|enabled) (?:on|for|with|in) (?:rocm|hip|amd)|(?:rocm|hip|amd)\b.{0,20}"
                   r"not (?:yet )?(?:supported|implemented|available)|unsupported on (?:rocm|hip|amd)|"
                   r"requires? (?:nvidia|cuda)|(?:cuda|nvidia)[- ]only|only (?:supported )?on "
                   r"(?:cuda|nvidia)|needs? cuda|skip(?:ped)? (?:on|for) (?:rocm|hip|amd)|"
                   r"requires? sm_?\d+|compute capability|flashinfer|cutlass|nvfp4|deepgemm"),
    ("vendor_nvidia", r"skipifcuda|not (?:yet )?(?:supported|implemented|available) (?:on|for|with)"
                      r" (?:cuda|nvidia)|requires? (?:rocm|hip|amd)|(?:rocm|hip|amd)[- ]only|"
                      r"only (?:supported )?on (?:rocm|hip|amd)|requires? gfx\d+|aiter"),
    ("hardware", r"requires? (?:at least )?\d+ ?gpus?|need(?:s)? (?:at least )?\d+ ?gpus?|"
                 r"multi[- ]?gpu|not enough (?:gpus|devices|memory)|insufficient (?:gpu )?memory|"
                 r"world[_ ]size|device count"),
    ("disabled", r"disabled|issue exists|flaky|known (?:issue|failure)|broken|todo|fixme"),
    ("dependency", r"no module named|could not import|requires? .{0,40}(?:package|installed)|"
                   r"not installed|missing (?:dependency|module)|importerror"),
    ("platform", r"windows|macos|darwin|cpu[- ]only|requires? cpu|not linux"),
))



@lru_cache(maxsize=4096)  # reports repeat a handful of reasons thousands of times
def skip_category(reason: str | None) -> str:
    """The category of a skip reason: vendor_amd, vendor_nvidia, hardware, disabled,
    dependency, platform or other."""
    if not reason:
        return "other"
    for category, pattern in SKIP_RULES:
        if pattern.search(reason):
            return category
    return "other"


class ParityKeys:
    """Parity keys with the classname part cached: a report repeats few classnames."""

    def __init__(self, vocab: Vocabulary):
        self._fold = vocab.fold
        self._prefilter = vocab.fold_prefilter
        self._classes: dict[str, str] = {}

    def __call__(self, classname: str, full_name: str) -> str:
        folded = self._classes.get(classname)
        if folded is None:
            folded = self._classes[classname] = self._fold(classname)
        name = self._fold(full_name)
        return f"{folded}::{name}" if classname else name

    def many(self, classnames: list[str], keys: list[str]) -> list[str]:
        """The parity keys of many tests, given their classnames and test keys
        (`classname::name[params]`, the name alone without a classname), equal to calling
        this one by one. One scan of all the keys together finds the few that may hold a
        vendor token (in the classname or the name); only those are folded, and every
        other test's parity key is its test key, the same string (a search per name was
        most of writing a new report's test identities)."""
        text = "\n".join(keys).lower()
        # the prefilter's literals hold no newline, so no match spans two keys; a key
        # whose lower case changes its length would shift the offsets: one by one then
        if self._prefilter is None or len(text) != sum(map(len, keys)) + len(keys) - 1:
            return [self(c, k[len(c) + 2:] if c else k) for c, k in zip(classnames, keys)]
        ends = list(accumulate(map((1).__add__, map(len, keys))))  # each key's end, + "\n"
        out = list(keys)
        for i in {bisect_right(ends, m.start()) for m in self._prefilter.finditer(text)}:
            c = classnames[i]
            out[i] = self(c, keys[i][len(c) + 2:] if c else keys[i])
        return out


_PYTORCH_SHARD = re.compile(r"\btest \(([\w.-]+),\s*\d+,\s*\d+")
_PARENS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_VENDOR_WORDS = re.compile(r"(?<![a-z0-9])(?:amd|rocm|hip|nvidia|cuda|\{gpu\})(?![a-z0-9])")


def suite_of_job(job_name: str, vocab: Vocabulary) -> str:
    """A vendor-neutral suite name from a CI job name, so both vendors' jobs of one suite
    meet: PyTorch's `… / test (inductor, 1, 2, linux.rocm.gpu.gfx942.1)` gives `inductor`;
    other names lose their parenthesised shard and runner parts and every vendor or
    hardware token (`unit-test-backend-1-gpu-amd (linux-mi300-gpu-1, 0)` gives
    `unit-test-backend-1-gpu`). A `parity-manifest.json` suite overrides this."""
    last = job_name.rsplit(" / ", 1)[-1]
    shard = _PYTORCH_SHARD.search(last)
    if shard:
        return shard.group(1).lower()
    text = _VENDOR_WORDS.sub(" ", vocab.fold(_PARENS.sub(" ", last)).lower())
    words = [w for w in re.split(r"[\s_/]+", text) if w]
    return re.sub(r"-{2,}", "-", "-".join(words)).strip("-")[:200]


_JOB_PREFIX = re.compile(r"^\s*([a-z]+\d+[a-z]?)_(\d+)\s*:\s*", re.I)
_PAREN_HW = re.compile(r"\(([^)]*)\)")
# a GPU name in a label's parentheses: H100, B200, A100, L4, GB200, MI300, gfx942 ("2 GPUs",
# "API Server" or "CPU" are not)
_GPU_TOKEN = re.compile(r"^(?:mi\d{3}[a-z]?|g?[abhl]\d{1,3}[a-z]?|gfx\d{3,4}[a-z]?)$", re.I)


def job_hardware_names(name: str, queue: str = "") -> list[str]:
    """Names to identify a vLLM-style CI job's hardware by, best first: the label's
    `mi355_1:` prefix (jobs can be mis-queued; the label is what the step asked for), the
    agent queue, then hardware names in the label's parentheses (`(B200)`, `(2xH100)`)."""
    out = []
    m = _JOB_PREFIX.match(name)
    if m:
        out.append(f"{m.group(1)}_{m.group(2)}")
    if queue:
        out.append(queue)
    for inside in _PAREN_HW.findall(name):
        for token in re.split(r"[\s,/+-]+", inside):
            token = re.sub(r"^\d+x", "", token.strip(), flags=re.I)
            if _GPU_TOKEN.match(token):
                out.append(token)
    return out


def step_label(job: dict) -> str:
    """The step a Buildkite job belongs to, as both vendors name it: no hardware prefix, and
    no shard number when the step runs in parallel (`parallel_group_total` > 1)."""
    name = _JOB_PREFIX.sub("", str(job.get("name") or job.get("label") or ""))
    total = job.get("parallel_group_total")
    if isinstance(total, int) and total > 1:
        index = job.get("parallel_group_index")
        number = str(index + 1) if isinstance(index, int) else r"\d+"
        name = re.sub(r"\s*\b" + number + r"\s*$", "", name)
    return name.strip()
