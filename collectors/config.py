"""`parity.toml`: the sources a dashboard follows, written down once.

Each `[[source]]` names one CI feed and how its results map into the store:
- `kind = "github"`: `repo` (OWNER/NAME), optional `workflows`, `branch`, `event`,
  `api_url`, `token_file`;
- `kind = "buildkite"`: `org`, `pipelines`, optional `branch`, `api_url`, `token_file`;
- `kind = "quartz"`: ROCm/Quartz's release status; optional `repo` (default ROCm/Quartz),
  `releases` (default ["nightly"]; also "rc", "dev"), `api_url`, `token_file`;
- `kind = "published-vllm-ci"`: the vLLM CI dashboard's published results; optional `repo`
  (default AndreasKaratzas/vllm-ci-dashboard), `path` (default data/vllm/ci);
and, for every kind, `name` (unique; the sync state is kept under it), `framework`, and
`suites`, a table of regular expressions on job names to suite names that overrides the
suite read from the job name (the first match wins).

The path is `PARITY_CONFIG`, else `./parity.toml`. Every problem is reported as one line
that names the file, the source and the key."""
from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

KINDS = ("github", "buildkite", "quartz", "published-vllm-ci")
FEED_DEFAULTS = {"quartz": ("ROCm/Quartz", ""),
                 "published-vllm-ci": ("AndreasKaratzas/vllm-ci-dashboard", "data/vllm/ci")}
FRAMEWORKS = ("vllm", "sglang", "pytorch", "other")
REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")  # GitHub OWNER/NAME
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class ConfigError(Exception):
    """A sources file that cannot be used; the text names the file, source and key."""


@dataclass(frozen=True)
class Source:
    name: str
    kind: str
    framework: str | None = None
    suites: tuple[tuple[str, str], ...] = ()  # (job-name pattern, suite)
    api_url: str | None = None
    token_file: str | None = None
    # github
    repo: str = ""
    workflows: tuple[str, ...] = ()
    event: str = ""
    # buildkite
    org: str = ""
    pipelines: tuple[str, ...] = ()
    # both
    branch: str = ""
    # feeds
    releases: tuple[str, ...] = ()
    path: str = ""

    @property
    def target(self) -> str:
        if self.kind == "buildkite":
            return f"{self.org}/{','.join(self.pipelines)}"
        if self.kind == "quartz":
            return f"{self.repo} ({','.join(self.releases)})"
        if self.kind == "published-vllm-ci":
            return f"{self.repo}/{self.path}"
        return self.repo


@dataclass(frozen=True)
class Alerts:
    """`[alerts]`: run an alerting round after each sync round (webhook URLs are secrets and
    come from PARITY_ALERT_WEBHOOKS, never from this file)."""

    rules: str | None = None
    post_issues: str | None = None
    max_writes: int = 10
    resolve_after: int = 2
    dashboard_url: str = ""


@dataclass(frozen=True)
class Config:
    path: str
    sources: tuple[Source, ...] = field(default_factory=tuple)
    alerts: Alerts | None = None

    def source(self, name: str) -> Source:
        for s in self.sources:
            if s.name == name:
                return s
        raise ConfigError(f"{self.path}: no source named {name!r} (sources: "
                          f"{', '.join(s.name for s in self.sources) or 'none'})")


