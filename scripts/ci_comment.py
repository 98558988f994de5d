#!/usr/bin/env python3
"""One pull-request comment with the gate's Markdown report, posted once and updated after; and the
exit-code policy a team chose. Used by the GitHub Action (``action.yml``) and the GitLab CI snippet
(``docs/ci/gitlab-ci.yml``); standard library only, so it runs on any CI image with Python 3.11+.

    ci_comment.py github --body-file gate.md [--marker NAME] [--author LOGIN] [--report-url URL]
                         [--exit-code N --fail-on POLICY]
    ci_comment.py gitlab --body-file gate.md [--marker NAME] [--author USERNAME] [--report-url URL]
                         [--exit-code N --fail-on POLICY]
    ci_comment.py policy --exit-code N --fail-on fail|insufficient|error

The comment is found again by a hidden marker (``<!-- otel-provenance-gate:NAME -->``) that begins
its body, written by this script's own account, so each run of the same gate updates its one comment
(PATCH on GitHub, PUT on GitLab) instead of adding another; two gates in one workflow give different
``--marker`` names. A comment anyone else wrote is never edited, whatever it quotes (#48: a reviewer
who pasted the bot's comment made the job fail trying to edit theirs): on GitHub the account is
``--author`` (default ``github-actions[bot]``, the account of the workflow's ``GITHUB_TOKEN``); on
GitLab ``--author`` or, by default, the token's own user (``GET /user``). ``--report-url`` adds a link
to the full reports (the Action passes its artifact's URL).

- GitHub: the pull request from ``GITHUB_EVENT_PATH`` (``pull_request`` / ``pull_request_target``
  events), ``GITHUB_REPOSITORY``, ``GITHUB_API_URL`` and the token in ``GITHUB_TOKEN``. Another event
  (a push) has no pull request: one line says so and nothing is posted. **A read-only token is not an
  error**: a ``pull_request`` from a fork (its token is always read-only, so nothing is asked), or any
  request the API refuses with 403, ends with a warning annotation and a line in the job summary
  (``GITHUB_STEP_SUMMARY``, which already holds the report) — exit 0, so a passing gate never turns
  the job red for want of a comment.
- GitLab: ``CI_API_V4_URL``, ``CI_PROJECT_ID``, ``CI_MERGE_REQUEST_IID`` (merge-request pipelines) and
  a token with the ``api`` scope in ``GITLAB_TOKEN`` (a job token cannot write notes).

Exit 0 when the comment is posted, updated, not applicable or (GitHub) not allowed; 1 with a message
naming the request when the API fails otherwise or cannot be reached (a comment that silently failed
would hide a red gate).

``policy`` turns the gate's exit code into the job's: 0 pass · 2 fail · 3 insufficient · 1 error
(docs/ci.md has the table). An error always fails the job, and so does a gate that did not run (no
exit code); ``fail-on`` chooses what else does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

PER_PAGE = 100
MAX_PAGES = 50  # 5000 comments: past that, a new comment rather than an endless walk
TIMEOUT_S = 30
MAX_BODY = 60_000  # GitHub refuses comment bodies over 65536 characters; GitLab notes allow 1,000,000

#: gate exit code -> what it means
OUTCOMES = {0: "pass", 1: "error", 2: "fail", 3: "insufficient"}
#: fail-on -> the gate exit codes that fail the job (an error always does)
POLICIES = {"fail": {1, 2}, "insufficient": {1, 2, 3}, "error": {1}}


#: The account GitHub's workflow token writes as.
GITHUB_ACTIONS_BOT = "github-actions[bot]"
FORBIDDEN = 403


class CommentError(Exception):
    """The comment API refused or could not be reached; ``status`` is the HTTP status, if any."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class NotAllowed(Exception):
    """The token may not write here (a fork's pull request, a read-only token): nothing to fix in
    the gate, and no reason to fail the job."""


def marker(name: str) -> str:
    return f"<!-- otel-provenance-gate:{name} -->"


