"""Ask a person (#34, the guard): a call that needs approval runs only on the approver's explicit
``True``. Every other answer, an exception, the deadline and no approver at all are denials — the body
never runs, the span says ``blocked`` and ``agent.guard.approval`` names the outcome. Through the
public API and the real SDK: sync and async approvers, from sync and async tools, generators, threads
and asyncio tasks."""

from __future__ import annotations

import asyncio
import contextvars
import random
import threading
import time
from collections.abc import Mapping

import pytest
from opentelemetry import trace

import otel_provenance as op
from instrument_helpers import Traced, settings
from otel_provenance.instrument.base.settings import ENV_APPROVAL_TIMEOUT, get_settings, reset_settings

DEADLINE = 0.3  # seconds: the approval deadline of the tests that wait for it


class Hung:
    """Approvers that never answer by themselves; released at the end of the test."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked = 0

    def sync(self, request: op.ApprovalRequest) -> bool:
        self.asked += 1
        self.release.wait(30)
        return True  # too late: the call has been denied at the deadline

    async def async_(self, request: op.ApprovalRequest) -> bool:
        self.asked += 1
        await asyncio.sleep(30)
        return True


@pytest.fixture
def hung():
    approvers = Hung()
    yield approvers
    approvers.release.set()


def _raise(request):
    raise LookupError("the approval service is down")


async def _async_true(request):
    await asyncio.sleep(0)
    return True


async def _async_false(request):
    await asyncio.sleep(0)
    return False


async def _async_raise(request):
    await asyncio.sleep(0)
    raise LookupError("the approval service is down")


# approver -> (agent.guard.approval, how the error message names the approver's answer)
DENIALS = {
    "false": (lambda r: False, "denied", "the approver answered False"),
    "none": (lambda r: None, "denied", "the approver answered None"),
    "truthy string": (lambda r: "yes", "denied", "the approver answered a str, not True"),
    "one": (lambda r: 1, "denied", "the approver answered a int, not True"),
    "raises": (_raise, "error", "the approver raised LookupError"),
    "async false": (_async_false, "denied", "the approver answered False"),
    "async raises": (_async_raise, "error", "the approver raised LookupError"),
}


def _tools(traced: Traced, ran: list):
    @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
    def refund(order_id: str) -> dict:
        ran.append(order_id)
        return {"refunded": order_id}

    @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
    async def refund_async(order_id: str) -> dict:
        ran.append(order_id)
        return {"refunded": order_id}

    return refund, refund_async


def _call(tool, flavour: str, **arguments):
    return asyncio.run(tool(**arguments)) if flavour == "async" else tool(**arguments)


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("approver", [lambda r: True, _async_true], ids=["sync", "async"])
def test_an_explicit_true_runs_the_call(traced, flavour, approver):
    ran: list[str] = []
    tool = _tools(traced, ran)[flavour == "async"]
    with op.run(inputs={"order_id": "ord-1001"}, approver=approver):
        assert _call(tool, flavour, order_id="ord-1001") == {"refunded": "ord-1001"}
    assert ran == ["ord-1001"]
    span = traced.span(tool.__name__)
    assert span.attributes["agent.tool.status"] == "ok"
    assert span.attributes["agent.guard.approval"] == "approved"
    assert "agent.violations" not in span.attributes  # a person overruled the ask: nothing left over


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("case", sorted(DENIALS))
def test_anything_but_true_is_a_denial_and_the_body_never_runs(traced, flavour, case):
    approver, outcome, answered = DENIALS[case]
    ran: list[str] = []
    tool = _tools(traced, ran)[flavour == "async"]
    with (
        op.run(inputs={"order_id": "ord-1001"}, approver=approver),
        pytest.raises(op.ProvenanceError) as denied,
    ):
        _call(tool, flavour, order_id="ord-1001")
    assert ran == []
    name = tool.__name__
    assert denied.value.violations == (f"needs_approval:{name}", f"approval:{outcome}")
    assert str(denied.value) == (
        f"{name}: blocked: needs a person's approval (needs_approval:{name}), not given: "
        f"{answered} (approval:{outcome})"
    )
    span = traced.span(tool.__name__)
    assert span.attributes["agent.tool.status"] == "blocked"
    assert span.attributes["agent.guard.approval"] == outcome
    assert tuple(span.attributes["agent.violations"]) == denied.value.violations
    assert span.attributes["error.type"] == "otel_provenance.errors.ProvenanceError"


@pytest.mark.parametrize("flavour", ["sync", "async"])
@pytest.mark.parametrize("kind", ["sync", "async_"])
def test_no_answer_within_the_deadline_is_a_denial(traced, hung, flavour, kind):
    ran: list[str] = []
    tool = _tools(traced, ran)[flavour == "async"]
    started = time.monotonic()
    with (
        op.run(inputs={"order_id": "ord-1001"}, approver=getattr(hung, kind), approval_timeout=DEADLINE),
        pytest.raises(op.ProvenanceError, match=r"no answer within 0\.3 s \(approval:timeout\)"),
    ):
        _call(tool, flavour, order_id="ord-1001")
    assert time.monotonic() - started < DEADLINE + 5  # the deadline, not the approver, ended the wait
    assert hung.asked == 1 and ran == []
    span = traced.span(tool.__name__)
    assert span.attributes["agent.guard.approval"] == "timeout"
    assert span.attributes["agent.tool.status"] == "blocked"
    hung.release.set()
    time.sleep(0.05)  # a late answer changes nothing
    assert ran == [] and len(traced.spans) == 1


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_without_an_approver_every_ask_is_denied_and_the_message_says_so(traced, flavour):
    ran: list[str] = []
    tool = _tools(traced, ran)[flavour == "async"]
    with settings(), op.run(inputs={"order_id": "ord-1001"}), pytest.raises(op.ProvenanceError) as denied:
        _call(tool, flavour, order_id="ord-1001")
    assert ran == []
    assert "no approver is configured" in str(denied.value)
    assert "op.configure(approver=...) or op.run(approver=...)" in str(denied.value)
    assert denied.value.violations == (f"needs_approval:{tool.__name__}", "approval:denied")
    assert traced.span(tool.__name__).attributes["agent.guard.approval"] == "denied"


@pytest.mark.parametrize("ignores_cancel", [False, True], ids=["cancelled", "raises-after-cancel"])
def test_an_async_approver_cut_off_at_the_deadline_leaves_asyncio_nothing_to_complain_about(
    traced, caplog, ignores_cancel
):
    """The approver's task is cancelled at the deadline and its outcome marked as seen: asyncio logs no
    "exception in callback" and no "exception was never retrieved"."""
    import gc

    async def approver(request):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            if ignores_cancel:
                raise LookupError("gave up") from None
            raise
        return True

    ran: list[str] = []
    _, refund_async = _tools(traced, ran)
    caplog.set_level("DEBUG", logger="asyncio")

    async def agent():
        with pytest.raises(op.ProvenanceError, match=r"approval:timeout"):
            await refund_async(order_id="ord-1001")
        for _ in range(5):  # let the cancelled task finish and its callback run
            await asyncio.sleep(0.01)

    with op.run(inputs={"order_id": "ord-1001"}, approver=approver, approval_timeout=DEADLINE):
        asyncio.run(agent())
    gc.collect()
    assert ran == []
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio" and r.levelname == "ERROR"] == []


def test_a_call_outside_any_run_asks_the_configured_approver(traced):
    asked: list[op.ApprovalRequest] = []

    @op.tool(side_effect="read", needs_approval=True, tracer_provider=traced.provider)
    def lookup(order_id: str) -> str:
        return "found"

    with settings(approver=lambda r: asked.append(r) or True):
        assert lookup("ord-1001") == "found"
    (request,) = asked
    assert request.run_id is None and request.reasons == ("needs_approval:lookup",)


def test_the_request_names_the_call_and_its_reasons_and_prints_no_value(traced):
    asked: list[op.ApprovalRequest] = []
    secret = "ord-7f3a9c"

    @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
    def refund(order_id: str, amount: int = 0) -> None:
        return None

    current: list[object] = []

    def approver(request: op.ApprovalRequest) -> bool:
        asked.append(request)
        current.append(trace.get_current_span().get_span_context().span_id)  # in the caller's context
        return True

    with op.run(inputs={"order_id": secret}, approver=approver, tracer_provider=traced.provider) as run:
        refund(order_id=secret)
    (request,) = asked
    span = traced.span("refund")
    assert current == [span.parent.span_id]  # the run's span, current where the call was made
    assert (request.tool, request.reasons, request.side_effect) == (
        "refund",
        ("needs_approval:refund",),
        "write",
    )
    assert request.run_id == run.run_id == span.attributes["agent.run.id"]
    assert request.call_id == span.attributes["agent.tool.call.id"]
    assert dict(request.arguments) == {"order_id": secret}  # passed arguments only, in-process
    with pytest.raises(TypeError):
        request.arguments["order_id"] = "other"  # type: ignore[index]
    with pytest.raises(AttributeError):
        request.tool = "other"  # type: ignore[misc]
    assert secret not in repr(request) and secret not in repr(request.arguments)
    assert repr(request.arguments) == "<arguments order_id>"  # the names, so a log still says what was asked


def test_a_requests_arguments_show_every_name_and_no_value_in_their_repr():
    request = op.ApprovalRequest("refund", {"order_id": "ord-31337", "amount": 27182}, ("x",), None, "c-1")
    assert repr(request.arguments) == "<arguments order_id, amount>"


def test_the_approver_cannot_change_what_the_body_gets(traced):
    seen: list[dict] = []

    @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
    def save(record: dict) -> None:
        seen.append(record)

    def approver(request):
        assert isinstance(request.arguments, Mapping)
        return True

    with op.run(inputs={"record": {"id": "r-100"}}, approver=approver):
        save(record={"id": "r-100"})
    assert seen == [{"id": "r-100"}]


# -- needs_approval as a function of the arguments -----------------------------------------------------
def test_needs_approval_function_decides_per_call_from_the_arguments(traced):
    asked: list[str] = []
    ran: list[int] = []

    @op.tool(
        side_effect="read", needs_approval=lambda args: args["amount"] > 100, tracer_provider=traced.provider
    )
    def pay(amount: int) -> None:
        ran.append(amount)

    def approver(request):
        asked.append(request.call_id)
        return False

    with op.run(approver=approver):
        pay(amount=50)
        with pytest.raises(op.ProvenanceError):
            pay(amount=500)
    assert ran == [50] and len(asked) == 1
    small, large = traced.spans[0], traced.spans[1]
    assert "agent.guard.approval" not in small.attributes  # absent when no approval was asked
    assert large.attributes["agent.guard.approval"] == "denied"
    assert large.attributes["agent.tool.call.id"] == asked[0]


@pytest.mark.parametrize("answer", [None, 0, "no", []])
def test_a_needs_approval_answer_other_than_false_asks(traced, answer):
    @op.tool(side_effect="read", needs_approval=lambda args: answer, tracer_provider=traced.provider)
    def lookup(key: str) -> None:
        return None

    with op.run(approver=lambda r: True):
        lookup(key="k-1")
    assert traced.span("lookup").attributes["agent.guard.approval"] == "approved"


def test_a_needs_approval_function_that_raises_blocks_the_call_without_asking(traced):
    asked: list[object] = []
    ran: list[str] = []

    def needs(args):
        raise KeyError(args["missing"])

    @op.tool(side_effect="read", needs_approval=needs, tracer_provider=traced.provider)
    def lookup(key: str) -> None:
        ran.append(key)

    with op.run(approver=lambda r: asked.append(r) or True), pytest.raises(op.ProvenanceError) as blocked:
        lookup(key="k-1")
    assert ran == [] and asked == []
    assert blocked.value.violations == ("needs_approval:lookup=KeyError",)  # the type only
    span = traced.span("lookup")
    assert span.attributes["agent.tool.status"] == "blocked"
    assert "agent.guard.approval" not in span.attributes


def test_a_call_blocked_anyway_never_asks(traced):
    asked: list[object] = []

    @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
    def refund(order_id: str) -> None:
        return None

    with op.run(approver=lambda r: asked.append(r) or True), pytest.raises(op.ProvenanceError) as blocked:
        refund("ord-guessed")  # assumed: over the write budget
    assert asked == []
    assert blocked.value.violations == ("max_assumed:order_id=assumed", "needs_approval:refund")
    assert "agent.guard.approval" not in traced.span("refund").attributes


def test_advisory_mode_asks_nobody_and_tags_the_call(traced, caplog):
    asked: list[object] = []

    @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
    def refund(order_id: str) -> None:
        return None

    with settings(enforce=False), op.run(approver=lambda r: asked.append(r) or True):
        refund("ord-guessed")
    assert asked == []
    span = traced.span("refund")
    assert span.attributes["agent.tool.status"] == "ok"
    assert "needs_approval:refund" in span.attributes["agent.violations"]
    assert "agent.guard.approval" not in span.attributes


def test_an_ask_is_not_logged_as_an_advisory_violation(traced, caplog):
    @op.tool(side_effect="read", needs_approval=True, tracer_provider=traced.provider)
    def lookup(key: str) -> None:
        return None

    with op.run(approver=lambda r: True):
        lookup(key="k-1")
    assert "advisory" not in caplog.text


def test_a_denial_raises_the_tools_blocked_error(traced):
    class ToolFailed(Exception):
        pass

    @op.tool(
        side_effect="write", needs_approval=True, blocked_error=ToolFailed, tracer_provider=traced.provider
    )
    def refund(order_id: str) -> None:
        return None

    with (
        op.run(inputs={"order_id": "ord-1001"}, approver=lambda r: False),
        pytest.raises(ToolFailed) as denied,
    ):
        refund("ord-1001")
    assert isinstance(denied.value.__cause__, op.ProvenanceError)
    assert "approval:denied" in str(denied.value)


# -- generators --------------------------------------------------------------------------------------
@pytest.mark.parametrize("answer", [True, False])
def test_a_generator_is_asked_before_it_exists(traced, answer):
    ran: list[str] = []

    @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
    def stream(prefix: str):
        ran.append(prefix)
        yield f"{prefix}-1"
        yield f"{prefix}-2"

    asked: list[object] = []
    with op.run(inputs={"prefix": "p-100"}, approver=lambda r: asked.append(r) or answer):
        if answer:
            items = stream("p-100")
            assert asked and ran == []  # asked at the call, before the first step
            assert list(items) == ["p-100-1", "p-100-2"]
        else:
            with pytest.raises(op.ProvenanceError):
                stream("p-100")  # raised at the call: no generator to iterate
    assert ran == (["p-100"] if answer else [])
    span = traced.span("stream")
    assert span.attributes["agent.guard.approval"] == ("approved" if answer else "denied")
    assert span.attributes["agent.tool.status"] == ("ok" if answer else "blocked")


@pytest.mark.parametrize("approver", [lambda r: False, _async_false, _raise], ids=["sync", "async", "raises"])
def test_an_async_generator_is_asked_at_its_first_step_and_a_denial_never_runs_it(traced, approver):
    ran: list[str] = []

    @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
    async def stream(prefix: str):
        ran.append(prefix)
        yield f"{prefix}-1"

    async def consume():
        return [item async for item in stream("p-100")]

    with op.run(inputs={"prefix": "p-100"}, approver=approver), pytest.raises(op.ProvenanceError):
        asyncio.run(consume())
    assert ran == []
    assert traced.span("stream").attributes["agent.tool.status"] == "blocked"


def test_an_approved_async_generator_runs(traced):
    @op.tool(side_effect="write", needs_approval=True, tracer_provider=traced.provider)
    async def stream(prefix: str):
        yield f"{prefix}-1"
        yield f"{prefix}-2"

    async def consume():
        return [item async for item in stream("p-100")]

    with op.run(inputs={"prefix": "p-100"}, approver=_async_true):
        assert asyncio.run(consume()) == ["p-100-1", "p-100-2"]
    span = traced.span("stream")
    assert (span.attributes["agent.guard.approval"], span.attributes["agent.tool.status"]) == (
        "approved",
        "ok",
    )


# -- concurrent calls: each gets its own answer --------------------------------------------------------
def _by_call_id(approve_even):
    """An approver that approves even-numbered calls after a random pause, recording each answer by
    call id; and the same as a coroutine function."""
    answers: dict[str, bool] = {}
    lock = threading.Lock()

    def sync(request):
        time.sleep(random.uniform(0, 0.05))
        answer = request.arguments["n"] % 2 == 0
        with lock:
            answers[request.call_id] = answer
        return answer

    async def async_(request):
        await asyncio.sleep(random.uniform(0, 0.05))
        answer = request.arguments["n"] % 2 == 0
        answers[request.call_id] = answer
        return answer

    return answers, (sync if approve_even == "sync" else async_)


def _check_each_call_got_its_own_answer(traced, answers, ran, count):
    assert sorted(ran) == [n for n in range(count) if n % 2 == 0]
    spans = [s for s in traced.spans if s.name == "execute_tool step"]
    assert len(spans) == len(answers) == count
    for span in spans:
        approved = answers[span.attributes["agent.tool.call.id"]]
        assert span.attributes["agent.guard.approval"] == ("approved" if approved else "denied")
        assert span.attributes["agent.tool.status"] == ("ok" if approved else "blocked")


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_calls_from_threads_each_get_their_own_answer(traced, kind):
    count = 12
    answers, approver = _by_call_id(kind)
    ran: list[int] = []
    denied: list[int] = []

    @op.tool(side_effect="read", needs_approval=True, tracer_provider=traced.provider)
    def step(n: int) -> None:
        ran.append(n)

    def worker(n: int) -> None:
        try:
            step(n=n)
        except op.ProvenanceError:
            denied.append(n)

    with op.run(approver=approver):
        threads = [
            threading.Thread(target=contextvars.copy_context().run, args=(worker, n)) for n in range(count)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert sorted(denied) == [n for n in range(count) if n % 2]
    _check_each_call_got_its_own_answer(traced, answers, ran, count)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_calls_from_asyncio_tasks_each_get_their_own_answer(traced, kind):
    count = 12
    answers, approver = _by_call_id(kind)
    ran: list[int] = []

    @op.tool(side_effect="read", needs_approval=True, tracer_provider=traced.provider)
    async def step(n: int) -> None:
        await asyncio.sleep(0)
        ran.append(n)

    async def agent():
        return await asyncio.gather(*(step(n=n) for n in range(count)), return_exceptions=True)

    with op.run(approver=approver):
        results = asyncio.run(agent())
    assert [isinstance(r, op.ProvenanceError) for r in results] == [n % 2 == 1 for n in range(count)]
    _check_each_call_got_its_own_answer(traced, answers, ran, count)


def test_a_slow_approver_does_not_hold_the_event_loop(traced):
    """While one async call waits for a (sync, slow) approver, other tasks of the loop go on."""
    ticks: list[int] = []

    @op.tool(side_effect="read", needs_approval=True, tracer_provider=traced.provider)
    async def lookup(key: str) -> str:
        return "found"

    def approver(request):
        time.sleep(0.3)
        return True

    async def ticker():
        for n in range(5):
            ticks.append(n)
            await asyncio.sleep(0.02)

    async def agent():
        return await asyncio.gather(lookup(key="k-1"), ticker())

    with op.run(approver=approver):
        assert asyncio.run(agent())[0] == "found"
    assert ticks == [0, 1, 2, 3, 4]


# -- where the approver comes from -------------------------------------------------------------------
def test_the_runs_approver_wins_over_the_configured_one_and_a_nested_run_inherits_it(traced):
    @op.tool(side_effect="read", needs_approval=True, tracer_provider=traced.provider)
    def lookup(key: str) -> None:
        return None

    with settings(approver=lambda r: False, approval_timeout=5):
        with pytest.raises(op.ProvenanceError):
            lookup(key="k-1")  # the configured approver
        with op.run(approver=lambda r: True):
            lookup(key="k-1")
            with op.run():
                lookup(key="k-1")  # the enclosing run's
            with op.run(approver=lambda r: False), pytest.raises(op.ProvenanceError):
                lookup(key="k-1")
    outcomes = [
        s.attributes.get("agent.guard.approval") for s in traced.spans if s.name == "execute_tool lookup"
    ]
    assert outcomes == ["denied", "approved", "approved", "denied"]


def test_op_configure_sets_the_approver_and_its_deadline(traced):
    def approver(request):
        return True

    try:
        op.configure(exporter="none", metrics=False, set_global=False, approver=approver, approval_timeout=7)
        assert get_settings().approver is approver
        assert get_settings().approval_timeout == 7.0
        assert "approver=set" in repr(get_settings())
    finally:
        reset_settings()
    assert get_settings().approver is None


def test_the_deadline_from_the_environment(monkeypatch):
    monkeypatch.setenv(ENV_APPROVAL_TIMEOUT, " 2.5 ")
    reset_settings()
    try:
        assert get_settings().approval_timeout == 2.5
        monkeypatch.delenv(ENV_APPROVAL_TIMEOUT)
        reset_settings()
        assert get_settings().approval_timeout == 300.0
        for bad in ("soon", "0", "-1", "nan", "inf"):
            monkeypatch.setenv(ENV_APPROVAL_TIMEOUT, bad)
            reset_settings()
            with pytest.raises(op.ConfigurationError, match=f"^{ENV_APPROVAL_TIMEOUT}: "):
                get_settings()
    finally:
        monkeypatch.delenv(ENV_APPROVAL_TIMEOUT, raising=False)
        reset_settings()


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: op.tool(needs_approval="yes")(lambda x: x), r"op\.tool\(<lambda>\): needs_approval must be"),
        (lambda: op.tool(name="t", needs_approval=1), r"op\.tool\(t\): needs_approval must be"),
        (
            lambda: op.tool(name="t", needs_approval=_async_true),
            r"op\.tool\(t\): needs_approval must be a plain",
        ),
        (lambda: op.ToolPolicy(needs_approval="always"), r"ToolPolicy: needs_approval must be"),
        (lambda: op.run(approver="alice"), r"op\.run\(approver=\.\.\.\): expected a function"),
        (lambda: op.run(approval_timeout=0), r"op\.run\(approval_timeout=\.\.\.\): must be a finite"),
        (lambda: op.run(approval_timeout=True), r"op\.run\(approval_timeout=\.\.\.\): expected a number"),
        (lambda: op.run(approval_timeout=float("inf")), r"must be a finite number of seconds above 0"),
        (lambda: settings(approver=42).__enter__(), r"approver: expected a function"),
    ],
)
def test_wrong_options_are_refused_naming_them(make, message):
    try:
        with pytest.raises(op.ConfigurationError, match=message):
            make()
    finally:
        reset_settings()


def test_an_async_approver_of_an_async_tool_runs_on_the_callers_loop(traced):
    loops: list[object] = []

    async def approver(request):
        loops.append(asyncio.get_running_loop())
        return True

    loop, ran = _refund_async_approved_by(traced, approver)
    assert loops == [loop] and ran == ["ord-1001"]


def _refund_async_approved_by(traced, approver) -> tuple[object, list[str]]:
    """An async refund in an ``op.run`` with ``approver``: the agent's loop, and the refunds made."""
    ran: list[str] = []
    _, refund_async = _tools(traced, ran)

    async def agent():
        await refund_async(order_id="ord-1001")
        return asyncio.get_running_loop()

    with op.run(inputs={"order_id": "ord-1001"}, approver=approver):
        loop = asyncio.run(agent())
    return loop, ran


