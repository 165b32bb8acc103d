"""JUnit edge cases, each written by hand from result-formats.md so the right answer is known."""
from __future__ import annotations

import io

import pytest

from parity.collectors.formats import junit
from parity.collectors.formats.records import ParseError


def parse(xml: str):
    return {t.test_key: t for t in junit.parse(io.BytesIO(xml.encode())).tests}


def test_wrapped_and_bare_roots_give_the_same_records():
    case = ('<testcase classname="tests.kernels.test_attn" name="test_decode[fp8-128]" time="0.41"/>'
            '<testcase classname="tests.kernels.test_attn" name="test_prefill" time="1.02">'
            '<failure message="AssertionError: mismatch">trace</failure></testcase>')
    wrapped = parse(f'<testsuites name="pytest tests"><testsuite name="pytest">{case}'
                    '</testsuite></testsuites>')
    bare = parse(f'<?xml version="1.0"?><testsuite name="pytest">{case}</testsuite>')
    assert wrapped.keys() == bare.keys()
    t = wrapped["tests.kernels.test_attn::test_decode[fp8-128]"]
    assert (t.name, t.params, t.outcome, t.duration_s) == ("test_decode", "fp8-128", "passed", 0.41)
    f = bare["tests.kernels.test_attn::test_prefill"]
    assert (f.outcome, f.phase, f.message) == ("failed", "call", "AssertionError: mismatch")


def test_outcome_table():
    got = parse("""<testsuite name="pytest">
      <testcase classname="m" name="setup_err"><error message='failed on setup with "RuntimeError: HIP error"'/></testcase>
      <testcase classname="m" name="teardown_err"><error message='failed on teardown with "E"'/></testcase>
      <testcase classname="tests.sub" name="test_mod"><error message="collection failure"/></testcase>
      <testcase classname="m" name="skip"><skipped type="pytest.skip" message="requires sm90">x.py:88: requires sm90</skipped></testcase>
      <testcase classname="m" name="modskip"><skipped message="collection skipped"/></testcase>
      <testcase classname="m" name="xfail"><skipped type="pytest.xfail" message="#123"/></testcase>
      <testcase classname="m" name="xpass_legacy"><skipped message="xfail-marked test passes unexpectedly"/></testcase>
      <testcase classname="m" name="xpass_strict"><failure message="[XPASS(strict)] flaky kernel"/></testcase>
      <testcase classname="m.C" name="test_u"><error type="UnexpectedSuccess" message="Unexpected success"/></testcase>
      <testcase classname="m.C" name="test_x"><skipped type="XFAIL" message="expected failure: bug"/></testcase>
    </testsuite>""")
    o = {k: (t.outcome, t.phase) for k, t in got.items()}
    assert o["m::setup_err"] == ("error", "setup")
    assert o["m::teardown_err"] == ("error", "teardown")
    assert o["tests.sub::test_mod"] == ("error", "collection")
    assert o["m::skip"] == ("skipped", "setup") and got["m::skip"].skip_reason == "requires sm90"
    assert o["m::modskip"] == ("skipped", "collection")
    assert o["m::xfail"][0] == "xfailed"
    assert o["m::xpass_legacy"][0] == "xpassed"
    assert o["m::xpass_strict"][0] == "failed"
    assert o["m.C::test_u"][0] == "xpassed"
    assert o["m.C::test_x"][0] == "xfailed"


def test_failed_call_plus_teardown_error_is_one_failure():
    got = parse("""<testsuite name="pytest">
      <testcase classname="m" name="t"><failure message="AssertionError: boom"/></testcase>
      <testcase classname="m" name="t"><error message='failed on teardown with "E: cleanup"'/></testcase>
    </testsuite>""")
    assert len(got) == 1
    t = got["m::t"]
    assert (t.outcome, t.phase, t.rerun_count, t.message) == ("failed", "call", 0,
                                                              "AssertionError: boom")


def test_rerunfailures_duplicates_count_as_reruns_and_last_wins():
    got = parse("""<testsuite name="pytest">
      <testcase classname="m" name="test_flaky"/><testcase classname="m" name="test_flaky"/>
      <testcase classname="m" name="test_always"/><testcase classname="m" name="test_always"><failure message="no"/></testcase>
    </testsuite>""")
    assert (got["m::test_flaky"].outcome, got["m::test_flaky"].rerun_count) == ("passed", 1)
    assert (got["m::test_always"].outcome, got["m::test_always"].rerun_count) == ("failed", 1)