def compose(
    body: str, name: str, exit_code: int | None, fail_on: str | None, report_url: str | None = None
) -> str:
    """The comment: the hidden marker, the report's heading, the link to the full reports (#49: at the
    top, where a reader looks for the drawn runs, not under a long report), the rest of the report (cut
    to what the API takes), the policy's line."""
    text = body.rstrip("\n")
    if len(text) > MAX_BODY:
        text = text[:MAX_BODY] + "\n\n… (report cut here; the full report is in the job's artifacts)"
    heading, _, rest = text.partition("\n") if text.startswith("#") else ("", "", text)
    lines = [marker(name), *([heading] if heading else [])]
    if report_url:
        drawn = "`gate.html` draws each failing run beside its approved route; with SARIF, JUnit"
        lines += ["", f"**[Full report]({report_url})**: {drawn} and this report as Markdown."]
    lines.append(rest)
    if exit_code is not None and fail_on is not None:
        verdict = "fails" if exit_code in POLICIES[fail_on] else "does not fail"
        lines += [
            "",
            f"<sub>gate exit {exit_code} ({OUTCOMES.get(exit_code, 'unknown')}); "
            f"with fail-on: {fail_on} this {verdict} the job.</sub>",
        ]
    return "\n".join(lines) + "\n"


def _request(method: str, url: str, headers: dict[str, str], payload: Any = None) -> Any:
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            raw = answer.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:300].decode("utf-8", "replace").strip()
        raise CommentError(f"{method} {url}: HTTP {exc.code} {detail}".rstrip(), exc.code) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CommentError(f"{method} {url}: cannot connect ({reason})") from None
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        raise CommentError(f"{method} {url}: the answer is not JSON") from None


def upsert(
    list_url: Callable[[int], str],
    create: tuple[str, str],
    update: Callable[[Any], tuple[str, str]],
    headers: dict[str, str],
    body: str,
    tag: str,
    ours: Callable[[dict[str, Any]], bool],
) -> str:
    """Update the first comment that begins with ``tag`` and is ``ours`` (written by this script's
    account), else create one; say which."""
    for page in range(1, MAX_PAGES + 1):
        items = _request("GET", list_url(page), headers)
        if not isinstance(items, list):
            raise CommentError(f"GET {list_url(page)}: expected a list of comments")
        for item in items:
            if isinstance(item, dict) and str(item.get("body", "")).startswith(tag) and ours(item):
                method, url = update(item["id"])
                _request(method, url, headers, {"body": body})
                return f"updated comment {item['id']}"
        if len(items) < PER_PAGE:
            break
    method, url = create
    made = _request(method, url, headers, {"body": body})
    return f"posted comment {made.get('id') if isinstance(made, dict) else '?'}"


