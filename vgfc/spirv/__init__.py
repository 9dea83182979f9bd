"""SPIR-V: the core grammar tables (and, later, the graph module builder)."""
