"""Adapters that hand sttgym environments to other frameworks' training and evaluation loops:
TRL's ``environment_factory`` (``trl``) and a verifiers taskset for ``vf-eval sttgym-arena`` (``verifiers``)."""