def test_pytorch_rerun_children_and_surefire_flaky():
    got = parse("""<testsuite name="pytest">
      <testcase classname="TestOpsCUDA" name="test_add_cuda_float32" time="1.5">
        <rerun message="RuntimeError: HIP out of memory">tb</rerun><rerun message="again">tb</rerun>
      </testcase>
      <testcase classname="TestOpsCUDA" name="test_mul_cuda_float32">
        <rerun message="x">tb</rerun><failure message="still failing">tb</failure>
      </testcase>
      <testcase classname="S" name="flaky"><flakyFailure message="once"/></testcase>
    </testsuite>""")
    flaky = got["TestOpsCUDA::test_add_cuda_float32"]
    assert (flaky.outcome, flaky.rerun_count) == ("passed", 2)
    assert (got["TestOpsCUDA::test_mul_cuda_float32"].outcome,
            got["TestOpsCUDA::test_mul_cuda_float32"].rerun_count) == ("failed", 1)
    assert (got["S::flaky"].outcome, got["S::flaky"].rerun_count) == ("passed", 1)


def test_parametrised_ids_with_brackets_colons_and_escaped_unicode():
    got = parse(r"""<testsuite name="pytest">
      <testcase classname="pkg.test_probe" name="test_params[[br]]"/>
      <testcase classname="pkg.test_probe" name="test_params[x::y]"/>
      <testcase classname="pkg.test_probe" name="test_params[\xfc/\u03c0]"/>
      <testcase classname="pkg.test_probe.TestGroup.TestInner" name="test_nested"/>
    </testsuite>""")
    assert got["pkg.test_probe::test_params[[br]]"].params == "[br]"
    assert got["pkg.test_probe::test_params[x::y]"].params == "x::y"
    assert got[r"pkg.test_probe::test_params[\xfc/\u03c0]"].params == r"\xfc/\u03c0"
    assert got["pkg.test_probe.TestGroup.TestInner::test_nested"].classname == \
        "pkg.test_probe.TestGroup.TestInner"


def test_xmlrunner_suffix_stripped_and_subtest_failure_kept():
    got = parse("""<testsuites><testsuite name="test.pkg.TestCls-20241125095110">
      <testcase classname="test.pkg.TestCls" name="test_m" timestamp="2024-11-25T13:32:38"><failure type="AssertionError" message="1 != 2"/></testcase>
      <testcase classname="test.pkg.TestCls" name="test_m" timestamp="2024-11-25T13:32:38"/>
    </testsuite></testsuites>""")
    t = got["test.pkg.TestCls::test_m"]
    assert (t.outcome, t.suite) == ("failed", "test.pkg.TestCls")


def test_status_disabled_is_a_skip():
    got = parse('<testsuite name="t"><testcase name="d" status="disabled"/></testsuite>')
    assert (got["t::d"].outcome, got["t::d"].skip_reason) == ("skipped", "disabled")


def test_meta_from_suite():
    r = junit.parse(io.BytesIO(b'<testsuites><testsuite name="pytest" timestamp="2026-01-02T03:04:05+00:00" '
                               b'hostname="ci-mi300x-07"><properties><property name="git_sha" value="abc"/>'
                               b'</properties><testcase classname="a" name="b"/></testsuite></testsuites>'))
    assert r.meta["timestamp"].startswith("2026-01-02") and r.meta["hostname"] == "ci-mi300x-07"
    assert r.meta["properties"]["git_sha"] == "abc"


def test_child_text_output_and_nested_suites():
    huge = "x" * 2_000_000  # captured output is skipped unread; a message is cut short
    got = parse(f"""<testsuites><testsuite name="outer"><testsuite name="inner">
      <testcase classname="m" name="skip_text"><skipped type="pytest.skip">  tests/x.py:3: needs CUDA
        </skipped><system-out>{huge}</system-out></testcase>
      <testcase classname="m" name="fail_text"><failure>first line<b>nested</b>tail</failure></testcase>
      <testcase classname="m" name="long"><failure message="{'y' * 5000}"/></testcase>
      <properties><property name="in_case_scope_only" value="no"/></properties>
    </testsuite><testcase classname="m" name="outer_case"/></testsuite></testsuites>""")
    skip = got["m::skip_text"]
    assert (skip.outcome, skip.skip_reason, skip.suite) == ("skipped", "tests/x.py:3: needs CUDA",
                                                            "inner")
    assert got["m::fail_text"].message == "first line"  # the child's own text, not its children's
    assert len(got["m::long"].message) == 2000
    assert got["m::outer_case"].suite == "outer"


@pytest.mark.parametrize("doc,reason", [
    (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
     b'<testsuite><testcase name="&e;"/></testsuite>', "DTD"),
    (b'<testsuite name="x"><testcase name="a">', "malformed XML"),
    (b'<html><body>not junit</body></html>', "not a JUnit report"),
])
def test_rejections(doc, reason):
    with pytest.raises(ParseError, match=reason):
        junit.parse(io.BytesIO(doc))


