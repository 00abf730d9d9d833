"""Adapters that hand sttgym environments to other frameworks' training and evaluation loops."""
