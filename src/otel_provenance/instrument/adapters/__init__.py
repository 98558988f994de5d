"""Agent-framework adapters: what a framework needs so a blocked ``@op.tool`` call reaches its model.

Each module imports its framework only when the adapter is made, so this package never imports a
framework by itself. Which framework needs one, and the one line that installs it, is
docs/frameworks.md.
"""
