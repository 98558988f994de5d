"""The CI integration, played without the network: the GitHub Action's steps (parsed from action.yml)
and the GitLab snippet's script run in bash against a real `gate check`, with a stand-in for the
comment API on loopback (real HTTP) — one comment posted on the first run, the same one updated on
the second, and the job's exit by the team's policy. The stand-in knows who writes: a workflow token
(write), a read-only one (a fork's pull request), and people's comments, which the bot may not edit.
The runner's rules are played too: a step's `if:` (status functions included), `continue-on-error`,
and `uses:` steps that succeed with their outputs or fail as a test chooses."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml

from offline_helpers import reference_runs, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "ci_comment.py"
BIN = Path(sys.executable).parent
TOKEN = "ghs_test_token_0123456789"
READ_ONLY = "ghs_read_only_token_0123456789"  # what a pull request from a fork gets
BOT = "github-actions[bot]"  # the account GITHUB_TOKEN writes as
GITLAB_BOT = "project_42_bot"  # a GitLab project access token's user
ARTIFACT_URL = "https://github.com/acme/agent/actions/runs/99/artifacts/4242"
CONTRACT = """\
version: 1
name: ci-test
gate: {min_runs: 1, max_failing_runs: 0}
rules:
  - id: blocked_calls
    type: blocked_calls
    code: BLOCKED_CALL
    max: 0
