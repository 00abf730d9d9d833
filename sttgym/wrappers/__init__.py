"""Wrappers that add ScrambleTool dynamics (obfuscation, drift, failures, windows) to any sttgym env."""
