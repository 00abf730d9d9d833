"""The package ``vf-eval sttgym-arena`` imports by name: verifiers 0.4 finds a taskset as an installed
package named after its id that exports the ``Taskset`` (and its default ``Harness``) in ``__all__``."""

from sttgym.adapters.verifiers import ArenaChatHarness, ArenaTaskset, load_environment

__all__ = ["ArenaChatHarness", "ArenaTaskset", "load_environment"]