class AsyncApprovalService:
    """An approver object whose ``__call__`` is a coroutine (a client of an approval service)."""

    def __init__(self) -> None:
        self.loops: list[object] = []

    async def __call__(self, request):
        self.loops.append(asyncio.get_running_loop())
        return True


def test_an_approver_object_with_an_async_call_runs_on_the_callers_loop_too(traced):
    service = AsyncApprovalService()
    loop, ran = _refund_async_approved_by(traced, service)
    assert service.loops == [loop] and ran == ["ord-1001"]


def test_needs_approval_as_an_object_with_an_async_call_is_refused_at_decoration():
    with pytest.raises(op.ConfigurationError, match="needs_approval must be a plain function"):

        @op.tool(side_effect="write", needs_approval=AsyncApprovalService())
        def refund(order_id: str) -> None:
            return None


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_an_async_approver_that_cannot_be_called_is_an_error_named_by_type(traced, flavour):
    async def approver():  # takes no request: calling it raises TypeError
        return True

    ran: list[str] = []
    tool = _tools(traced, ran)[flavour == "async"]
    with (
        op.run(inputs={"order_id": "ord-1001"}, approver=approver),
        pytest.raises(op.ProvenanceError, match=r"the approver raised TypeError \(approval:error\)"),
    ):
        _call(tool, flavour, order_id="ord-1001")
    assert ran == []


