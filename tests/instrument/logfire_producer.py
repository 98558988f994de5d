"""Run in a subprocess by test_strip_logfire.py: Logfire's real instrumentation (``logfire.configure``
sets process-wide providers), sending nothing to Logfire, its spans through ProvenanceSpanProcessor
into a JSON Lines file (or, with ``--raw``, straight into it: the control run).

Argv: ``<spans.jsonl> <canaries.json> [--raw | <strip mode>]``; the canaries file maps a name to its
value. Without a mode the processor's default options are used."""

from __future__ import annotations

import json
import logging
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import logfire
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_provenance as op
from otel_provenance.instrument.spans.export import JsonLinesSpanExporter


def _openai_stub(answer: str) -> HTTPServer:
    """A loopback server answering OpenAI's chat-completions endpoint with ``answer``."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            body = json.dumps(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 1,
                    "model": "gpt-stub",
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": answer},
                        }
                    ],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            return None

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    path, canaries_path = sys.argv[1], sys.argv[2]
    mode = sys.argv[3] if len(sys.argv) > 3 else None
    with open(canaries_path) as file:
        c = json.load(file)
    exporter = SimpleSpanProcessor(JsonLinesSpanExporter(path))
    if mode == "--raw":
        processor = exporter
    else:
        options = op.StripOptions(mode=mode) if mode else None
        processor = op.ProvenanceSpanProcessor(exporter, options=options)
    logfire.configure(
        send_to_logfire=False,
        console=False,
        metrics=False,
        inspect_arguments=False,
        additional_span_processors=[processor],
    )
    # 1. the standard library's logging through Logfire's handler: logfire.msg, logfire.logging_args
    logger = logging.getLogger("refunds")
    logger.addHandler(logfire.LogfireLoggingHandler())
    logger.setLevel(logging.INFO)
    logger.info("refund requested for %s", c["logging_arg"])
    # 2. a span whose error quotes a value: the exception event's message
    try:
        with logfire.span("refund"):
            raise ValueError(f"no order {c['exception']}")
    except ValueError:
        pass
    # 3. OpenAI through logfire.instrument_openai, against a loopback stub: request_data, response_data
    import openai

    server = _openai_stub(c["completion"])
    client = openai.OpenAI(api_key="sk-test", base_url=f"http://127.0.0.1:{server.server_port}/v1")
    logfire.instrument_openai(client)
    reply = client.chat.completions.create(
        model="gpt-stub",
        messages=[{"role": "system", "content": c["system"]}, {"role": "user", "content": c["prompt"]}],
    )
    assert reply.choices[0].message.content == c["completion"]
    server.shutdown()
    # 4. Pydantic AI through logfire.instrument_pydantic_ai, with a FunctionModel
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    logfire.instrument_pydantic_ai()
    agent = Agent(
        FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart(c["agent_output"])])),
        instructions=c["instructions"],
    )
    assert agent.run_sync(c["agent_prompt"]).output == c["agent_output"]
    logfire.force_flush()
    logfire.shutdown()


if __name__ == "__main__":
    main()