def _env(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise CommentError(f"{name} is not set")
    return value


def _login(item: dict[str, Any], field: str, name: str) -> str | None:
    who = item.get(field)
    return who.get(name) if isinstance(who, dict) else None


def _from_fork(pull: dict[str, Any]) -> bool:
    """A pull request whose head is in another repository (a deleted fork's head repo is null)."""
    head, base = pull.get("head"), pull.get("base")
    if not isinstance(head, dict) or not isinstance(base, dict):
        return False  # an event without them says nothing about a fork
    head_repo, base_repo = head.get("repo"), base.get("repo")
    if not isinstance(base_repo, dict):
        return False
    return not isinstance(head_repo, dict) or head_repo.get("full_name") != base_repo.get("full_name")


def github(body: str, tag: str, author: str | None = None) -> str:
    event_path = _env("GITHUB_EVENT_PATH")
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CommentError(f"cannot read the event {event_path} ({type(exc).__name__})") from None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    number = pull.get("number") if isinstance(pull, dict) else None
    if not isinstance(number, int):
        return "not a pull-request event: no comment posted"
    if os.environ.get("GITHUB_EVENT_NAME") == "pull_request" and _from_fork(pull):
        raise NotAllowed("this pull request comes from a fork, whose workflow token is read-only")
    account = author or GITHUB_ACTIONS_BOT
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    repo = _env("GITHUB_REPOSITORY")
    headers = {
        "Authorization": f"Bearer {_env('GITHUB_TOKEN')}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "otel-provenance-ci-comment",
    }
    comments = f"{api}/repos/{repo}/issues/{number}/comments"
    try:
        return upsert(
            lambda page: f"{comments}?per_page={PER_PAGE}&page={page}",
            ("POST", comments),
            lambda comment_id: ("PATCH", f"{api}/repos/{repo}/issues/comments/{comment_id}"),
            headers,
            body,
            tag,
            lambda item: _login(item, "user", "login") == account,
        )
    except CommentError as exc:
        if exc.status == FORBIDDEN:  # a read-only token: the job summary has the report
            raise NotAllowed(f"the token may not comment here ({exc})") from None
        raise


def gitlab(body: str, tag: str, author: str | None = None) -> str:
    iid = os.environ.get("CI_MERGE_REQUEST_IID", "").strip()
    if not iid:
        return "not a merge-request pipeline: no note posted"
    api = _env("CI_API_V4_URL").rstrip("/")
    notes = f"{api}/projects/{_env('CI_PROJECT_ID')}/merge_requests/{iid}/notes"
    headers = {"PRIVATE-TOKEN": _env("GITLAB_TOKEN"), "User-Agent": "otel-provenance-ci-comment"}
    if author is None:
        me = _request("GET", f"{api}/user", headers)
        author = me.get("username") if isinstance(me, dict) else None
        if not isinstance(author, str) or not author:
            raise CommentError(f"GET {api}/user: the answer names no username")
    return upsert(
        lambda page: f"{notes}?per_page={PER_PAGE}&page={page}&sort=asc&order_by=created_at",
        ("POST", notes),
        lambda note_id: ("PUT", f"{notes}/{note_id}"),
        headers,
        body,
        tag,
        lambda item: _login(item, "author", "username") == author,
    )


def summarise(note: str) -> None:
    """A line in the GitHub job summary (beside the report the Action put there) and a warning
    annotation, so a comment that could not be posted is seen without turning the job red."""
    print(f"::warning title=otel-provenance comment::{note}")
    summary = os.environ.get("GITHUB_STEP_SUMMARY", "").strip()
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as out:
                out.write(f"\n> **otel-provenance**: {note}.\n")
        except OSError as exc:
            why = type(exc).__name__
            print(f"ci_comment: cannot write the job summary {summary} ({why})", file=sys.stderr)


def policy(exit_code: int | None, fail_on: str) -> tuple[int, str]:
    """The job's exit code for the gate's ``exit_code`` under ``fail_on``, and the line that says so.
    ``None``: the gate did not run (an earlier step failed) — never a pass."""
    if exit_code is None:
        return 1, "otel-provenance gate did not run (no exit code): failing the job"
    outcome = OUTCOMES.get(exit_code)
    if outcome is None:  # not a code the gate gives: never a pass
        return 1, f"otel-provenance gate exited {exit_code}, which it never does: failing the job"
    if exit_code in POLICIES[fail_on]:
        return 1, f"otel-provenance gate: {outcome} (exit {exit_code}); fail-on: {fail_on} fails the job"
    return 0, f"otel-provenance gate: {outcome} (exit {exit_code}); fail-on: {fail_on} lets the job pass"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="where", required=True)
    for name in ("github", "gitlab"):
        p = sub.add_parser(name, help=f"post or update the {name} comment")
        p.add_argument("--body-file", required=True, type=Path, help="the gate's --markdown report")
        p.add_argument("--marker", default="default", help="which gate's comment (default: default)")
        p.add_argument("--exit-code", type=int, help="the gate's exit code, for the comment's last line")
        p.add_argument("--fail-on", choices=sorted(POLICIES), help="the policy, for the comment's last line")
        p.add_argument("--author", help="the account whose comment is this gate's (see the module doc)")
        p.add_argument("--report-url", help="where the full reports are (the CI run's artifact)")
    p = sub.add_parser("policy", help="the job's exit code for the gate's")
    p.add_argument("--exit-code", required=True, help="the gate's exit code; empty: the gate did not run")
    p.add_argument("--fail-on", choices=sorted(POLICIES), required=True)
    args = parser.parse_args(argv)
    if args.where == "policy":
        text = args.exit_code.strip()
        if text and not text.lstrip("-").isdigit():
            parser.error(f"--exit-code: not a whole number: {text!r}")
        code, line = policy(int(text) if text else None, args.fail_on)
        print(line)
        return code
    try:
        text = args.body_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(
            f"ci_comment: cannot read {args.body_file} ({type(exc).__name__}); did gate check run?",
            file=sys.stderr,
        )
        return 1
    body = compose(text, args.marker, args.exit_code, args.fail_on, args.report_url)
    try:
        said = (github if args.where == "github" else gitlab)(body, marker(args.marker), args.author)
    except NotAllowed as exc:
        summarise(f"no pull-request comment: {exc}; the report is in this job's summary")
        return 0
    except CommentError as exc:
        print(f"ci_comment: {exc}", file=sys.stderr)
        return 1
    print(f"ci_comment: {said}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
