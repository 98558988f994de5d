# The project as a container: the refund-agent demo (docker-compose.yml's `demo` service) and the CLI.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY constraints ./constraints
COPY src ./src
RUN pip install -c constraints/newest.txt ".[cli,otlp]"
COPY examples ./examples
RUN useradd --create-home --uid 10001 agent && mkdir -p /app/out && chown agent /app/out  # the demo writes out/
USER agent
CMD ["python", "examples/refund_agent/demo.py"]