def test_same_names_in_sibling_suites_are_distinct_tests_not_reruns():
    """A browser matrix written as nested suites, testcases without a classname: each cell
    is its own test; nothing is a rerun, nothing is flaky."""
    got = parse("""<testsuites>
      <testsuite name="login"><testsuite name="chrome">
        <testcase name="submits"/><testcase name="rejects bad password"><failure message="x"/></testcase>
      </testsuite><testsuite name="firefox">
        <testcase name="submits"/><testcase name="rejects bad password"/>
      </testsuite></testsuite>
      <testsuite name="DataSet1"><testcase name="test_parse"/></testsuite>
      <testsuite name="DataSet2"><testcase name="test_parse"/></testsuite>
    </testsuites>""")
    assert sorted(got) == ["DataSet1::test_parse", "DataSet2::test_parse",
                           "login/chrome::rejects bad password", "login/chrome::submits",
                           "login/firefox::rejects bad password", "login/firefox::submits"]
    assert all(t.rerun_count == 0 for t in got.values())
    assert got["login/chrome::rejects bad password"].outcome == "failed"
    assert got["login/firefox::rejects bad password"].outcome == "passed"


def test_a_repeat_without_a_rerun_marker_is_two_executions_and_a_warning():
    r = junit.parse(io.BytesIO(b"""<testsuite name="gtest">
      <testcase classname="Suite" name="Case"/><testcase classname="Suite" name="Case"><failure message="no"/></testcase>
    </testsuite>"""))
    got = {t.test_key: t for t in r.tests}
    assert (got["Suite::Case"].outcome, got["Suite::Case"].rerun_count) == ("passed", 0)
    assert (got["Suite::Case#2"].outcome, got["Suite::Case#2"].rerun_count) == ("failed", 0)
    assert r.meta["warnings"] == ["testcase Suite::Case appears more than once with no rerun "
                                  "marker; execution 2 is kept as Suite::Case#2, not counted "
                                  "as a rerun"]


# -- edges found by mutation testing (tests/mutation) ------------------------------------------

def _suite(cases: str, head: str = "") -> str:
    return f'{head}<testsuite name="s">{cases}</testsuite>'


def test_the_root_must_start_within_the_first_64_kib():
    pad = lambda n: "<!--" + "p" * (n - 7) + "-->"  # noqa: E731 - a comment of n bytes
    near = pad(64 * 1024 - 16)
    assert parse(_suite('<testcase classname="a" name="t"/>', near))
    far = pad(64 * 1024 + 16)
    with pytest.raises(ParseError, match="no XML root element in the first 64 KiB"):
        parse(_suite('<testcase classname="a" name="t"/>', far))


def test_result_children_worst_first_and_the_first_of_equals():
    t = parse(_suite('<testcase classname="a" name="t"><error message="e"/>'
                     '<failure message="f"/></testcase>'))["a::t"]
    assert (t.outcome, t.message) == ("failed", "f")  # a failure outranks an error
    t = parse(_suite('<testcase classname="a" name="t"><skipped message="s"/>'
                     '<skipped type="pytest.xfail" message="x"/></testcase>'))["a::t"]
    assert t.outcome == "xfailed"  # an xfail outranks a plain skip
    t = parse(_suite('<testcase classname="a" name="t"><failure message="first"/>'
                     '<failure message="second"/></testcase>'))["a::t"]
    assert t.message == "first"
    # a child's text is its own, not the previous child's
    t = parse(_suite('<testcase classname="a" name="t"><skipped message="s"/>'
                     '<failure>the trace</failure></testcase>'))["a::t"]
    assert (t.outcome, t.message) == ("failed", "the trace")


def test_a_status_attribute_does_not_override_a_result_child():
    t = parse(_suite('<testcase classname="a" name="t" status="skipped"><failure message="f"/>'
                     '</testcase>'))["a::t"]
    assert t.outcome == "failed"
    t = parse(_suite('<testcase classname="a" name="u" status="skipped"/>'))["a::u"]
    assert t.outcome == "skipped"


def test_suite_properties_are_kept_bounded():
    props = "".join(f'<property name="p{i:03}" value="{i}"/>' for i in range(201))
    props += '<property value="nameless"/><property name="long" value="' + "v" * 600 + '"/>'
    result = junit.parse(io.BytesIO(_suite(f'<properties>{props}</properties>'
                                           '<testcase classname="a" name="t"/>').encode()))
    bag = result.meta["properties"]
    assert len(bag) == 200 and bag["p000"] == "0" and bag["p199"] == "199"
    assert None not in bag and "long" not in bag  # past the 200th
    few = junit.parse(io.BytesIO(_suite(
        '<properties><property name="a" value="1"/><property name="b" value="' + "v" * 600
        + '"/></properties>').encode())).meta["properties"]
    assert few == {"a": "1", "b": "v" * 500}


