"""Benchmarks with targets, measured as ratios against a baseline in the same run.

Run ``python -m benchmarks`` (``--quick`` for a smoke run on tiny sizes, ``--json FILE`` to keep the
table for comparison between commits). See ``benchmarks/README.md``.
"""
