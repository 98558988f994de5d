"""``model.make_span`` gives a ``Span`` like any other (#46): readers build spans by plain slot stores
on a same-layout class whose class is then set to ``Span``."""

from __future__ import annotations

import pickle
from dataclasses import FrozenInstanceError, replace

import pytest

from contract_runs import RunBuilder
from otel_provenance.offline.model import Span, make_span


def test_a_made_span_is_a_span_through_and_through() -> None:
    """``model.make_span`` fills ``_SpanSlots`` and then sets its class to ``Span`` (#46): the object
    is a ``Span`` for ``type``, ``replace``, pickling and a run's echo marks, and stays frozen."""
    run = RunBuilder("run-made").run()
    values = tuple(getattr(run.spans[0], name) for name in Span.__match_args__[:-1])
    made = make_span(*values)
    assert type(made) is Span and made == run.spans[0] and hash(made) == hash(run.spans[0])
    assert pickle.loads(pickle.dumps(made)) == made
    echo = replace(made, echo=True)
    assert type(echo) is Span and echo.echo and not made.echo
    with pytest.raises(FrozenInstanceError):
        made.echo = True  # type: ignore[misc]
