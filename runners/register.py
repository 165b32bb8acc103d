"""`parity runner register`: get GitHub to accept this GPU host as a self-hosted runner, the
safe way by default, and write what starts it.

- **Just-in-time (default).** GitHub creates an ephemeral runner and hands back a single-use
  configuration; the runner takes one job and is removed. No long-lived registration token
  is left on the host. `--persistent` asks for a registration token instead (valid one
  hour, consumed by `config.sh`).
- **Public repositories are refused** (fork pull requests would run arbitrary code on the
  machine) unless `--allow-public-repo`, and then with a warning; likewise an organisation
  runner group that admits public repositories.
- **Secrets stay in one file.** The JIT configuration (or registration token) is written to
  a mode-0600 file beside the start script, which hands it to the runner in the
  environment (`ACTIONS_RUNNER_INPUT_JITCONFIG`), never on a command line where `ps` would
  show it, and deletes it once used. Nothing is printed or logged.
- **GPU access.** The systemd unit adds the runner to the `video` and `render` groups on
  ROCm hosts, and `container-options` holds the `docker run` options a job container needs
  (`--device=/dev/kfd --device=/dev/dri ...` for ROCm, `--gpus all` for CUDA)."""
from __future__ import annotations

import getpass
import os
import shlex
import socket
from dataclasses import dataclass, field
from pathlib import Path

from parity.db.hardware import vocabulary
from parity.runners.detect import Host
from parity.runners.github import ApiError, RunnerApi
from parity.runners.settings import Secret, Settings

ROCM_CONTAINER = ("--device=/dev/kfd --device=/dev/dri --group-add video --group-add render "
                  "--ipc=host --shm-size=16g --security-opt seccomp=unconfined")
CUDA_CONTAINER = "--gpus all --ipc=host --shm-size=16g"


class Refused(Exception):
    """Registration would be unsafe or impossible; the message says why and what to do."""


@dataclass(frozen=True)
class Request:
    scope: tuple[str, str]  # ("repo", "OWNER/NAME") or ("org", "ORG")
    name: str
    labels: tuple[str, ...]
    group: int = 1
    persistent: bool = False
    work_dir: Path = Path(".")
    allow_public: bool = False
    user: str = ""


@dataclass
class Registration:
    request: Request
    runner_id: int | None = None
    files: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        r = self.request
        return {"scope": f"{r.scope[0]}:{r.scope[1]}", "name": r.name, "labels": list(r.labels),
                "mode": "persistent" if r.persistent else "jit", "group": r.group,
                "runner_id": self.runner_id, "files": [str(f) for f in self.files],
                "warnings": self.warnings}


def default_name(host: Host | None) -> str:
    base = socket.gethostname().split(".")[0] or "gpu-host"
    return f"{base}-{host.sku or host.arch}-x{host.count}" if host else base


def labels_for(host: Host | None, extra: list[str] | tuple[str, ...] = ()) -> tuple[str, ...]:
    """The detected labels plus the caller's, in order, without duplicates."""
    return tuple(dict.fromkeys([*(host.labels if host else ["self-hosted", "linux"]), *extra]))


def check_exposure(api: RunnerApi, req: Request) -> list[str]:
    """Refuse a public repository (or a group open to public ones) unless allowed."""
    kind, name = req.scope
    if kind == "repo":
        public = not api.repository(name).get("private", False)
        what = f"{name} is a public repository"
    else:
        groups = {g["id"]: g for g in api.groups(name)}
        if req.group not in groups:
            known = ", ".join(f"{g} {v.get('name', '')}" for g, v in groups.items())
            raise Refused(f"runner group {req.group} does not exist in {name} (groups: {known})")
        public = bool(groups[req.group].get("allows_public_repositories"))
        what = f"runner group {req.group} of {name} admits public repositories"
    if not public:
        return []
    message = (f"{what}: a fork's pull request could run arbitrary code on this GPU host. "
               "GitHub advises against self-hosted runners there")
    if not req.allow_public:
        raise Refused(message + "; pass --allow-public-repo to do it anyway")
    return [f"WARNING {message}; registering anyway because --allow-public-repo was given"
            + ("" if not req.persistent else ", and as a persistent runner at that")]


