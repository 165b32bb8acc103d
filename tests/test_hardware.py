import pytest

from parity.db.hardware import parse_vocabulary, vocabulary

CASES = [
    ("linux.rocm.gpu.gfx942.1", "amd", "mi300x", "gfx942", 1),
    ("linux.rocm.gpu.gfx942.4", "amd", "mi300x", "gfx942", 4),
    ("linux-mi35x-gpu-8", "amd", "mi355x", "gfx950", 8),
    ("linux-mi35x-gpu-8.fabric", "amd", "mi355x", "gfx950", 8),
    ("linux-mi325-4gpu-sglang", "amd", "mi325x", "gfx942", 4),
    ("mi355_dpx", "amd", "mi355x", "gfx950", 0),
    ("mi300_1", "amd", "mi300x", "gfx942", 1),
    ("mi355_8", "amd", "mi355x", "gfx950", 8),
    ("amdgfx950nightly", "amd", "mi355x", "gfx950", 0),
    ("amdgfx942nightly", "amd", "mi300x", "gfx942", 0),
    ("gfx950-dcgpu", "amd", "mi355x", "gfx950", 0),
    ("gfx94X-dcgpu", "amd", "", "gfx942", 0),
    ("gfx125X-dcgpu", "amd", "mi455x", "gfx1250", 0),
    ("gfx1250", "amd", "mi455x", "gfx1250", 0),
    ("mi355x-amds_06", "amd", "mi355x", "gfx950", 0),
    ("mi325x-amds_03", "amd", "mi325x", "gfx942", 0),
    ("linux.rocm.gpu.ecosystem.mi350.1", "amd", "mi350x", "gfx950", 1),
    ("AMD Instinct MI300X", "amd", "mi300x", "gfx942", 0),
    ("linux.aws.h100", "nvidia", "h100", "sm90", 0),
    ("linux.dgx.b200", "nvidia", "b200", "sm100", 0),
    ("8-gpu-h200", "nvidia", "h200", "sm90", 8),
    ("4-gpu-b200", "nvidia", "b200", "sm100", 4),
    ("4-gpu-gb200", "nvidia", "gb200", "sm100", 4),
    ("b200", "nvidia", "b200", "sm100", 0),
    ("h200-dgxc-slurm_3", "nvidia", "h200", "sm90", 0),
    ("NVIDIA H100 80GB HBM3", "nvidia", "h100", "sm90", 0),
    ("1-gpu-5090", "nvidia", "rtx5090", "sm120", 1),
]


@pytest.mark.parametrize("name,vendor,sku,arch,count", CASES)
def test_known_names(name, vendor, sku, arch, count):
    hw = vocabulary().identify(name)
    assert (hw.vendor, hw.sku, hw.arch, hw.gpu_count, hw.mapped) == (vendor, sku, arch, count, True)


@pytest.mark.parametrize("name", ["AMD Radeon Graphics", "ubuntu-latest", "my-lab-box-7"])
def test_unknown_names_are_kept_raw_not_guessed(name):
    hw = vocabulary().identify(name)
    assert hw.mapped is False and hw.vendor == "unknown" and hw.raw_name == name and hw.sku == ""


def test_labels_first_and_generic_labels_skipped():
    v = vocabulary()
    hw = v.identify_any(["self-hosted", "linux", "linux.rocm.gpu.gfx942.2", "mi355x-amds_01"])
    assert (hw.sku, hw.gpu_count) == ("mi300x", 2)
    # the count may come from another name than the one that mapped
    assert v.identify_any(["mi355x", "gpu-8"]).gpu_count == 8


def test_parity_key_folds_vendor_tokens_only_as_whole_tokens():
    v = vocabulary()
    assert v.fold("test_attn_rocm[mi300-fp8]") == v.fold("test_attn_cuda[h100-fp8]")
    assert v.fold("test_minimum_value") == "test_minimum_value"
    assert v.fold("tests/kernels/test_hipblas.py") == "tests/kernels/test_hipblas.py"


def test_reference_pairs_and_newest():
    v = vocabulary()
    assert v.reference_for("mi355x") == "b200"
    assert v.reference_for("mi455x", ["h100", "b200", "h200"]) == "b200"


def test_users_can_extend_the_vocabulary(tmp_path):
    custom = parse_vocabulary(
        '[[sku]]\nsku = "mi500"\nvendor = "amd"\narch = "gfx1300"\npatterns = ["mi500"]\n')
    assert custom.identify("lab-mi500-gpu").sku == "mi500"
    assert custom.identify("linux.aws.h100").mapped is False


def _split(node_id: str) -> tuple[str, str]:
    classname, _, name = node_id.rpartition("::")
    return classname, name


def test_parity_keys_of_many_tests_are_each_tests_own(real):
    """`ParityKeys.many` (one scan of all test keys) equals calling it test by test: on the
    real suites' node ids, on names and classnames with vendor and hardware tokens in any
    case, without a classname, and on names whose lower case is longer than they are."""
    from parity.collectors.identity import ParityKeys

    keys = ParityKeys(vocabulary())
    ids_dir = real.parent.parent / "data" / "test-ids"
    node_ids = [line.strip() for f in sorted(ids_dir.glob("*-test-ids.txt"))
                for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]
    cases = [_split(n) for n in node_ids] + [
        ("tests.kernels.TestAttn", "test_decode[ROCm-fp8]"), ("", "test_cuda_graph[MI300X]"),
        ("TestOps", "test_add_cuda_float32"), ("TestOps", "test_add_cpu_float32"),
        ("tests/test_hip.py", "test_x[gfx942-H100]"), ("", ""), ("C", "İstanbul_cuda"),
        ("", "rocm"), ("A::B", "test[nvidia,amd]"), ("tests.test_rocm.TestOps", "test_add"),
        ("test_mi300x_ops.py", "test_x[H100]"), ("TestCUDA", "test_plain")]
    assert len(cases) > 1000  # the real ids are there
    classes = [c for c, _ in cases]
    test_keys = [f"{c}::{n}" if c else n for c, n in cases]
    one_by_one = [ParityKeys(vocabulary())(c, n) for c, n in cases]
    assert keys.many(classes, test_keys) == one_by_one
    assert sum(k != t for k, t in zip(one_by_one, test_keys)) > 5
    ascii_only = [i for i, t in enumerate(test_keys) if t.isascii()]  # the single-scan path
    assert keys.many([classes[i] for i in ascii_only], [test_keys[i] for i in ascii_only]) == \
        [one_by_one[i] for i in ascii_only]
    assert keys.many([], []) == []
