"""The ``sttgym`` command line. Each command group lives in its own module of this package."""

from sttgym.cli.app import app
from sttgym.cli import arena  # noqa: F401,E402  (registers `list` and `validate`)

__all__ = ["app"]
from sttgym.cli import eval  # noqa: F401,E402  (registers `eval` and `report`)
from sttgym.cli import train  # noqa: F401,E402  (registers `train data|sft|rl`)
from sttgym.cli import serve  # noqa: F401,E402  (registers `serve`)
from sttgym.cli import synth  # noqa: F401,E402  (registers `synth filter|environment|validate|inject|assess|all|import`)
from sttgym.cli import view  # noqa: F401,E402  (registers `view`)
from sttgym.cli import play  # noqa: F401,E402  (registers `play start|step|show|review`)
