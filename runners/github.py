"""The one module of `runners` that talks to GitHub: the self-hosted runner endpoints.

PyGithub 2.10 has the organisation forms of the JIT and registration-token calls but not
the repository forms, so every call here goes to the REST endpoint directly, in the same
shape for both scopes. A 403 names the permission the token lacks; the token and the JIT
configuration never reach an exception or a log line."""
from __future__ import annotations

import random
import time
from typing import Any
from urllib.parse import urlsplit

import requests

from parity.db.network import CONNECT_TIMEOUT_S, unreachable
from parity.runners.settings import Secret, Settings

API_VERSION = "2022-11-28"
NEEDS = {
    "repo": "a fine-grained token with the repository permission 'Administration: write' "
            "(classic: the 'repo' scope)",
    "org": "a fine-grained token with the organisation permission 'Self-hosted runners: "
           "write' (classic: the 'admin:org' scope)",
}


class ApiError(Exception):
    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class RunnerApi:
    """`scope` is ("repo", "OWNER/NAME") or ("org", "ORG")."""

    def __init__(self, settings: Settings, api_url: str | None = None, token: Secret | None = None,
                 sleep=time.sleep):
        self.settings = settings
        self.api_url = (api_url or settings.api_url).rstrip("/")
        self._token = token if token is not None else settings.token
        self.sleep = sleep
        self.session = requests.Session()
        self.session.trust_env = False
        self.session.headers.update({"Accept": "application/vnd.github+json",
                                     "X-GitHub-Api-Version": API_VERSION,
                                     "User-Agent": "parity-ci-runners"})

    @staticmethod
    def base(scope: tuple[str, str]) -> str:
        kind, name = scope
        return f"/repos/{name}/actions/runners" if kind == "repo" else f"/orgs/{name}/actions/runners"

    def call(self, method: str, path: str, scope: tuple[str, str] | None = None,
             json: Any = None, params: dict | None = None) -> tuple[int, Any]:
        if self._token is None:
            raise ApiError("no GitHub token: set GITHUB_TOKEN (or GH_TOKEN) or pass --token-file")
        url = f"{self.api_url}{path}"
        headers = {"Authorization": f"Bearer {self._token.reveal()}"}
        for attempt in range(self.settings.retries + 1):
            try:
                r = self.session.request(method, url, json=json, params=params, headers=headers,
                                         timeout=(CONNECT_TIMEOUT_S, self.settings.timeout_s),
                                         allow_redirects=False)
            except (requests.ConnectionError, requests.Timeout) as exc:
                why = unreachable(exc)
                if why:
                    raise ApiError(f"cannot reach {urlsplit(url).netloc} ({why}); check the "
                                   f"network or --api-url") from None
                if attempt == self.settings.retries:
                    raise ApiError(f"{method} {url}: {type(exc).__name__}") from None
                self.sleep(random.uniform(0, 2 ** attempt))
                continue
            retry_after = r.headers.get("retry-after", "")
            if (r.status_code >= 500 or (r.status_code in (403, 429) and retry_after.isdigit())) \
                    and attempt < self.settings.retries:
                self.sleep(float(retry_after) if retry_after.isdigit() else random.uniform(0, 2 ** attempt))
                continue
            break
        body = r.json() if r.content and "json" in r.headers.get("content-type", "") else None
        if r.status_code >= 400:
            message = (body or {}).get("message", "") if isinstance(body, dict) else ""
            text = f"{method} {path}: {r.status_code} {message}".strip()
            if r.status_code == 403 and scope is not None:
                wanted = r.headers.get("X-Accepted-GitHub-Permissions", "")
                text += f". This needs {NEEDS[scope[0]]}" + (f" (GitHub asks for {wanted})" if wanted else "")
            if r.status_code == 401:
                text += ". The token is invalid or expired"
            raise ApiError(self._redact(text), r.status_code)
        return r.status_code, body

    def _redact(self, text: str) -> str:
        token = self._token.reveal() if self._token else ""
        return text.replace(token, "***") if token else text

    # -- endpoints ------------------------------------------------------------------------------

    def repository(self, name: str) -> dict:
        return self.call("GET", f"/repos/{name}")[1]

    def groups(self, org: str) -> list[dict]:
        return self.call("GET", f"/orgs/{org}/actions/runner-groups", ("org", org),
                         params={"per_page": 100})[1].get("runner_groups", [])

    def runners(self, scope: tuple[str, str]) -> list[dict]:
        out, page = [], 1
        while True:
            body = self.call("GET", self.base(scope), scope, params={"per_page": 100, "page": page})[1]
            out += body.get("runners", [])
            if len(body.get("runners", [])) < 100:
                return out
            page += 1

    def jit_config(self, scope: tuple[str, str], name: str, group: int, labels: list[str],
                   work_folder: str = "_work") -> tuple[dict, Secret]:
        """(the runner GitHub created, its single-use JIT configuration)."""
        body = self.call("POST", f"{self.base(scope)}/generate-jitconfig", scope, json={
            "name": name, "runner_group_id": group, "labels": labels, "work_folder": work_folder})[1]
        return body["runner"], Secret(body["encoded_jit_config"])

    def registration_token(self, scope: tuple[str, str]) -> tuple[Secret, str]:
        body = self.call("POST", f"{self.base(scope)}/registration-token", scope)[1]
        return Secret(body["token"]), body.get("expires_at", "")

    def remove(self, scope: tuple[str, str], runner_id: int) -> None:
        self.call("DELETE", f"{self.base(scope)}/{runner_id}", scope)