"""
SARIF_UPLOAD = "github/codeql-action/upload-sarif@v3"
ARTIFACT_UPLOAD = "actions/upload-artifact@v4"
EXPECTED_USES = [SARIF_UPLOAD, ARTIFACT_UPLOAD]  # setup-python is skipped: install is false here


class CommentApi:
    """GitHub's issue-comment API and GitLab's merge-request notes API, in memory, on loopback.

    Seeded with other people's comments (more than one page of them), so finding our own comment has
    to page. Requests without a known token are 401; the read-only token may read but not write (403
    "Resource not accessible by integration", as GitHub answers a fork's token); nobody may edit
    another account's comment (403). A comment is written as the token's account: GitHub's `user`,
    GitLab's `author`."""

    def __init__(self, seeded: int = 130) -> None:
        self.comments: dict[int, dict[str, Any]] = {
            i: {
                "id": i,
                "body": f"a reviewer's comment {i}",
                "user": {"login": "reviewer", "type": "User"},
                "author": {"username": "reviewer"},
            }
            for i in range(1, seeded + 1)
        }
        self.next_id = 10_000
        self.requests: list[tuple[str, str]] = []
        self.fail_with: int | None = None
        self.lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def ours(self) -> list[dict[str, Any]]:
        """The comments the bot wrote that carry a gate's marker."""
        return [
            c
            for c in self.comments.values()
            if "otel-provenance-gate:" in c["body"]
            and (c.get("user", {}).get("login") == BOT or c.get("author", {}).get("username") == GITLAB_BOT)
        ]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _answer(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                parts = urlsplit(self.path)
                api.requests.append((method, parts.path))
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                github = self.headers.get("Authorization", "").removeprefix("Bearer ")
                token = github or self.headers.get("PRIVATE-TOKEN")
                if token not in (TOKEN, READ_ONLY):
                    self._answer(401, {"message": "Bad credentials"})
                    return
                if api.fail_with is not None:
                    self._answer(api.fail_with, {"message": "Server Error"})
                    return
                forbidden = {"message": "Resource not accessible by integration"}
                if token == READ_ONLY and method != "GET":
                    self._answer(403, forbidden)
                    return
                if parts.path == "/api/v4/user" and method == "GET":
                    self._answer(200, {"id": 9, "username": GITLAB_BOT})
                    return
                me = {"user": {"login": BOT, "type": "Bot"}} if github else {}
                me = me or {"author": {"username": GITLAB_BOT}}
                github_list = re.fullmatch(r"/repos/acme/agent/issues/7/comments", parts.path)
                github_one = re.fullmatch(r"/repos/acme/agent/issues/comments/(\d+)", parts.path)
                gitlab_list = re.fullmatch(r"/api/v4/projects/42/merge_requests/7/notes", parts.path)
                gitlab_one = re.fullmatch(r"/api/v4/projects/42/merge_requests/7/notes/(\d+)", parts.path)
                with api.lock:
                    if (github_list or gitlab_list) and method == "GET":
                        query = parse_qs(parts.query)
                        page, size = int(query["page"][0]), int(query["per_page"][0])
                        items = sorted(api.comments.values(), key=lambda c: c["id"])
                        self._answer(200, items[(page - 1) * size : page * size])
                    elif (github_list or gitlab_list) and method == "POST":
                        api.next_id += 1
                        api.comments[api.next_id] = {"id": api.next_id, "body": body["body"], **me}
                        self._answer(201, api.comments[api.next_id])
                    elif (github_one and method == "PATCH") or (gitlab_one and method == "PUT"):
                        found = api.comments.get(int((github_one or gitlab_one)[1]))
                        if found is None:
                            self._answer(404, {"message": "Not Found"})
                            return
                        writer = "user" if github else "author"
                        if found.get(writer) != me[writer]:  # another account's comment
                            self._answer(403, forbidden)
                            return
                        found["body"] = body["body"]
                        self._answer(200, found)
                    else:
                        self._answer(404, {"message": "Not Found"})

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

            def do_PUT(self) -> None:
                self._handle("PUT")

        return Handler

    def __enter__(self) -> CommentApi:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def api() -> Iterator[CommentApi]:
    with CommentApi() as stand_in:
        yield stand_in


@pytest.fixture
def workspace(tmp_path: Path) -> dict[str, Path]:
    good, bad = reference_runs()
    (tmp_path / "traces").mkdir()
    write_jsonl(good, tmp_path / "traces" / "good.jsonl")
    write_jsonl(bad, tmp_path / "traces" / "bad.jsonl")
    (tmp_path / "contract.yaml").write_text(CONTRACT)

    def pull(head: str) -> dict[str, Any]:
        repo = {"full_name": head, "fork": head != "acme/agent"}
        base = {"repo": {"full_name": "acme/agent", "fork": False}}
        pull = {"number": 7, "head": {"repo": repo}, "base": base}
        return {"action": "synchronize", "number": 7, "pull_request": pull}

    event = tmp_path / "event.json"
    event.write_text(json.dumps(pull("acme/agent")))
    fork = tmp_path / "fork.json"
    fork.write_text(json.dumps(pull("someone/agent")))
    push = tmp_path / "push.json"
    push.write_text(json.dumps({"ref": "refs/heads/main", "commits": []}))
    return {"dir": tmp_path, "event": event, "fork": fork, "push": push}


# --- the GitHub Action, step by step ----------------------------------------------------------------

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
_STATUS = re.compile(r"\b(always|success|failure|cancelled)\(\)")


def _evaluate(text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    """The expressions action.yml's `env:` may use; anything else fails the test (an action that
    needs more than the harness plays is not what was tested)."""

    def one(match: re.Match[str]) -> str:
        expression = match[1]
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        step = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
        if step:
            return outputs.get(step[1], {}).get(step[2], "")
        raise AssertionError(f"the harness cannot evaluate ${{{{ {expression} }}}}")

    return _EXPRESSION.sub(one, text)


def _runs(condition: str | None, inputs: dict[str, str], workdir: Path, failed: bool) -> bool:
    """Whether a step with ``if: condition`` runs, as the runner decides: without a status function
    the condition is ``success() && (…)``; ``always()``, ``!cancelled()``, ``inputs.*`` comparisons and
    ``hashFiles(format('{0}/…', inputs.*))`` are what action.yml uses, anything else fails the test."""
    text = (condition or "success()").strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2].strip()
    if not _STATUS.search(text):
        text = f"success() && ({text})"

    def hashed(match: re.Match[str]) -> str:
        return repr("hash" if (workdir / match[1].format(inputs[match[2]])).exists() else "")

    python = re.sub(r"hashFiles\(format\('([^']*)',\s*inputs\.([\w-]+)\)\)", hashed, text)
    python = re.sub(r"inputs\.([\w-]+)", lambda m: repr(inputs[m[1]]), python)
    python = _STATUS.sub(
        lambda m: {"always": "True", "success": str(not failed), "failure": str(failed)}.get(m[1], "False"),
        python,
    )
    python = python.replace("&&", " and ").replace("||", " or ")
    python = re.sub(r"!(?!=)", " not ", python)
    try:
        return bool(eval(python, {"__builtins__": {}}, {}))  # only literals are left
    except Exception as exc:
        raise AssertionError(f"the harness cannot evaluate if: {condition} ({python})") from exc


#: What a `uses:` step gives when it succeeds: actions/upload-artifact@v4's outputs.
USES_OUTPUTS = {"actions/upload-artifact@v4": {"artifact-id": "4242", "artifact-url": ARTIFACT_URL}}


def play_action(
    workspace: dict[str, Path],
    api: CommentApi,
    event: Path,
    *,
    failing_uses: frozenset[str] = frozenset(),
    event_name: str = "pull_request",
    **given: str,
) -> tuple[int, str, list[str]]:
    """Run action.yml's steps in order, as a runner would: each step's `if:` against the job's status
    so far, `run:` steps in bash -eo pipefail with GITHUB_OUTPUT per step, `uses:` steps listed and
    played — they succeed with :data:`USES_OUTPUTS`, or fail when named in ``failing_uses`` — and a
    failed step with `continue-on-error: true` leaves the job's status alone. Returns the job's exit
    code (1 if any step failed), its log, and the `uses:` steps that ran."""
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    inputs = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    missing = [name for name, spec in action["inputs"].items() if spec.get("required") and name not in given]
    assert not missing, missing
    inputs.update(given)
    outputs: dict[str, dict[str, str]] = {}
    uses: list[str] = []
    log: list[str] = []
    summary = workspace["dir"] / "summary.md"
    failed = False
    for number, step in enumerate(action["runs"]["steps"]):
        if not _runs(step.get("if"), inputs, workspace["dir"], failed):
            log.append(f"## {step['name']}: skipped")
            continue
        if "uses" in step:
            uses.append(step["uses"])
            ok = step["uses"] not in failing_uses
            if ok and "id" in step:
                outputs[step["id"]] = dict(USES_OUTPUTS.get(step["uses"], {}))
            log.append(f"## {step['name']}: {'done' if ok else 'failed'}")
            failed = failed or not (ok or step.get("continue-on-error") is True)
            continue
        assert step.get("shell") == "bash", step.get("name")
        output_file = workspace["dir"] / f"output-{number}"
        output_file.write_text("")
        env = {
            **os.environ,
            "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_API_URL": api.url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_REPOSITORY": "acme/agent",
            "GITHUB_RUN_ID": "99",
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_STEP_SUMMARY": str(summary),
            "RUNNER_TEMP": str(workspace["dir"]),
        }
        env.update({k: _evaluate(str(v), inputs, outputs) for k, v in (step.get("env") or {}).items()})
        script = workspace["dir"] / f"step-{number}.sh"
        script.write_text(step["run"])
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace["dir"], env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        log.append(f"## {step['name']}\n{done.stdout}{done.stderr}")
        if "id" in step:
            outputs[step["id"]] = dict(
                line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line
            )
        failed = failed or (done.returncode != 0 and step.get("continue-on-error") is not True)
    return int(failed), "\n".join(log), uses


def _action_inputs(workspace: dict[str, Path], **extra: str) -> dict[str, str]:
    return {
        "contract": "contract.yaml",
        "release": "v1",
        "traces": "traces/good.jsonl traces/bad.jsonl",
        "token": TOKEN,
        "install": "false",  # this checkout's CLI is on PATH; the install command is checked below
        **extra,
    }


def test_the_action_posts_one_comment_then_updates_it_and_fails_the_job_on_a_failed_gate(workspace, api):
    code, log, uses = play_action(workspace, api, workspace["event"], **_action_inputs(workspace))
    assert uses == EXPECTED_USES
    assert code == 1, log  # gate exit 2, fail-on: fail
    assert "otel-provenance gate: fail (exit 2); fail-on: fail fails the job" in log
    assert "ci_comment: posted comment" in log
    ours = api.ours()
    assert len(ours) == 1
    assert ours[0]["body"].startswith("<!-- otel-provenance-gate:default -->\n## Trajectory gate: `fail`")
    assert "BLOCKED_CALL" in ours[0]["body"] and "<details>" not in ours[0]["body"]  # no rule passed
    assert "gate exit 2 (fail); with fail-on: fail this fails the job." in ours[0]["body"]
    assert f"**[Full report]({ARTIFACT_URL})**" in ours[0]["body"]  # the run's report artifact
    body = ours[0]["body"]  # #49: the link under the heading, the findings before any table
    assert body.index("**[Full report]") < body.index("### Findings") < body.index("### Rules")
    assert (workspace["dir"] / "otel-provenance-report" / "gate.html").stat().st_size > 0  # in it
    out = workspace["dir"] / "otel-provenance-report"
    assert json.loads((out / "gate.sarif").read_text())["version"] == "2.1.0"  # what upload-sarif is given
    assert "<testsuite" in (out / "gate.junit.xml").read_text()
    assert "Trajectory gate" in (workspace["dir"] / "summary.md").read_text()
    first_id = ours[0]["id"]
    posts = [r for r in api.requests if r[0] == "POST"]
    assert len(posts) == 1

    (workspace["dir"] / "traces" / "bad.jsonl").unlink()  # the next push fixes the agent
    code, log, _ = play_action(
        workspace, api, workspace["event"], **_action_inputs(workspace, traces="traces/good.jsonl")
    )
    assert code == 0, log
    assert f"ci_comment: updated comment {first_id}" in log
    ours = api.ours()
    assert [c["id"] for c in ours] == [first_id]  # the same comment, updated — not a second one
    assert "## Trajectory gate: `pass`" in ours[0]["body"]
    assert "<details><summary>1 rule(s) passed</summary>" in ours[0]["body"]  # folded: only failures show
    assert [r for r in api.requests if r[0] == "POST"] == posts
    assert ("PATCH", f"/repos/acme/agent/issues/comments/{first_id}") in api.requests
    gets = [r for r in api.requests if r[0] == "GET"]
    assert len(gets) >= 3  # 130 other comments: the search pages (two pages, each run)


@pytest.mark.parametrize(
    ("fail_on", "job"),
    [("fail", 1), ("insufficient", 1), ("error", 0)],
)
def test_the_policy_input_decides_the_job(workspace, api, fail_on, job):
    code, log, _ = play_action(
        workspace, api, workspace["event"], **_action_inputs(workspace, **{"fail-on": fail_on})
    )
    assert code == job, log


def test_a_push_event_posts_nothing_and_a_missing_contract_is_an_error_whatever_the_policy(workspace, api):
    code, log, _ = play_action(workspace, api, workspace["push"], **_action_inputs(workspace))
    assert "not a pull-request event: no comment posted" in log
    assert not [r for r in api.requests if r[0] != "GET"] and not api.requests
    assert code == 1
    code, log, _ = play_action(
        workspace,
        api,
        workspace["event"],
        **_action_inputs(workspace, contract="nope.yaml", **{"fail-on": "error"}),
    )
    assert code == 1, log  # exit 1 from the gate: an error fails the job under every policy
    assert "no Markdown report (gate check exited 1): no comment" in log
    assert not api.ours()


def test_a_fork_pull_request_leaves_the_report_in_the_job_summary_and_a_passing_gate_passes(workspace, api):
    """A fork's `pull_request` run gets a read-only token: nothing is asked of the comment API (and the
    SARIF upload, which needs security-events write, fails), the job summary holds the report and a
    line saying why there is no comment, and the gate's verdict alone decides the job."""
    (workspace["dir"] / "traces" / "bad.jsonl").unlink()
    inputs = _action_inputs(workspace, traces="traces/good.jsonl", token=READ_ONLY)
    failing = frozenset({SARIF_UPLOAD})
    code, log, _ = play_action(workspace, api, workspace["fork"], failing_uses=failing, **inputs)
    assert code == 0, log  # the gate passed: never a red job for want of a comment
    assert not api.requests  # a fork's token is read-only: not even a 403 to collect
    summary = (workspace["dir"] / "summary.md").read_text()
    assert "## Trajectory gate: `pass`" in summary
    assert "no pull-request comment: this pull request comes from a fork" in summary
    assert "::warning title=otel-provenance comment::" in log
    assert "otel-provenance gate: pass (exit 0); fail-on: fail lets the job pass" in log

    write_jsonl(reference_runs()[1], workspace["dir"] / "traces" / "bad.jsonl")  # the fork breaks it
    code, log, _ = play_action(
        workspace, api, workspace["fork"], **_action_inputs(workspace, token=READ_ONLY)
    )
    assert code == 1, log  # the policy still fails a failed gate
    assert "fail-on: fail fails the job" in log and not api.requests


def test_a_read_only_token_on_the_repository_s_own_pull_request_degrades_to_the_summary(workspace, api):
    """A read-only token on a same-repository pull request (a Dependabot run, a workflow with
    `permissions: read-all`): the API refuses the comment with 403 — a warning, not a failure."""
    (workspace["dir"] / "traces" / "bad.jsonl").unlink()
    inputs = _action_inputs(workspace, traces="traces/good.jsonl", token=READ_ONLY)
    code, log, _ = play_action(workspace, api, workspace["event"], **inputs)
    assert code == 0, log
    assert [r for r in api.requests if r[0] == "POST"] == [("POST", "/repos/acme/agent/issues/7/comments")]
    assert not api.ours()
    summary = (workspace["dir"] / "summary.md").read_text()
    assert "no pull-request comment: the token may not comment here" in summary
    assert "HTTP 403" in summary and READ_ONLY not in summary + log


def test_a_persons_comment_that_quotes_the_marker_is_never_edited(workspace, api):
    """A reviewer pasted the bot's comment, marker and all: the bot posts its own and edits only that
    one on the next run; the reviewer's stays as they wrote it."""
    quoted = "<!-- otel-provenance-gate:default -->\n> ## Trajectory gate: `fail`\nWhy did this fail?"
    api.comments[200] = {"id": 200, "body": quoted, "user": {"login": "reviewer", "type": "User"}}
    code, log, _ = play_action(workspace, api, workspace["event"], **_action_inputs(workspace))
    assert code == 1, log  # the gate failed: the policy, not the comment, fails the job
    assert "ci_comment: posted comment" in log
    [ours] = api.ours()
    code, log, _ = play_action(workspace, api, workspace["event"], **_action_inputs(workspace))
    assert f"ci_comment: updated comment {ours['id']}" in log
    assert api.comments[200]["body"] == quoted
    assert not [r for r in api.requests if r == ("PATCH", "/repos/acme/agent/issues/comments/200")]


@pytest.mark.parametrize(
    ("traces", "job"), [("traces/good.jsonl", 0), ("traces/good.jsonl traces/bad.jsonl", 1)]
)
def test_a_failed_upload_skips_neither_the_comment_nor_the_policy(workspace, api, traces, job):
    """Code scanning off, an outage: the SARIF and the artifact uploads fail; the comment is still
    posted (linking the run's page, as there is no artifact) and the policy still decides the job."""
    failing = frozenset({SARIF_UPLOAD, ARTIFACT_UPLOAD})
    code, log, uses = play_action(
        workspace, api, workspace["event"], failing_uses=failing, **_action_inputs(workspace, traces=traces)
    )
    assert uses == EXPECTED_USES
    assert code == job, log
    assert "ci_comment: posted comment" in log
    [ours] = api.ours()
    assert "**[Full report](https://github.com/acme/agent/actions/runs/99)**" in ours["body"]
    outcome = "pass (exit 0); fail-on: fail lets" if job == 0 else "fail (exit 2); fail-on: fail fails"
    assert f"otel-provenance gate: {outcome} the job" in log


def test_the_install_step_installs_this_checkout_and_the_action_is_versioned_with_the_package():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    install = next(s for s in action["runs"]["steps"] if s.get("name", "").startswith("Install"))
    assert 'pip install --disable-pip-version-check -q "$GITHUB_ACTION_PATH[cli,otlp]"' in install["run"]
    assert action["inputs"]["fail-on"]["default"] == "fail"


def test_an_api_that_refuses_makes_the_comment_step_fail_naming_the_request(workspace, api, tmp_path):
    report = tmp_path / "gate.md"
    report.write_text("## Trajectory gate: `pass`\n")
    api.fail_with = 500
    env = {
        **os.environ,
        "GITHUB_EVENT_PATH": str(workspace["event"]),
        "GITHUB_API_URL": api.url,
        "GITHUB_REPOSITORY": "acme/agent",
        "GITHUB_TOKEN": TOKEN,
    }
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "github", "--body-file", str(report)],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert f"GET {api.url}/repos/acme/agent/issues/7/comments?per_page=100&page=1: HTTP 500" in done.stderr
    assert TOKEN not in done.stdout + done.stderr


@pytest.mark.parametrize("fail_on", ["fail", "insufficient", "error"])
@pytest.mark.parametrize("gate_code", ["0", "1", "2", "3", "4", ""])
def test_the_policy_table(fail_on, gate_code):
    """docs/ci.md's table: an error (and any code the gate never gives, and a gate that did not run)
    always fails the job."""
    fails = {"fail": {"1", "2", "4", ""}, "insufficient": {"1", "2", "3", "4", ""}, "error": {"1", "4", ""}}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "policy", "--exit-code", gate_code, "--fail-on", fail_on],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == (1 if gate_code in fails[fail_on] else 0), done.stdout


