"""Evaluation: benchmark suites, the runner, metrics, reports and failure diagnostics."""
