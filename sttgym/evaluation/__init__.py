"""Evaluation: the runner, metrics, reports and failure diagnostics."""