def test_an_async_approver_asked_from_a_sync_tool_is_cancelled_at_the_deadline(traced):
    """The worker thread's loop cancels the approver at the deadline: it does not linger for as long as
    the approver would wait."""
    cancelled = threading.Event()

    async def approver(request):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return True

    ran: list[str] = []
    refund, _ = _tools(traced, ran)
    with (
        op.run(inputs={"order_id": "ord-1001"}, approver=approver, approval_timeout=DEADLINE),
        pytest.raises(op.ProvenanceError, match=r"approval:timeout"),
    ):
        refund("ord-1001")
    assert cancelled.wait(15)  # far sooner than the approver's own 30 s
    assert ran == []


def test_a_sync_approvers_answer_after_the_async_tools_loop_closed_is_dropped_quietly(traced, monkeypatch):
    """An async tool run by ``asyncio.run``: its sync approver answers after the deadline, when the
    loop is gone. The late answer is ignored — no "Exception in thread" on the agent's stderr."""
    answered, thread_errors = threading.Event(), []
    monkeypatch.setattr(threading, "excepthook", thread_errors.append)

    def slow(request):
        time.sleep(DEADLINE * 3)
        answered.set()
        return True

    ran: list[str] = []
    _, refund_async = _tools(traced, ran)
    with (
        op.run(inputs={"order_id": "ord-1001"}, approver=slow, approval_timeout=DEADLINE),
        pytest.raises(op.ProvenanceError, match=r"approval:timeout"),
    ):
        asyncio.run(refund_async("ord-1001"))  # returns at the deadline and closes its loop
    assert answered.wait(15)
    for worker in [t for t in threading.enumerate() if t.name == "otel-provenance-approver"]:
        worker.join(15)
    assert thread_errors == [] and ran == []


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_a_sync_approver_that_returns_an_awaitable_is_awaited_until_the_deadline(traced, flavour):
    """``approver=lambda request: client.ask(request)`` where ``ask`` is a coroutine: the answer it
    gives a moment later is awaited (in the worker), from a sync tool and from an async one."""

    async def ask(request):
        await asyncio.sleep(0.01)
        return True

    ran: list[str] = []
    tools = dict(zip(("sync", "async"), _tools(traced, ran), strict=True))
    with op.run(inputs={"order_id": "ord-1001"}, approver=lambda request: ask(request), approval_timeout=5):
        _call(tools[flavour], flavour, order_id="ord-1001")
    assert ran == ["ord-1001"]


def test_the_approver_runs_in_a_named_daemon_thread(traced):
    """A daemon thread, so an approver that never returns cannot hold the interpreter's exit; named, so
    a thread dump says what it is."""
    seen: list[tuple[str, bool]] = []

    def approver(request):
        seen.append((threading.current_thread().name, threading.current_thread().daemon))
        return True

    ran: list[str] = []
    refund, _ = _tools(traced, ran)
    with op.run(inputs={"order_id": "ord-1001"}, approver=approver):
        refund("ord-1001")
    assert seen == [("otel-provenance-approver", True)] and ran == ["ord-1001"]