def register(api: RunnerApi, req: Request, host: Host | None, settings: Settings) -> Registration:
    """Ask GitHub for a JIT configuration (or a registration token) and write the files."""
    reg = Registration(req, warnings=check_exposure(api, req))
    work = req.work_dir
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o700)
    if req.persistent:
        secret, _expires = api.registration_token(req.scope)
        secret_file = work / ".registration-token"
    else:
        runner, secret = api.jit_config(req.scope, req.name, req.group, list(req.labels))
        reg.runner_id = runner.get("id")
        secret_file = work / ".jitconfig"
    _write_secret(secret_file, secret)
    script = work / "start.sh"
    script.write_text(start_script(req, settings, secret_file.name), encoding="utf-8")
    os.chmod(script, 0o755)
    unit = work / f"parity-runner-{req.name}.service"
    unit.write_text(systemd_unit(req, host, script, settings), encoding="utf-8")
    options = work / "container-options"
    options.write_text(container_options(host) + "\n", encoding="utf-8")
    reg.files = [secret_file, script, unit, options]
    return reg


def _write_secret(path: Path, secret: Secret) -> None:
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(secret.reveal())


def runner_url(req: Request, settings: Settings) -> str:
    return f"{settings.web_url}/{req.scope[1]}"


def start_script(req: Request, settings: Settings, secret_name: str) -> str:
    q = shlex.quote
    head = f"""#!/bin/sh
# Starts the GitHub Actions runner {req.name} for {req.scope[0]} {req.scope[1]}
# (labels: {','.join(req.labels)}). Written by `parity runner register`; holds no secret:
# the {'registration token' if req.persistent else 'single-use JIT configuration'} is in {secret_name} (mode 0600).
set -eu
HERE="$(cd "$(dirname "$0")" && pwd)"
cd "${{PARITY_RUNNER_DIR:-{settings.runner_dir}}}"
"""
    if not req.persistent:
        return head + f"""# Handed over in the environment, never on the command line, and deleted: it is single use.
ACTIONS_RUNNER_INPUT_JITCONFIG="$(cat "$HERE/{secret_name}")"
export ACTIONS_RUNNER_INPUT_JITCONFIG
rm -f "$HERE/{secret_name}"
exec ./run.sh
"""
    return head + f"""if [ ! -f .runner ]; then
  ACTIONS_RUNNER_INPUT_TOKEN="$(cat "$HERE/{secret_name}")"
  export ACTIONS_RUNNER_INPUT_TOKEN
  ./config.sh --unattended --replace --url {q(runner_url(req, settings))} --name {q(req.name)} \\
    --labels {q(','.join(req.labels))} --work _work{f' --runnergroup {req.group}' if req.scope[0] == 'org' else ''}
  unset ACTIONS_RUNNER_INPUT_TOKEN
  rm -f "$HERE/{secret_name}"
fi
exec ./run.sh
"""


def systemd_unit(req: Request, host: Host | None, script: Path, settings: Settings) -> str:
    user = req.user or getpass.getuser()
    gpu = f"{host.count}x {host.sku or host.arch}" if host else "no GPU detected"
    groups = "SupplementaryGroups=video render\n" if host and host.vendor == "amd" else ""
    restart = "Restart=always\nRestartSec=10\n" if req.persistent else \
        "# A JIT runner takes one job and is gone: register again for the next one.\nRestart=no\n"
    return f"""[Unit]
Description=GitHub Actions runner {req.name} ({gpu}) for {req.scope[1]}
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User={user}
{groups}Environment=PARITY_RUNNER_DIR={settings.runner_dir}
ExecStart={script.resolve()}
WorkingDirectory={settings.runner_dir}
{restart}KillMode=process
KillSignal=SIGTERM
TimeoutStopSec=5min
NoNewPrivileges=true

[Install]
WantedBy=multi-user.target
"""


def container_options(host: Host | None) -> str:
    """`docker run` options a job container needs for this host's GPUs."""
    if host is None:
        return ""
    return ROCM_CONTAINER if host.vendor == "amd" else CUDA_CONTAINER


def find_runner(api: RunnerApi, scope: tuple[str, str], name: str) -> dict:
    for r in api.runners(scope):
        if r.get("name") == name:
            return r
    raise ApiError(f"no runner named {name!r} in {scope[0]} {scope[1]}", 404)


def describe(runners: list[dict]) -> list[dict]:
    """Runners as `parity runner list` shows them: state (idle, busy, offline), the hardware
    their labels imply, their labels, and whether they are just-in-time."""
    vocab = vocabulary()
    rows = []
    for r in runners:
        labels = [x.get("name", "") for x in r.get("labels") or []]
        hw = vocab.identify_any([*labels, r.get("name")])
        state = "offline" if r.get("status") != "online" else ("busy" if r.get("busy") else "idle")
        rows.append({"id": r.get("id"), "name": r.get("name"), "state": state,
                     "hardware": hw.sku or hw.arch or "", "labels": labels,
                     "ephemeral": bool(r.get("ephemeral"))})
    return rows