def test_an_attribute_past_libxml2_s_default_limit_parses():
    """libxml2 refuses a value over 10 MB unless told otherwise (`huge_tree`); real reports
    carry whole logs in a failure's message attribute."""
    big = "o" * (10_000_000 + 1000)
    t = parse(_suite(f'<testcase classname="a" name="t"><failure message="{big}"/>'
                     '</testcase>'))["a::t"]
    assert t.outcome == "failed" and t.message.startswith("ooo")


@pytest.mark.parametrize("low, high, expected", [
    ('<skipped message="s"/>', '<skipped type="pytest.xfail" message="x"/>', "xfailed"),
    ('<skipped type="pytest.xfail" message="x"/>',
     '<skipped message="xfail-marked test passes unexpectedly"/>', "xpassed"),
    ('<skipped message="xfail-marked test passes unexpectedly"/>', '<error message="e"/>',
     "error"),
    ('<error message="e"/>', '<failure message="f"/>', "failed"),
])
def test_each_rank_outranks_the_one_below(low, high, expected):
    for first, second in ((low, high), (high, low)):
        t = parse(_suite(f'<testcase classname="a" name="t">{first}{second}</testcase>'))["a::t"]
        assert t.outcome == expected


def test_text_delivered_in_pieces_is_kept_whole():
    """The parser hands text over in pieces around entities; the message is all of them."""
    t = parse(_suite('<testcase classname="a" name="t"><failure>   &amp; real message'
                     '</failure></testcase>'))["a::t"]
    assert t.message == "& real message"


def test_a_declaration_after_the_root_started_is_content_not_a_prolog():
    t = parse(_suite('<!-- mentions <!DOCTYPE x> and <!ENTITY y> --><testcase classname="a" '
                     'name="t"/>'))
    assert list(t) == ["a::t"]


def test_malformed_xml_names_the_parser_s_reason():
    with pytest.raises(ParseError) as e:
        parse('<testsuite name="s"><testcase classname="a" name="t"></testsuite>')
    assert str(e.value) == ("malformed XML: Opening and ending tag mismatch: testcase line 1 "
                            "and testsuite, line 1, column 66")  # not lxml's "(<string>, …)"


def test_nameless_testcases_and_unreadable_times():
    got = parse(_suite('<testcase classname="a"/><testcase/><testcase classname="b" name="t" '
                       'time="abc"/>'))
    assert sorted(got) == ["a::", "b::t"]
    assert got["b::t"].duration_s is None


def test_a_repeated_testcase_merges_only_a_failed_call_with_its_teardown_error():
    got = parse(_suite('<testcase classname="a" name="t"/>'
                       '<testcase classname="a" name="t"><error message="failed on teardown of t"/>'
                       '</testcase>'))
    assert sorted(got) == ["a::t", "a::t#2"]  # a pass and a teardown error: two executions
    got = parse(_suite('<testcase classname="a" name="t"><failure message="f"/></testcase>'
                       '<testcase classname="a" name="t"><error message="failed on teardown of t"/>'
                       '</testcase>'))
    assert list(got) == ["a::t"] and got["a::t"].outcome == "failed"


def test_xmlrunner_subtests_of_equal_rank_keep_the_later():
    got = parse(_suite(
        '<testcase classname="a" name="t" timestamp="2026-11-01T00:00:00">'
        '<failure message="first"/></testcase>'
        '<testcase classname="a" name="t" timestamp="2026-11-01T00:00:01">'
        '<failure message="second"/></testcase>'))
    assert got["a::t"].message == "second"


def test_an_empty_testsuites_root_is_a_report_and_only_suite_properties_count():
    assert junit.parse(io.BytesIO(b"<testsuites/>")).tests == []
    result = junit.parse(io.BytesIO(
        b'<testsuites><properties><property name="root" value="r"/></properties>'
        b'<testsuite name="s"><properties><other name="o" value="x"/>'
        b'<property name="p" value="1"/></properties></testsuite></testsuites>'))
    assert result.meta["properties"] == {"p": "1"}


def test_a_result_child_keeps_at_most_64_kib_of_text():
    """A skip without a message takes its reason from the text: kept to the cap exactly,
    however the parser cuts the text into pieces."""
    for text in ("r" * 100_000, "r" * 40_000 + "&amp;" + "r" * 40_000):
        t = parse(_suite(f'<testcase classname="a" name="t"><skipped>{text}</skipped>'
                         '</testcase>'))["a::t"]
        assert t.outcome == "skipped" and len(t.skip_reason) == 64 * 1024
    t = parse(_suite('<testcase classname="a" name="t"><skipped>' + "r" * (64 * 1024)
                     + '</skipped></testcase>'))["a::t"]
    assert len(t.skip_reason) == 64 * 1024