def test_the_documented_workflow_stamps_the_release_it_gates():
    """docs/ci.md's workflow (#49): the ``release`` the action gates is the ``service.version`` the
    agent's step stamps on its spans — the two must agree, or no run is of the release — and the
    pinned example names a full commit."""
    text = (ROOT / "docs" / "ci.md").read_text()
    workflow = yaml.safe_load(re.search(r"```yaml\n(# \.github/workflows/.*?)```", text, re.S).group(1))
    steps = workflow["jobs"]["gate"]["steps"]
    (gate,) = [step for step in steps if str(step.get("uses", "")).startswith("OWNER/otel-provenance@")]
    (agent,) = [step for step in steps if "run" in step]
    stamped = dict(kv.split("=", 1) for kv in agent["env"]["OTEL_RESOURCE_ATTRIBUTES"].split(","))
    assert stamped["service.version"] == gate["with"]["release"] == "${{ github.sha }}"
    assert re.search(r"uses: OWNER/otel-provenance@[0-9a-f]{40}  # v", text)


# --- the GitLab snippet -----------------------------------------------------------------------------


def play_gitlab(workspace: dict[str, Path], api: CommentApi, **variables: str) -> tuple[int, str]:
    job = yaml.safe_load((ROOT / "docs" / "ci" / "gitlab-ci.yml").read_text())["otel-provenance-gate"]
    env = {
        **os.environ,
        **{k: str(v) for k, v in job["variables"].items()},
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "OTEL_PROVENANCE_DIR": str(ROOT),  # before_script's clone of OTEL_PROVENANCE_REF, already here
        "CI_API_V4_URL": f"{api.url}/api/v4",
        "CI_PROJECT_ID": "42",
        "CI_MERGE_REQUEST_IID": "7",
        "GITLAB_TOKEN": TOKEN,
        "GATE_RELEASE": "v1",  # GitLab expands $CI_COMMIT_SHORT_SHA; here the fixture's release
        "CI_JOB_URL": "https://gitlab.example/acme/agent/-/jobs/77",
        **variables,
    }
    script = workspace["dir"] / "gitlab.sh"
    script.write_text("\n".join(job["script"]) + "\n")
    done = subprocess.run(
        ["bash", "-eo", "pipefail", str(script)],
        cwd=workspace["dir"], env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return done.returncode, done.stdout + done.stderr


def test_the_gitlab_snippet_keeps_one_merge_request_note_and_applies_the_policy(workspace, api):
    job = yaml.safe_load((ROOT / "docs" / "ci" / "gitlab-ci.yml").read_text())["otel-provenance-gate"]
    assert any('--branch "$OTEL_PROVENANCE_REF"' in line for line in job["before_script"])
    assert any(
        "pip install" in line and '"$OTEL_PROVENANCE_DIR[cli,otlp]"' in line for line in job["before_script"]
    )
    assert job["artifacts"]["reports"]["junit"] == "$GATE_OUT/gate.junit.xml"
    assert job["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'}]

    code, log = play_gitlab(workspace, api, GATE_TRACES="traces/*.jsonl")
    assert code == 1, log
    assert "ci_comment: posted comment" in log
    [note] = api.ours()
    assert "## Trajectory gate: `fail`" in note["body"]
    artifacts = "https://gitlab.example/acme/agent/-/jobs/77/artifacts/browse/otel-provenance-report"
    assert f"**[Full report]({artifacts})**" in note["body"]

    code, log = play_gitlab(workspace, api, GATE_TRACES="traces/good.jsonl")
    assert code == 0, log
    assert f"ci_comment: updated comment {note['id']}" in log
    assert [n["id"] for n in api.ours()] == [note["id"]]
    assert ("PUT", f"/api/v4/projects/42/merge_requests/7/notes/{note['id']}") in api.requests
    assert "## Trajectory gate: `pass`" in api.ours()[0]["body"]
    assert (workspace["dir"] / "otel-provenance-report" / "gate.junit.xml").exists()


def test_the_gitlab_note_of_a_person_that_quotes_the_marker_is_never_edited(workspace, api):
    """#50: the other platform's way in — on GitLab too, a note that begins with the marker but was
    written by a person (not the token's own user) stays as they wrote it; the gate keeps its own."""
    quoted = "<!-- otel-provenance-gate:default -->\n> ## Trajectory gate: `fail`\nWhy?"
    api.comments[200] = {"id": 200, "body": quoted, "author": {"username": "reviewer"}}
    code, log = play_gitlab(workspace, api, GATE_TRACES="traces/*.jsonl")
    assert code == 1, log  # the gate failed: the policy, not the note, fails the job
    assert "ci_comment: posted comment" in log
    [note] = api.ours()
    code, log = play_gitlab(workspace, api, GATE_TRACES="traces/good.jsonl")
    assert code == 0, log
    assert f"ci_comment: updated comment {note['id']}" in log
    assert api.comments[200]["body"] == quoted
    assert not [r for r in api.requests if r == ("PUT", "/api/v4/projects/42/merge_requests/7/notes/200")]