def path_from_env(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    return env.get("PARITY_CONFIG") or "parity.toml"


def load(path: str | Path) -> Config:
    """Read and check a sources file."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{p}: no such file (copy parity.example.toml there, or set "
                          f"PARITY_CONFIG)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: not valid TOML ({exc})") from None
    return parse(data, str(p))


def parse(data: dict, where: str) -> Config:
    raw = data.get("source", [])
    if not isinstance(raw, list) or not all(isinstance(s, dict) for s in raw):
        raise ConfigError(f"{where}: `source` must be an array of tables ([[source]])")
    unknown = set(data) - {"source", "alerts"}
    if unknown:
        raise ConfigError(f"{where}: unknown top-level key(s) {', '.join(sorted(unknown))}")
    sources = [_source(s, i, where) for i, s in enumerate(raw, 1)]
    names = [s.name for s in sources]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"{where}: source names must be unique; repeated: {', '.join(dupes)}")
    return Config(where, tuple(sources), _alerts(data.get("alerts"), where))


def _alerts(raw, where: str) -> Alerts | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: `alerts` must be a table ([alerts])")
    known = {"rules", "post_issues", "max_writes", "resolve_after", "dashboard_url"}
    extra = sorted(set(raw) - known)
    if extra:
        hint = " (webhook URLs are secrets: set PARITY_ALERT_WEBHOOKS)" if "webhooks" in extra else ""
        raise ConfigError(f"{where}: alerts: `{extra[0]}` is not a key of [alerts]{hint}")
    repo = raw.get("post_issues")
    if repo is not None and (not isinstance(repo, str) or not REPO.match(repo)):
        raise ConfigError(f"{where}: alerts: `post_issues` must be OWNER/NAME")
    for key in ("max_writes", "resolve_after"):
        if key in raw and (not isinstance(raw[key], int) or raw[key] < 1):
            raise ConfigError(f"{where}: alerts: `{key}` must be a positive integer")
    return Alerts(rules=raw.get("rules"), post_issues=repo, max_writes=raw.get("max_writes", 10),
                  resolve_after=raw.get("resolve_after", 2),
                  dashboard_url=str(raw.get("dashboard_url") or ""))


def _source(s: dict, index: int, where: str) -> Source:
    label = f"{where}: source {index}" + (f" ({s['name']})" if isinstance(s.get("name"), str) else "")

    def fail(key: str, why: str):
        raise ConfigError(f"{label}: `{key}` {why}")

    def text(key: str, required: bool = False) -> str:
        value = s.get(key, "")
        if not isinstance(value, str):
            fail(key, "must be a string")
        if required and not value.strip():
            fail(key, "is required")
        return value.strip()

    def texts(key: str, required: bool = False) -> tuple[str, ...]:
        value = s.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            fail(key, "must be a list of strings")
        if required and not value:
            fail(key, "is required")
        return tuple(v.strip() for v in value)

    kind = text("kind", True)
    if kind not in KINDS:
        fail("kind", f"must be one of {', '.join(KINDS)} (got {kind!r})")
    allowed = {"name", "kind", "framework", "suites", "api_url", "token_file", "branch"} | {
        "github": {"repo", "workflows", "event"}, "buildkite": {"org", "pipelines"},
        "quartz": {"repo", "releases"}, "published-vllm-ci": {"repo", "path"}}[kind]
    extra = set(s) - allowed
    if extra:
        fail(sorted(extra)[0], f"is not a key of a {kind} source")
    name = text("name", True)
    framework = text("framework") or None
    if framework is not None and framework not in FRAMEWORKS:
        fail("framework", f"must be one of {', '.join(FRAMEWORKS)}")
    suites = s.get("suites", {})
    if not isinstance(suites, dict) or not all(isinstance(v, str) for v in suites.values()):
        fail("suites", "must be a table of job-name patterns to suite names")
    for pattern in suites:
        try:
            re.compile(pattern)
        except re.error as exc:
            fail("suites", f"has an invalid pattern {pattern!r} ({exc})")
    token_file = text("token_file") or None
    api_url = text("api_url") or None
    if api_url and not api_url.startswith(("http://", "https://")):
        fail("api_url", "must be an http(s) URL")
    common = dict(name=name, kind=kind, framework=framework,
                  suites=tuple(suites.items()), api_url=api_url, token_file=token_file,
                  branch=text("branch"))
    if kind in FEED_DEFAULTS:
        repo = text("repo") or FEED_DEFAULTS[kind][0]
        if not REPO.match(repo):
            fail("repo", f"must be OWNER/NAME (got {repo!r})")
        releases = texts("releases") or (("nightly",) if kind == "quartz" else ())
        for r in releases:
            if not _SLUG.match(r):
                fail("releases", f"holds {r!r}, which is not a release type (nightly, rc, dev)")
        path = text("path") or FEED_DEFAULTS[kind][1]
        if ".." in path.split("/"):
            fail("path", "must not climb out of the repository")
        return Source(**common, repo=repo, releases=releases, path=path.strip("/"))
    if kind == "github":
        repo = text("repo", True)
        if not REPO.match(repo):
            fail("repo", f"must be OWNER/NAME (got {repo!r})")
        return Source(**common, repo=repo, workflows=texts("workflows"), event=text("event"))
    org = text("org", True)
    if not _SLUG.match(org):
        fail("org", f"must be an organisation slug (got {org!r})")
    pipelines = texts("pipelines", True)
    for p in pipelines:
        if not _SLUG.match(p):
            fail("pipelines", f"holds {p!r}, which is not a pipeline slug")
    return Source(**common, org=org, pipelines=pipelines)


def suite_for(job_name: str, suites: tuple[tuple[str, str], ...]) -> str | None:
    """The suite a source's mapping gives a job name, or None."""
    for pattern, suite in suites:
        if re.search(pattern, job_name):
            return suite
    return None
