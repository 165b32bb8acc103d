"""JUnit XML as other generators write it, each file written from the generator's documented
shape, with the exact tests, outcomes and reruns expected (issue: distinct tests merged
into one and called flaky). The real samples in ../shared are covered by test_conformance."""
from __future__ import annotations

import io
from collections import Counter

import pytest

from parity.collectors.formats import junit

GENERATORS = {
    # GoogleTest --gtest_output=xml: classname is the fixture; disabled tests have
    # status="notrun"; parametrised suites are Prefix/Suite/N
    "googletest": ("""<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" failures="1" disabled="1" errors="0" name="AllTests">
  <testsuite name="MathTest" tests="3" failures="1" disabled="1">
    <testcase name="Add" status="run" result="completed" time="0" classname="MathTest"/>
    <testcase name="Div" status="run" result="completed" time="0" classname="MathTest">
      <failure message="Expected equality" type=""><![CDATA[math_test.cc:12]]></failure>
    </testcase>
    <testcase name="DISABLED_Mod" status="notrun" result="suppressed" time="0" classname="MathTest"/>
  </testsuite>
  <testsuite name="Sizes/VecTest" tests="2">
    <testcase name="Grows/0" value_param="1" status="run" result="completed" classname="Sizes/VecTest"/>
    <testcase name="Grows/1" value_param="8" status="run" result="completed" classname="Sizes/VecTest"/>
  </testsuite>
</testsuites>""", {"passed": 3, "failed": 1, "skipped": 1}, 5, 0),
    # CTest --output-junit: one testcase per test, classname = name, status attribute
    "ctest": ("""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-c++" tests="3" failures="1" disabled="0" skipped="1" hostname="ci">
  <testcase name="unit_core" classname="unit_core" time="0.5" status="run"/>
  <testcase name="unit_io" classname="unit_io" time="0.1" status="fail">
    <failure message="Failed"/></testcase>
  <testcase name="gpu_smoke" classname="gpu_smoke" time="0" status="notrun">
    <skipped message="Disabled"/></testcase>
</testsuite>""", {"passed": 1, "failed": 1, "skipped": 1}, 3, 0),
    # Bazel test.xml: a suite per target, the testcase named by the target, no classname
    "bazel": ("""<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="//kernels:attn_test" tests="1" failures="0" errors="0">
    <testcase name="//kernels:attn_test" status="run" duration="3" time="3"/>
  </testsuite>
  <testsuite name="//kernels:gemm_test" tests="1" failures="1" errors="0">
    <testcase name="//kernels:gemm_test" status="run" duration="5" time="5">
      <failure message="exited with error code 1"/></testcase>
  </testsuite>
</testsuites>""", {"passed": 1, "failed": 1}, 2, 0),
    # PHPUnit: nested suites; a data provider is a suite per method, one case per data set
    "phpunit": ("""<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="App" tests="4" failures="1">
    <testsuite name="Tests\\CalcTest" file="tests/CalcTest.php" tests="4" failures="1">
      <testcase name="testSub" class="Tests\\CalcTest" classname="Tests.CalcTest" file="tests/CalcTest.php" time="0.01"/>
      <testsuite name="Tests\\CalcTest::testAdd" tests="3" failures="1">
        <testcase name="testAdd with data set #0" class="Tests\\CalcTest" classname="Tests.CalcTest" time="0.01"/>
        <testcase name="testAdd with data set #1" class="Tests\\CalcTest" classname="Tests.CalcTest" time="0.01">
          <failure type="PHPUnit\\Framework\\ExpectationFailedException">Failed asserting 3 == 4</failure>
        </testcase>
        <testcase name="testAdd with data set #2" class="Tests\\CalcTest" classname="Tests.CalcTest" time="0.01"/>
      </testsuite>
    </testsuite>
  </testsuite>
</testsuites>""", {"passed": 3, "failed": 1}, 4, 0),
    # nose / nose2: one suite, dotted classnames, errors as <error>
    "nose": ("""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="nosetests" tests="3" errors="1" failures="0" skip="1">
  <testcase classname="pkg.test_mod.TestX" name="test_a" time="0.001"/>
  <testcase classname="pkg.test_mod.TestX" name="test_b" time="0.001">
    <error type="ImportError" message="No module named foo">trace</error></testcase>
  <testcase classname="pkg.test_mod" name="test_c" time="0.0">
    <skipped type="unittest.case.SkipTest" message="needs a GPU"/></testcase>
</testsuite>""", {"passed": 1, "error": 1, "skipped": 1}, 3, 0),
    # Maven Surefire with rerunFailingTestsCount: flakyFailure passed on rerun,
    # rerunFailure failed every time
    "surefire": ("""<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="com.acme.FooTest" tests="3" failures="1" errors="0" skipped="0" flakes="1">
  <testcase name="stable" classname="com.acme.FooTest" time="0.1"/>
  <testcase name="flaky" classname="com.acme.FooTest" time="0.2">
    <flakyFailure message="timeout" type="java.lang.AssertionError">trace</flakyFailure>
  </testcase>
  <testcase name="broken" classname="com.acme.FooTest" time="0.3">
    <failure message="boom" type="java.lang.AssertionError">trace</failure>
    <rerunFailure message="boom" type="java.lang.AssertionError">trace</rerunFailure>
    <rerunFailure message="boom" type="java.lang.AssertionError">trace</rerunFailure>
  </testcase>
</testsuite>""", {"passed": 2, "failed": 1}, 3, 3),
    # a browser matrix written as nested suites, testcases without classname (Karma, jest)
    "browser-matrix": ("""<?xml version="1.0"?>
<testsuites>
  <testsuite name="Chrome 120.0 (Linux x86_64)" tests="2">
    <testcase name="login submits"/><testcase name="login rejects"><failure/></testcase>
  </testsuite>
  <testsuite name="Firefox 121.0 (Linux x86_64)" tests="2">
    <testcase name="login submits"/><testcase name="login rejects"/>
  </testsuite>
</testsuites>""", {"passed": 3, "failed": 1}, 4, 0),
    # pytest-rerunfailures 16.6.1 writes every attempt as a testcase of the pytest suite
    "pytest-rerunfailures": ("""<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
  <testcase classname="test_rerun" name="test_flaky"><failure message="x"/></testcase>
  <testcase classname="test_rerun" name="test_flaky"/>
  <testcase classname="test_rerun" name="test_always_fails"/>
  <testcase classname="test_rerun" name="test_always_fails"><failure message="assert False"/></testcase>
</testsuite></testsuites>""", {"passed": 1, "failed": 1}, 2, 2),
}


@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_each_generator_gives_the_real_test_count(generator):
    xml, outcomes, tests, reruns = GENERATORS[generator]
    r = junit.parse(io.BytesIO(xml.encode()))
    assert dict(Counter(t.outcome for t in r.tests)) == outcomes
    assert len(r.tests) == tests
    assert sum(t.rerun_count for t in r.tests) == reruns
    assert "warnings" not in r.meta  # nothing here is a duplicate


def test_identities_keep_what_tells_tests_apart():
    keys = {g: sorted(t.test_key for t in junit.parse(io.BytesIO(x.encode())).tests)
            for g, (x, *_) in GENERATORS.items()}
    assert keys["bazel"] == ["//kernels:attn_test:://kernels:attn_test",
                             "//kernels:gemm_test:://kernels:gemm_test"]
    assert "Chrome 120.0 (Linux x86_64)::login rejects" in keys["browser-matrix"]
    assert "Firefox 121.0 (Linux x86_64)::login rejects" in keys["browser-matrix"]
    assert keys["phpunit"][0] == "Tests.CalcTest::testAdd with data set #0"
    assert keys["googletest"][-1] == "Sizes/VecTest::Grows/1"
