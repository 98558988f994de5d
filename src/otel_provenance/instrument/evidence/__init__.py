"""The evidence, pure: what a run observed and where each argument of a call came from.

Text forms and projections (how values are read and compared), the ledger and its text index (what
tools of a run returned), source trust (who wrote a value), derived values and delegation, and the
classification of a call's arguments. Nothing here opens a span or decides a call.
"""
